"""Where a warehouse keeps its data: one store type per backend, opened by :func:`open_backend`.

:mod:`.base` says what every store does (the :class:`~.base.Backend` protocol and its
capabilities); :mod:`.duckdb_file` is the default store, :mod:`.postgresql` a team's shared
one. :func:`open_backend` imports only the backend a URL names.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from ..defaults import DB_ENV_VAR
from ..errors import RankhouseError
from .base import Backend, Opening, store_of
from .duckdb_file import DUCKDB_PREFIX, DuckDBFile

#: The default warehouse file.
DEFAULT_DB = "rankhouse.duckdb"

#: URL scheme -> (module, class) of its backend; a backend is imported only when named.
SCHEMES = {
    "duckdb": ("rankhouse.backends.duckdb_file", "DuckDBFile"),
    "postgresql": ("rankhouse.backends.postgresql", "PostgreSQL"),
    "postgresql+psycopg": ("rankhouse.backends.postgresql", "PostgreSQL"),
}

__all__ = [
    "Backend",
    "DEFAULT_DB",
    "Opening",
    "SCHEMES",
    "open_backend",
    "resolve_target",
    "store_of",
]


def resolve_target(target: str | os.PathLike[str] | None) -> str:
    """The URL for ``target``: a URL as is, a path as a DuckDB file (``duckdb:///PATH``).

    ``None`` means ``$RANKHOUSE_DB``, else ``./rankhouse.duckdb``. ``":memory:"`` is an
    in-memory DuckDB database. ``postgresql://user@host:port/db`` is a PostgreSQL server,
    reached through psycopg 3 (``pip install "rankhouse[postgres]"``).
    """
    if target is None:
        target = os.environ.get(DB_ENV_VAR) or DEFAULT_DB
    text = os.fspath(target)
    if text.startswith(("postgresql://", "postgres://")):  # psycopg 3 is the driver
        return "postgresql+psycopg://" + text.split("://", 1)[1]
    if "://" in text:
        _scheme(text)  # refuses what no backend reads
        return text
    if text == ":memory:":
        return DUCKDB_PREFIX + ":memory:"
    try:
        return DUCKDB_PREFIX + str(Path(text).expanduser().resolve())
    except (OSError, RuntimeError) as exc:  # RuntimeError: a loop of symbolic links (3.11)
        reason = "a loop of symbolic links" if "loop" in str(exc).lower() else str(exc)
        raise RankhouseError(
            f"the warehouse path {text!r} cannot be resolved: {reason}; point --db at a "
            "DuckDB file (or RANKHOUSE_DB)"
        ) from None


def duckdb_path(url: str) -> str | None:
    """The file (or ``:memory:``) of a ``duckdb:///`` URL; None for another backend."""
    if url.startswith(DUCKDB_PREFIX):
        return url[len(DUCKDB_PREFIX) :] or ":memory:"
    if url.startswith("duckdb://"):  # duckdb://relative/path, as SQLAlchemy reads it
        return url[len("duckdb://") :] or ":memory:"
    return None


def open_backend(url: str, opening: Opening = Opening()) -> Backend:
    """The store ``url`` (from :func:`resolve_target`) names, opened as ``opening`` says
    (:class:`~.base.Opening`), checked and migrated.

    Raises:
        RankhouseError: a scheme no backend reads, or the store cannot be opened (see each
            backend for its errors).
    """
    path = duckdb_path(url)
    if path is not None:
        return DuckDBFile(path, opening)
    module, name = SCHEMES[_scheme(url)]
    return getattr(importlib.import_module(module), name)(url, opening)


def is_server(target) -> bool:
    """Whether a warehouse target (a path, URL or None for the default) names a store that
    does not compute where it keeps its rows (a server)."""
    return duckdb_path(resolve_target(target)) is None


def _scheme(url: str) -> str:
    scheme = url.split("://", 1)[0]
    if scheme not in SCHEMES:
        raise RankhouseError(
            f"unsupported warehouse URL scheme {scheme + '://'!r}: a warehouse is a DuckDB "
            "file (a path, or duckdb:///path) or a PostgreSQL server (postgresql://...)"
        )
    return scheme
