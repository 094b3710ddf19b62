"""The values of one computation, and the engine's own in-memory databases that hold them.

:func:`rankhouse.engine.compute` leaves every per-query value in the temporary table
:data:`VALUES_TABLE` on its connection; :class:`Values` reads them from there (aggregates in
query-id byte order, as trec_eval adds them; columns; a long frame) and nothing passes
through Python unless asked.

Where no warehouse computes, the engine has databases of its own (made by
:mod:`rankhouse.duck`): trec-eval without a warehouse computes in one of its own
(:func:`scratch_database`), and ``rankhouse.evaluate`` on a connection of one database kept
for the process (:func:`scratch_cursor`). Past the limit DuckDB spills to a folder of its
own; an evaluation that runs out of memory anyway is computed again without the limit
(:func:`lift_memory_limit`).
"""

from __future__ import annotations

import atexit
import math
import os
import threading
import warnings
from collections.abc import Collection, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from ..duck import (
    BOUND_VARIABLE,
    ENGINE_TABLES,
    bounded_database,
    duckdb,
    key,
    memory_limit,
    new_database,
    open_database,
    register,
)
from ..errors import MeasureError, RankhouseWarning
from ..lazy import numpy as np
from ..lazy import pandas as pd
from ..measures import Measure

#: trec_eval's floor for the geometric mean (MIN_GEO_MEAN).
GMEAN_FLOOR = 0.00001
PER_QUERY_COLUMNS = ["run_id", "query_id", "measure", "value"]
#: The temporary table of every value of the last :func:`compute` on a connection:
#: ``run_id, query_id, measure_idx, value``; ``measure_idx`` indexes :attr:`Values.measures`.
VALUES_TABLE = "rh_values"
_FOUND_TABLE = "rh_found"
#: From this many values :meth:`Values.columns` reads them through numpy: 0.11 us a value
#: against 0.25 us as rows (700,000 values of all_trec on MS MARCO: 0.075 s against 0.17 s),
#: which pays for importing numpy (0.05 s) from about here.
NUMPY_VALUES_FROM = 400_000


@dataclass(frozen=True)
class Aggregate:
    """One run's aggregate of one measure, as trec_eval's ``all`` line computes it."""

    run_id: int
    measure: Measure
    value: float
    num_q: int


