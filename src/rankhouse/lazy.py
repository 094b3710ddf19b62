"""What rankhouse does later or beside, so that a command waits for less: heavy third-party
libraries imported where they are first used rather than where named, and work run on a
thread of its own whose result is collected when it is needed.

``import pandas`` alone takes a third of a second; DuckDB's Python layer, numpy, pyarrow,
scipy, statsmodels and SQLAlchemy tens to hundreds of milliseconds each. A command that needs
none of them (``--help``, ``runs list``, trec-eval) must not pay for them, yet a module should
name what it uses at its top. So modules take these names from here::

    from .lazy import numpy as np, pandas as pd

and each library is imported at the first attribute read (``pd.DataFrame``), once. Nothing
is read at import time: a class that subclasses a DataFrame is built when first asked for
(:mod:`rankhouse.present.frames`). DuckDB's engine has its own module, :mod:`rankhouse.duck`.

rankhouse overlaps work that lets go of the GIL (DuckDB statements, hashlib, numpy sorts) with
its main thread: a file's or a DataFrame's hash while DuckDB reads it, the measure groups with
helper tables beside the joint statement, trec-eval's run beside its qrels, an evaluation's
qrels file beside its run files, the database opened ahead while a command imports. Each
starts a :class:`Background` and asks for its :meth:`~Background.result` when it needs it;
what the work raised is raised there, in the caller's thread.
A package root names its public API the same way (:func:`package_names`): each name is
imported from its submodule at the first read, so that importing one module of a package
does not load the whole package (``history`` reads stored values and loads no engine).
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class LazyModule:
    """A module imported at the first read of one of its attributes."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


numpy = LazyModule("numpy")
pandas = LazyModule("pandas")
pyarrow = LazyModule("pyarrow")
pyarrow_compute = LazyModule("pyarrow.compute")
pyarrow_parquet = LazyModule("pyarrow.parquet")
# Standard modules that cost a command 1-8 ms where it does not use them: hashlib loads
# OpenSSL, statistics pulls in fractions and decimal, shutil and tempfile the compression
# modules and random.
hashlib = LazyModule("hashlib")
shutil = LazyModule("shutil")
statistics = LazyModule("statistics")
tempfile = LazyModule("tempfile")
scipy_stats = LazyModule("scipy.stats")
scipy_special = LazyModule("scipy.special")
multitest = LazyModule("statsmodels.stats.multitest")
sqlalchemy = LazyModule("sqlalchemy")
psycopg = LazyModule("psycopg")
adbc_postgresql = LazyModule("adbc_driver_postgresql.dbapi")
# pyiceberg (rankhouse[iceberg]): a PostgreSQL warehouse's run rows in an Iceberg table
iceberg_catalog = LazyModule("pyiceberg.catalog.sql")
iceberg_expressions = LazyModule("pyiceberg.expressions")
iceberg_exceptions = LazyModule("pyiceberg.exceptions")
iceberg_schema = LazyModule("pyiceberg.schema")
iceberg_types = LazyModule("pyiceberg.types")
# ir_datasets (optional): the qrels of an ``irds:`` id, read from its local cache
ir_datasets = LazyModule("ir_datasets")


# --- work on a thread of its own --------------------------------------------------------------


class Background(Generic[T]):
    """``work()`` started now on a thread named ``name``.

    ``daemon``: the interpreter may stop at exit without waiting for the thread (work with
    nothing to clean up, such as reading a file). Otherwise it waits, which work inside DuckDB
    needs.
    """

    def __init__(self, work: Callable[[], T], name: str, *, daemon: bool = False) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), name=name, daemon=daemon)
        self._thread.start()

    def _run(self, work: Callable[[], T]) -> None:
        try:
            self._value = work()
        except BaseException as exc:  # raised by result(), in the caller's thread
            self._error = exc

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the work (at most ``timeout`` seconds); whether it has ended."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def result(self) -> T:
        """Wait for the work; its value, or raise what it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def package_names(package: str, modules: dict[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """The ``__getattr__`` of the package root ``package``: ``modules`` maps each module,
    relative to the package (``".flow"``, ``"..results"``), to the public names it defines,
    each imported at its first read (then kept)."""
    root = sys.modules[package]
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        # the import statement's own machinery (not importlib's), so that ``-X importtime``
        # counts the module as it counts any other
        level = len(module) - len(module.lstrip("."))
        found = __import__(module[level:], {"__package__": package}, None, [name], level)
        value = getattr(found, name)
        setattr(root, name, value)
        return value

    return __getattr__
