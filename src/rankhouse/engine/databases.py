"""The engine's own in-memory databases (made by :mod:`rankhouse.scratch`).

trec-eval without a warehouse computes in a database of its own (:func:`scratch_database`),
and ``rankhouse.evaluate`` on a connection of one database kept for the process
(:func:`scratch_cursor`). Past the limit DuckDB spills to a folder of its own; an evaluation
that runs out of memory anyway is computed again without the limit (:func:`lift_memory_limit`).
"""

from __future__ import annotations

import atexit
import os
import threading
import warnings
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from ..duck import duckdb, open_database
from ..errors import RankhouseWarning
from ..scratch import (
    BOUND_VARIABLE,
    ENGINE_TABLES,
    bounded_database,
    key,
    memory_limit,
    new_database,
)


def scratch_database():
    """An in-memory DuckDB connection holding the engine's (empty) tables and nothing else:
    evaluating there needs no warehouse schema. The caller closes it.

    Past :data:`SCRATCH_MEMORY_LIMIT` DuckDB spills to a folder of its own under the system's
    temporary directory, which it creates when first needed and removes when closed. Not
    every operator can spill: a computation that runs out of memory under the limit runs
    again without it (:func:`rankhouse.engine.compute`), so the limit bounds memory and never
    fails an evaluation.
    """
    limit = memory_limit()
    return open_database(key(limit), lambda: new_database(limit))


@contextmanager
def scratch_cursor():
    """Like :func:`scratch_database`, for a process that evaluates again and again (a notebook
    calling ``rankhouse.evaluate`` in a loop): a connection of its own on one in-memory
    database kept for the process, so each call skips the 20-30 ms of creating a database.

    The engine's tables are temporary tables of the connection: callers on other threads,
    each on its own connection, never see each other's rows, and closing the connection
    (when the ``with`` block ends) drops them. The database's memory limit is shared; one
    lifted for a computation (:func:`compute`) is put back when the block ends. A forked child
    makes a database of its own rather than use its parent's.

    DuckDB keeps memory it once used, so a call that held more than
    :data:`KEEP_DATABASE_UP_TO` rows retires the database: it is closed (its memory returned)
    when its last connection closes, and the next call makes a new one, whose 20-30 ms are
    nothing beside the evaluation of that many rows.
    """
    limit = memory_limit()
    with _SHARED_LOCK:
        key = (os.getpid(), limit)
        shared = _SHARED.get(key)
        if shared is None:
            shared = _SHARED[key] = _SharedDatabase(bounded_database(limit))
        shared.users += 1
        duck = shared.connection.cursor()
    large = False
    try:
        duck.execute(ENGINE_TABLES.replace("CREATE TABLE", "CREATE TEMP TABLE"))
        duck.execute(f"SET VARIABLE {BOUND_VARIABLE} = ?", [limit])
        yield duck
    finally:
        try:
            large = _rows_held(duck) > KEEP_DATABASE_UP_TO
            _restore_memory_limit(duck, limit)
        finally:
            duck.close()
            with _SHARED_LOCK:
                shared.users -= 1
                if large and _SHARED.get(key) is shared:
                    del _SHARED[key]
                    shared.retired = True
                if shared.retired and shared.users == 0:
                    shared.connection.close()


#: :func:`scratch_cursor` keeps its database after a call that held at most this many rows of
#: runs and judgments (a DL19-size run is 43,000), and retires it after a larger one.
KEEP_DATABASE_UP_TO = 1_000_000


@dataclass
class _SharedDatabase:
    connection: Any
    users: int = 0
    retired: bool = False


_SHARED: dict[tuple[int, str], _SharedDatabase] = {}
_SHARED_LOCK = threading.Lock()


def _rows_held(duck) -> int:
    with suppress(duckdb.Error):  # a connection a failure left unusable holds nothing to count
        return duck.execute(
            "SELECT (SELECT count(*) FROM run_rows) + (SELECT count(*) FROM judgments)"
        ).fetchone()[0]
    return 0


def _restore_memory_limit(duck, limit: str) -> None:
    """Put the shared database's limit back if :func:`compute` lifted it on ``duck``."""
    with suppress(duckdb.Error):  # a connection a failure left unusable: nothing to restore
        if duck.execute(f"SELECT getvariable('{BOUND_VARIABLE}')").fetchone()[0] is None:
            quoted = limit.replace("'", "''")
            duck.execute(f"SET memory_limit = '{quoted}'")


@atexit.register
def _close_shared() -> None:
    # closing removes the database's spill folder; a parent's database is not a child's to close
    for (pid, _), shared in list(_SHARED.items()):
        if pid == os.getpid():
            shared.connection.close()
    _SHARED.clear()


def lift_memory_limit(duck) -> bool:
    """Drop the in-memory database's limit after it ran out of memory (with a warning); False
    when ``duck`` has no limit of rankhouse's to drop."""
    limit = duck.execute(f"SELECT getvariable('{BOUND_VARIABLE}')").fetchone()[0]
    if limit is None:
        return False
    warnings.warn(
        RankhouseWarning(
            f"the evaluation needed more memory than $RANKHOUSE_MEMORY_LIMIT={limit!r} allows "
            "DuckDB to hold without spilling: computed again without the limit"
        ),
        stacklevel=3,
    )
    duck.execute("RESET memory_limit")
    duck.execute(f"RESET VARIABLE {BOUND_VARIABLE}")
    return True
