"""DuckDB's engine, imported without the Python layers rankhouse's SQL does not use.

Since duckdb 1.4 the engine is the extension module ``_duckdb``: connections, SQL, pandas
scans and the exception classes. The ``duckdb`` package re-exports all of it and adds, in
Python, a relation and expression API and the code that lets DuckDB scan Arrow objects;
importing that layer takes about 0.07 s, a quarter of a short command's run. So modules
that only run SQL take the engine as ``from .duck import duckdb`` (the same classes and
functions, under the name they always had), and a module that scans Arrow data or a
user's DataFrame registers it with :func:`register`, and one that uses the relation API
calls :func:`load_package` first.

Every database rankhouse opens goes through :func:`open_database`, and the engine's scratch
database (the in-memory one that holds only the two tables the engine reads, under a memory
limit) is made here too: this module imports nothing but DuckDB's engine (and the light
:mod:`.defaults` and :mod:`.errors`), so that the command line's thread that makes the
database ahead (:mod:`rankhouse.cli.process`) connects as soon as DuckDB is loaded: importing
the measure engine first (its catalogue, its SQL files) made that thread connect 20 ms later
while the command imported the same modules.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Hashable
from functools import lru_cache
from typing import Any

try:
    import _duckdb as duckdb
except ImportError:  # duckdb before 1.4: the package holds the engine itself
    import duckdb

from .defaults import DUCKDB_CONFIG
from .errors import RankhouseError, first_line
from .lazy import tempfile

__all__ = [
    "duckdb",
    "load_package",
    "open_database",
    "register",
    "set_connector",
    "ENGINE_TABLES",
    "SCRATCH_MEMORY_LIMIT",
    "BOUND_VARIABLE",
    "memory_limit",
    "key",
    "new_database",
    "bounded_database",
]


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


# --- the engine's scratch database ------------------------------------------------------------

#: The tables the engine reads, as the warehouse defines them: what a database that holds
#: nothing else needs (trec-eval without a warehouse, ``rankhouse.evaluate`` on frames).
ENGINE_TABLES = """
CREATE TABLE judgments (qrels_id INTEGER NOT NULL, query_id VARCHAR NOT NULL,
                        doc_id VARCHAR NOT NULL, grade INTEGER NOT NULL);
CREATE TABLE run_rows (run_id INTEGER NOT NULL, query_id VARCHAR NOT NULL,
                       doc_id VARCHAR NOT NULL USING COMPRESSION uncompressed, rank INTEGER,
                       score DOUBLE NOT NULL)
"""

#: What the in-memory engine database may hold in memory before DuckDB moves data to temporary
#: files (``$RANKHOUSE_MEMORY_LIMIT``, in DuckDB's words: ``400MB``, ``2GB``). trec_eval holds
#: a whole run in memory; this keeps rankhouse below it on large runs, at a small cost in time.
#: On the 7-million-line MS MARCO run, -m all_trec: 300MB peaked at 430 MiB in 3.84 s, 400MB
#: at 480 MiB in 3.64 s, 450MB at 542 MiB in 3.62 s (trec_eval: 555 MiB, 7.2 s).
SCRATCH_MEMORY_LIMIT = "400MB"
#: The DuckDB variable that marks a connection as bounded by rankhouse (it holds the limit).
BOUND_VARIABLE = "rankhouse_memory_limit"


def memory_limit() -> str:
    """The limit of a new database: ``$RANKHOUSE_MEMORY_LIMIT``, else the default."""
    return os.environ.get("RANKHOUSE_MEMORY_LIMIT") or SCRATCH_MEMORY_LIMIT


def key(limit: str) -> tuple:
    """What identifies a scratch database with ``limit`` (:func:`rankhouse.duck.open_database`)."""
    return ("scratch", limit)


def new_database(limit: str):
    """A new bounded database (:func:`bounded_database`) holding the engine's empty tables."""
    duck = bounded_database(limit)
    duck.execute(ENGINE_TABLES)
    duck.execute(f"SET VARIABLE {BOUND_VARIABLE} = ?", [limit])
    return duck


def bounded_database(limit: str):
    """A new in-memory database that holds at most ``limit`` and spills to a folder of its own."""
    # os.urandom, not uuid: importing uuid (and platform with it) costs 3-10 ms at start-up
    spill = os.path.join(tempfile.gettempdir(), f"rankhouse-{os.getpid()}-{os.urandom(4).hex()}")
    config = DUCKDB_CONFIG | {"memory_limit": limit, "temp_directory": spill}
    try:
        return duckdb.connect(":memory:", config=config)
    except duckdb.Error as exc:
        raise RankhouseError(f"$RANKHOUSE_MEMORY_LIMIT={limit!r}: {first_line(exc)}") from None


# A bind is ':name' outside strings, quoted identifiers and comments, not part of a '::' cast.
# A condition ``column = ANY(:list)`` after WHERE, AND or OR, or an opening parenthesis after
# them (PostgreSQL's way to match a list) becomes DuckDB's ``list_contains($list, column)``:
# the same rows, planned without the subquery that ANY makes (on a small warehouse 0.6 ms
# against 3-12 ms a statement, the largest part of a short command's SQL; history's newest
# runs put their conditions in parentheses).
_TOKENS = re.compile(
    r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*"
    r"|\b((?:WHERE|AND|OR)\s+(?:\(\s*)?)([A-Za-z_][\w.]*)\s*=\s*ANY\(\s*:([A-Za-z_]\w*)\s*\)"
    r"|(?<![:\w]):([A-Za-z_]\w*)"
)


@lru_cache(maxsize=512)
def to_duckdb(sql: str) -> tuple[str, tuple[str, ...]]:
    """``sql`` with DuckDB's ``$name`` binds for ``:name``, and the names used."""
    names: dict[str, None] = {}

    def replace(match: re.Match) -> str:
        keyword, column, listed, bind = match.groups()
        if listed is not None:
            names[listed] = None
            return f"{keyword}list_contains(${listed}, {column})"
        if bind is None:
            return match.group(0)
        names[bind] = None
        return "$" + bind

    return _TOKENS.sub(replace, sql), tuple(names)
