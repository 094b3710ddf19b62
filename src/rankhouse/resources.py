"""Locate the SQL files and migrations that ship inside the package.

In a wheel they sit at ``rankhouse/sql`` and ``rankhouse/migrations``; in a source checkout
(editable install, tests run from the repository) they are the repository's top-level
``sql/`` and ``migrations/`` folders.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[2]


@cache
def _folder(name: str) -> Path:
    from importlib import resources  # at first use: importing it costs a few milliseconds

    packaged = Path(str(resources.files("rankhouse"))) / name
    if packaged.is_dir():
        return packaged
    in_checkout = _REPO_ROOT / name
    if in_checkout.is_dir():
        return in_checkout
    raise FileNotFoundError(f"rankhouse is installed without its {name}/ folder")


def sql_dir() -> Path:
    """The folder holding the shared ranking SQL and ``measures/``."""
    return _folder("sql")


def migrations_dir() -> Path:
    """The folder holding the numbered ``NNNN_name.sql`` migrations."""
    return _folder("migrations")


@cache
def read_sql(relative_path: str) -> str:
    """Text of one SQL file under ``sql/``, e.g. ``read_sql("measures/precision.sql")``."""
    return (sql_dir() / relative_path).read_text(encoding="utf-8")
