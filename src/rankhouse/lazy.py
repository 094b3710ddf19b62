"""Heavy third-party libraries, imported where they are first used rather than where named.

``import pandas`` alone takes a third of a second; DuckDB's Python layer, numpy, pyarrow,
scipy, statsmodels and SQLAlchemy tens to hundreds of milliseconds each. A command that needs
none of them (``--help``, ``runs list``, trec-eval) must not pay for them, yet a module should
name what it uses at its top. So modules take these names from here::

    from .lazy import numpy as np, pandas as pd

and each library is imported at the first attribute read (``pd.DataFrame``), once. Nothing
is read at import time: a class that subclasses a DataFrame is built when first asked for
(:mod:`rankhouse.present.frames`). DuckDB's engine has its own module, :mod:`rankhouse.duck`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


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
scipy_stats = LazyModule("scipy.stats")
scipy_special = LazyModule("scipy.special")
multitest = LazyModule("statsmodels.stats.multitest")
sqlalchemy = LazyModule("sqlalchemy")
psycopg = LazyModule("psycopg")
adbc_postgresql = LazyModule("adbc_driver_postgresql.dbapi")