class Values:
    """The per-query values of one :func:`compute` call, held in ``rh_values`` on ``duck``.

    A query the family left without a row has the measure's ``empty_value``; a NaN the family
    returned stays NaN (trec_eval prints ``-nan``). The table lives until the next
    :func:`compute` on the same connection.

    Attributes:
        duck: the DuckDB connection holding the table.
        measures: the measures computed, in request order (``measure_idx`` indexes them).
        run_ids: the runs evaluated, in request order.
    """

    def __init__(self, duck, measures: list[Measure], run_ids: list[int]) -> None:
        self.duck = duck
        self.measures = measures
        self.run_ids = run_ids

    def aggregates(self, queries: Collection[str] | None = None) -> list[Aggregate]:
        """One value per run and measure, in run then measure request order; with
        ``queries``, over those of the evaluated queries only (a subset's aggregate).

        Values are added left to right in query-id byte order starting from 0.0, then
        ``mean`` = sum / num_q, ``sum`` = the sum, ``gmean`` = exp(sum of ln(max(x, 1e-5))
        / num_q). NaN propagates. A run and measure without any evaluated query get no row.
        """
        if queries is None:
            rows = self.duck.execute(_AGGREGATES.format(kept="")).fetchall()
        else:
            kept = "WHERE query_id IN (SELECT unnest($queries))"
            binds = {"queries": sorted(str(query) for query in queries)}
            rows = self.duck.execute(_AGGREGATES.format(kept=kept), binds).fetchall()
        found = {(run_id, idx): (total, logs, num_q) for run_id, idx, num_q, total, logs in rows}
        result = []
        for run_id in self.run_ids:
            for idx, measure in enumerate(self.measures):
                if (run_id, idx) not in found:
                    continue
                total, logs, num_q = found[(run_id, idx)]
                if measure.aggregate == "sum":
                    value = total
                elif measure.aggregate == "gmean":
                    value = math.exp(logs / num_q)
                else:
                    value = total / num_q
                result.append(Aggregate(run_id, measure, value, num_q))
        return result

    def columns(self, run_id: int) -> tuple[list[str], dict[str, list[float]]]:
        """One run's values as columns: the evaluated query ids in byte order, and measure name
        -> that measure's values in the same order (compute gives every measure a value for
        every evaluated query, so each list is as long as the query ids)."""
        binds = {"run_id": run_id}
        queries = (
            self.duck.execute(
                f"SELECT list(DISTINCT query_id ORDER BY query_id) FROM {VALUES_TABLE} "
                "WHERE run_id = $run_id",
                binds,
            ).fetchone()[0]
            or []
        )
        # one sorted scan, cut into measures here: cheaper than a sorted list per measure
        found = self.duck.execute(
            f"SELECT value FROM {VALUES_TABLE} WHERE run_id = $run_id "
            "ORDER BY measure_idx, query_id",
            binds,
        )
        n = len(queries)
        if n * len(self.measures) >= NUMPY_VALUES_FROM:
            values = found.fetchnumpy()["value"].tolist()
        else:
            values = [value for (value,) in found.fetchall()]
        if len(values) != n * len(self.measures):  # cut into columns, a gap would shift them
            raise MeasureError(f"{VALUES_TABLE} lacks values of run {run_id}: not from compute()")
        return queries, {m.name: values[i * n : (i + 1) * n] for i, m in enumerate(self.measures)}

    def frame(self) -> pd.DataFrame:
        """The long frame ``run_id, query_id, measure, value`` (query and measure categorical),
        ordered by run (request order), measure (request order) and query id (byte order)."""
        if not self.measures:
            return _empty_frame()
        found = self.duck.execute(
            f"SELECT v.run_id, v.measure_idx, dense_rank() OVER (ORDER BY v.query_id) - 1 AS q,"
            f" v.value FROM {VALUES_TABLE} AS v JOIN (SELECT unnest($runs) AS run_id,"
            " generate_subscripts($runs, 1) AS position) AS r ON r.run_id = v.run_id"
            " ORDER BY r.position, v.measure_idx, v.query_id",
            {"runs": self.run_ids},
        ).fetchnumpy()
        if len(found["value"]) == 0:
            return _empty_frame()
        queries = self.duck.execute(
            f"SELECT DISTINCT query_id FROM {VALUES_TABLE} ORDER BY query_id"
        ).fetchnumpy()["query_id"]
        return pd.DataFrame(
            {
                "run_id": np.asarray(found["run_id"], dtype="int64"),
                "query_id": pd.Categorical.from_codes(
                    np.asarray(found["q"], dtype="int64"), categories=list(queries)
                ),
                "measure": pd.Categorical.from_codes(
                    np.asarray(found["measure_idx"], dtype="int64"),
                    categories=[m.name for m in self.measures],
                ),
                "value": np.asarray(found["value"], dtype="float64"),
            }
        )


def aggregate(per_query: pd.DataFrame, measures: Sequence[Measure]) -> list[Aggregate]:
    """Aggregates of per-query values held in a DataFrame ``run_id, query_id, measure, value``
    (a subset of an evaluation's queries, say), by the same SQL as :meth:`Values.aggregates`.

    Runs come in order of first appearance, measures in the order of ``measures``.
    """
    index = {m.name: i for i, m in enumerate(measures)}
    frame = per_query.assign(
        measure_idx=per_query["measure"].astype(object).map(index),
        query_id=per_query["query_id"].astype(str),
    )[["run_id", "query_id", "measure_idx", "value"]]
    with scratch_cursor() as duck:
        register(duck, "rh_frame", frame)
        duck.execute(
            f"CREATE TEMP TABLE {VALUES_TABLE} AS SELECT CAST(run_id AS INTEGER) AS run_id, "
            "CAST(query_id AS VARCHAR) AS query_id, CAST(measure_idx AS INTEGER) AS measure_idx,"
            " CAST(value AS DOUBLE) AS value FROM rh_frame WHERE measure_idx IS NOT NULL"
        )
        run_ids = [int(r) for r in dict.fromkeys(frame["run_id"])]
        return Values(duck, list(measures), run_ids).aggregates()


_AGGREGATES = f"""
SELECT run_id, measure_idx, count(*) AS num_q,
       list_reduce(list(value ORDER BY query_id), lambda acc, x: acc + x, CAST(0 AS DOUBLE)),
       list_reduce(list(ln(greatest(value, CAST({GMEAN_FLOOR!r} AS DOUBLE))) ORDER BY query_id),
                   lambda acc, x: acc + x, CAST(0 AS DOUBLE))
FROM {VALUES_TABLE} {{kept}}
GROUP BY run_id, measure_idx
"""

# Every (run, evaluated query, measure): the family's value, or the measure's empty value


def _empty_frame():
    dtypes = {"run_id": "int64", "query_id": "category", "measure": "category", "value": "float64"}
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in dtypes.items()})


# --- the engine's own databases -------------------------------------------------------------------


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
