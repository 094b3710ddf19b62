"""DuckDB's engine, imported without the Python layers rankhouse's SQL does not use.

Since duckdb 1.4 the engine is the extension module ``_duckdb``: connections, SQL, pandas
scans and the exception classes. The ``duckdb`` package re-exports all of it and adds, in
Python, a relation and expression API and the code that lets DuckDB scan Arrow objects;
importing that layer takes about 0.07 s, a quarter of a short command's run. So modules
that only run SQL take the engine as ``from .duck import duckdb`` (the same classes and
functions, under the name they always had), and a module that scans Arrow data or a
user's DataFrame registers it with :func:`register`, and one that uses the relation API
calls :func:`load_package` first.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

try:
    import _duckdb as duckdb
except ImportError:  # duckdb before 1.4: the package holds the engine itself
    import duckdb

__all__ = ["duckdb", "load_package", "open_database", "register", "set_connector"]


def load_package() -> None:
    """Import the ``duckdb`` package, which every connection then has: Arrow objects
    (pyarrow tables and readers, DataFrames with Arrow-backed columns) become scannable,
    and connections gain ``.sql()`` and the rest of the relation API. Cheap once done."""
    import duckdb as package  # noqa: F401


def register(connection, name: str, data) -> None:
    """Register ``data`` (a DataFrame, a pyarrow table or reader) as the view ``name`` on the
    DuckDB ``connection``, with the package loaded so that Arrow data can be scanned."""
    load_package()
    connection.register(name, data)


def _make(key: Hashable, make: Callable[[], Any]) -> Any:
    return make()


_connector: Callable[[Hashable, Callable[[], Any]], Any] = _make


def open_database(key: Hashable, make: Callable[[], Any]) -> Any:
    """A new DuckDB connection: ``make()``, or what the installed connector hands over for
    ``key`` (what identifies the database and its settings). Every database rankhouse
    opens (warehouse files, the engine's in-memory ones) is opened through here."""
    return _connector(key, make)


def set_connector(connector: Callable[[Hashable, Callable[[], Any]], Any] | None) -> None:
    """Install ``connector(key, make)`` for :func:`open_database` (None: back to ``make()``).

    The command line installs one that hands over a database it began opening in a thread
    while the command imported (:mod:`rankhouse.cli.process`); the library itself never does.
    """
    global _connector
    _connector = connector or _make
