"""The engine's in-memory database as DuckDB makes it: the two tables it reads, under a
memory limit.

This module imports nothing but DuckDB's engine, so that the command line's thread that makes
the database ahead (:mod:`rankhouse.cli.process`) connects as soon as DuckDB is loaded:
importing the measure engine first (its catalogue, its SQL files) made that thread connect
20 ms later while the command imported the same modules.
"""

from __future__ import annotations

import os
import tempfile

from .defaults import DUCKDB_CONFIG
from .duck import duckdb
from .errors import RankhouseError, first_line

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
