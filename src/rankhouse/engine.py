"""Compute measures in DuckDB: per-query values, then trec_eval's aggregates.

:func:`compute` builds the shared ranking once (``sql/ranking_sorted.sql`` or
``sql/ranking_per_query.sql``, then ``sql/ranking.sql``: temporary tables of the judged
retrieved documents and per-query statistics), then runs each needed family file
once per group of measures that differ only in the family's key parameter (all cutoffs of
``P`` in one query); the groups whose family builds no helper table run together, as one
``UNION ALL`` statement. Every value lands in the temporary table ``rh_values`` on the
connection, where the caller stores it (``INSERT ... SELECT``), aggregates it
(:meth:`Values.aggregates`, adding in query-id byte order as trec_eval does) or fetches it:
nothing passes through Python on the way unless asked for.

The engine always runs on a DuckDB connection: the warehouse file itself, or the local
workspace of a server warehouse (:mod:`rankhouse.storage`).
"""

from __future__ import annotations

import atexit
import math
import threading
import warnings
from collections.abc import Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from .errors import MeasureError, RankhouseWarning, first_line
from .measures import REGISTRY, Measure
from .measures.sqlfile import load_sql
from .scratch import BOUND_VARIABLE as _BOUND_VARIABLE
from .scratch import ENGINE_TABLES, bounded_database

if TYPE_CHECKING:
    import pandas as pd

RANKING_SQL = "ranking.sql"
RANKING_SORTED_SQL = "ranking_sorted.sql"
RANKING_PER_QUERY_SQL = "ranking_per_query.sql"
MISSING_QUERIES = ("zero", "skip")
#: trec_eval's floor for the geometric mean (MIN_GEO_MEAN).
GMEAN_FLOOR = 0.00001
PER_QUERY_COLUMNS = ["run_id", "query_id", "measure", "value"]
#: ranking_per_query.sql ranks the judged documents of a query by counting the documents
#: above each one, unless the query has more judged retrieved documents than this: then it
#: sorts them all.
DENSE_FROM = 16
#: rh_ranking comes from ranking_sorted.sql (sort every query's documents) when at least this
#: share of the qrels set's queries has more than :data:`DENSE_FROM` judgment lines, else
#: from ranking_per_query.sql (join the run to the judgments first, then count or sort query
#: by query). DL19 passage (43 x 1,000, about 215 judgments a query): 29 ms -> 17 ms; MS
#: MARCO dev (about one a query), the first million lines: 83 ms query by query against
#: 261 ms sorted. Both give the same table: the differential tests run both.
SORTED_FROM_SHARE = 0.5
#: The temporary table of every value of the last :func:`compute` on a connection:
#: ``run_id, query_id, measure_idx, value``; ``measure_idx`` indexes :attr:`Values.measures`.
VALUES_TABLE = "rh_values"
_FOUND_TABLE = "rh_found"
#: From this many values :meth:`Values.columns` reads them through numpy: 0.11 us a value
#: against 0.25 us as rows (700,000 values of all_trec on MS MARCO: 0.075 s against 0.17 s),
#: which pays for importing numpy (0.05 s) from about here.
NUMPY_VALUES_FROM = 400_000


def scratch_database():
    """An in-memory DuckDB connection holding the engine's (empty) tables and nothing else:
    evaluating there needs no warehouse schema. The caller closes it.

    Past :data:`rankhouse.scratch.SCRATCH_MEMORY_LIMIT` DuckDB spills to a folder of its own
    under the system's temporary directory, which it creates when first needed and removes
    when closed. Not every operator can spill: a computation that runs out of memory under
    the limit runs again without it (:func:`compute`), so the limit bounds memory and never
    fails an evaluation.
    """
    from . import ahead, scratch

    limit = scratch.memory_limit()
    duck = ahead.take(scratch.key(limit))
    return duck if duck is not None else scratch.new_database(limit)


def close_scratch(duck) -> None:
    """Close a database from :func:`scratch_database`.

    In a process that ends with its command (:func:`rankhouse.leaving.ending`), a database
    that put nothing on disk (no spill folder) is left open instead: closing it would only
    free memory that the process's end frees anyway (10 ms on DL19, freeing the rows; an
    empty database closes in 1.5 ms). A folder it spilled to is removed by closing it, so
    that one is closed.
    """
    import os

    from . import leaving
    from .duck import duckdb

    if leaving.ending():
        with suppress(duckdb.Error):  # a connection a failure left unusable: close it
            spill = duck.execute("SELECT current_setting('temp_directory')").fetchone()[0]
            if not os.path.exists(spill):
                _LEFT_OPEN.append(duck)  # not deallocated (closed) on the way out either
                return
    duck.close()


_LEFT_OPEN: list[Any] = []


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
    import os

    from .scratch import memory_limit

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
        duck.execute(f"SET VARIABLE {_BOUND_VARIABLE} = ?", [limit])
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
    from .duck import duckdb

    with suppress(duckdb.Error):  # a connection a failure left unusable holds nothing to count
        return duck.execute(
            "SELECT (SELECT count(*) FROM run_rows) + (SELECT count(*) FROM judgments)"
        ).fetchone()[0]
    return 0


def _restore_memory_limit(duck, limit: str) -> None:
    """Put the shared database's limit back if :func:`compute` lifted it on ``duck``."""
    from .duck import duckdb

    with suppress(duckdb.Error):  # a connection a failure left unusable: nothing to restore
        if duck.execute(f"SELECT getvariable('{_BOUND_VARIABLE}')").fetchone()[0] is None:
            quoted = limit.replace("'", "''")
            duck.execute(f"SET memory_limit = '{quoted}'")


@atexit.register
def _close_shared() -> None:
    # closing removes the database's spill folder; a parent's database is not a child's to close
    import os

    for (pid, _), shared in list(_SHARED.items()):
        if pid == os.getpid():
            shared.connection.close()
    _SHARED.clear()


def _lift_memory_limit(duck) -> bool:
    """Drop the in-memory database's limit after it ran out of memory (with a warning); False
    when ``duck`` has no limit of rankhouse's to drop."""
    limit = duck.execute(f"SELECT getvariable('{_BOUND_VARIABLE}')").fetchone()[0]
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
    duck.execute(f"RESET VARIABLE {_BOUND_VARIABLE}")
    return True


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

    def aggregates(self) -> list[Aggregate]:
        """One value per run and measure, in run then measure request order.

        Values are added left to right in query-id byte order starting from 0.0, then
        ``mean`` = sum / num_q, ``sum`` = the sum, ``gmean`` = exp(sum of ln(max(x, 1e-5))
        / num_q). NaN propagates. A run and measure without any evaluated query get no row.
        """
        rows = self.duck.execute(_AGGREGATES).fetchall()
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
        import numpy as np
        import pandas as pd

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
    from .duck import register

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


def compute(
    duck,
    run_ids: Sequence[int],
    qrels_id: int,
    measures: Sequence[Measure],
    *,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    max_rank: int | None = None,
    judged_only: bool = False,
    private: bool = False,
) -> Values:
    """Per-query values of ``measures`` for stored runs against a stored qrels set.

    The evaluated queries are every query of the qrels set; a query a run did not answer is
    scored on an empty ranking (trec_eval ``-c``), unless ``missing_queries="skip"``, which
    keeps only the queries the run answered. Run queries without judgments are ignored.

    Args:
        duck: a DuckDB connection on which ``run_rows`` and ``judgments`` hold the rows
            (temporary tables ``rh_*`` are created on it).
        run_ids: ids of stored runs (``runs.id``).
        qrels_id: id of the stored qrels set (``qrels_sets.id``).
        measures: parsed measures (see :func:`rankhouse.measures.parse_measures`).
        relevance_level: the level for binary measures without their own ``rel`` (``-l``).
        missing_queries: ``"zero"`` (score as empty ranking) or ``"skip"``.
        max_rank: keep only the top ``max_rank`` documents of each query (trec_eval ``-M``).
        judged_only: keep only documents judged ``>= 0``, renumbered (trec_eval ``-J``).
        private: ``duck``'s database is the caller's alone and holds its rows committed
            (:func:`scratch_database`). The ranking's tables are then ordinary tables of it,
            and the measure groups that build helper tables run on a second connection
            while the others run on ``duck``: a second core at work on small inputs, where
            DuckDB runs each statement on one (DL19's all_trec: 0.29 s -> 0.25 s).

    Returns:
        The :class:`Values` (one per run, evaluated query and measure).

    Raises:
        MeasureError: a bad option, a measure whose family is not declared, a value the
            family's SQL cannot compute (naming the file), or DuckDB out of memory.
    """
    from .duck import duckdb

    run = partial(
        _compute,
        duck,
        run_ids,
        qrels_id,
        measures,
        relevance_level=relevance_level,
        missing_queries=missing_queries,
        max_rank=max_rank,
        judged_only=judged_only,
        private=private,
    )
    try:
        return run()
    except duckdb.OutOfMemoryException as exc:
        if not _lift_memory_limit(duck):
            raise MeasureError(f"DuckDB ran out of memory: {first_line(exc)}") from None
    return run()  # every statement replaces what it builds: running again is safe


def _compute(
    duck,
    run_ids: Sequence[int],
    qrels_id: int,
    measures: Sequence[Measure],
    *,
    relevance_level: int,
    missing_queries: str,
    max_rank: int | None,
    judged_only: bool,
    private: bool,
) -> Values:
    if missing_queries not in MISSING_QUERIES:
        raise MeasureError(f"missing_queries must be 'zero' or 'skip', not {missing_queries!r}")
    if relevance_level < 0:
        raise MeasureError(f"relevance level must be >= 0, not {relevance_level}")
    if max_rank is not None and max_rank < 0:
        raise MeasureError(f"max_rank must be >= 0, not {max_rank}")
    measures = list(dict.fromkeys(measures))
    run_ids = list(dict.fromkeys(int(run_id) for run_id in run_ids))
    levels = sorted({m.effective_level(relevance_level) for m in measures} | {relevance_level})
    context = {
        "run_ids": run_ids,
        "qrels_id": int(qrels_id),
        "max_rank": max_rank,
        "judged_only": bool(judged_only),
    }
    ranks = RANKING_SORTED_SQL if _judged_deeply(duck, qrels_id) else RANKING_PER_QUERY_SQL
    _run_file(duck, ranks, context | {"dense_from": DENSE_FROM}, temporary=not private)
    _run_file(
        duck,
        RANKING_SQL,
        context | {"skip_missing": missing_queries == "skip", "levels": levels},
        temporary=not private,
    )
    duck.execute(
        f"CREATE OR REPLACE {'' if private else 'TEMP '}TABLE {_FOUND_TABLE} "
        "(measure_idx INTEGER, run_id INTEGER, query_id VARCHAR, value DOUBLE)"
    )
    index = {m.name: i for i, m in enumerate(measures)}
    groups = [
        _group(family_name, group, context, relevance_level, index, prefix=f"rh{i}_")
        for i, (family_name, group) in enumerate(_groups(measures, relevance_level))
    ]
    _run_groups(duck, groups, beside=private)
    duck.execute(
        _FILL,
        {
            "idx": list(range(len(measures))),
            "empty": [float(m.empty_value) for m in measures],
        },
    )
    duck.execute(f"DROP TABLE {_FOUND_TABLE}")
    return Values(duck, measures, run_ids)


def load_files(measures: Sequence[Measure]) -> None:
    """Read and check now the SQL files that computing ``measures`` runs (they are read once
    per process): a caller that waits for DuckDB on another thread spends the wait on them
    instead of the computation (trec_eval's whole catalogue: 10 ms)."""
    for path in (RANKING_SORTED_SQL, RANKING_PER_QUERY_SQL, RANKING_SQL):
        load_sql(path)
    for measure in measures:
        family = REGISTRY.families.get(measure.family)
        if family is not None:  # an undeclared family is compute's to report
            load_sql(family.sql)


# --- internals ----------------------------------------------------------------------------------


def _judged_deeply(duck, qrels_id: int) -> bool:
    """Whether at least :data:`SORTED_FROM_SHARE` of the qrels set's queries have more than
    :data:`DENSE_FROM` judgment lines (then sorting every query is the cheaper ranking)."""
    try:
        deep, queries = duck.execute(
            "SELECT count(*) FILTER (WHERE lines > ?), count(*) FROM "
            "(SELECT count(*) AS lines FROM judgments WHERE qrels_id = ? GROUP BY query_id)",
            [DENSE_FROM, int(qrels_id)],
        ).fetchone()
    except _duckdb_errors() as exc:
        raise MeasureError(f"the judgments could not be read: {first_line(exc)}") from None
    return queries > 0 and deep >= SORTED_FROM_SHARE * queries


_AGGREGATES = f"""
SELECT run_id, measure_idx, count(*) AS num_q,
       list_reduce(list(value ORDER BY query_id), lambda acc, x: acc + x, CAST(0 AS DOUBLE)),
       list_reduce(list(ln(greatest(value, CAST({GMEAN_FLOOR!r} AS DOUBLE))) ORDER BY query_id),
                   lambda acc, x: acc + x, CAST(0 AS DOUBLE))
FROM {VALUES_TABLE}
GROUP BY run_id, measure_idx
"""

# Every (run, evaluated query, measure): the family's value, or the measure's empty value
# where the family left no row (a NULL the family returned counts as NaN).
_FILL = f"""
CREATE OR REPLACE TEMP TABLE {VALUES_TABLE} AS
SELECT q.run_id, q.query_id, m.idx AS measure_idx,
       CASE WHEN f.measure_idx IS NULL THEN m.empty
            ELSE coalesce(f.value, CAST('NaN' AS DOUBLE)) END AS value
FROM rh_queries AS q
CROSS JOIN (SELECT CAST(unnest($idx) AS INTEGER) AS idx,
                   CAST(unnest($empty) AS DOUBLE) AS empty) AS m
LEFT JOIN {_FOUND_TABLE} AS f
  ON f.run_id = q.run_id AND f.query_id = q.query_id AND f.measure_idx = m.idx
"""


def _empty_frame():
    import pandas as pd

    dtypes = {"run_id": "int64", "query_id": "category", "measure": "category", "value": "float64"}
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in dtypes.items()})


def _groups(measures: list[Measure], default_level: int) -> list[tuple[str, list[Measure]]]:
    """Measures of one family that differ only in the family's key, in request order."""
    groups: dict[tuple, list[Measure]] = {}
    for measure in measures:
        family = REGISTRY.families.get(measure.family)
        if family is None:
            raise MeasureError(f"{measure.name}: family {measure.family!r} is not declared")
        scalars = _scalar_binds(measure, family.key, default_level)
        groups.setdefault((measure.family, tuple(sorted(scalars.items()))), []).append(measure)
    return [(key[0], group) for key, group in groups.items()]


def _scalar_binds(measure: Measure, key: str | None, default_level: int) -> dict[str, Any]:
    binds = {name: value for name, value in measure.params.items() if name != key}
    binds["rel"] = measure.effective_level(default_level)
    return binds


def _key_of(measure: Measure, key: str | None) -> Any:
    if key is None:
        return None
    if key == "measure":
        return measure.definition.name
    return measure.params.get(key)


@dataclass
class _Group:
    """One family file's rows for measures that differ only in its key: ``select`` gives
    ``measure_idx, run_id, query_id, value`` with binds renamed by a prefix of the group's
    own, so that several groups can run as one statement."""

    family: Any
    measures: list[Measure]
    offered: dict[str, Any]
    setup: list[Any]
    select: str
    binds: dict[str, Any]

    @property
    def alone(self) -> bool:
        """Whether the group must run by itself: a prepare hook or setup statements build
        helper tables that another group of the family would replace."""
        return self.family.prepare is not None or bool(self.setup)

    def error(self, exc: BaseException) -> MeasureError:
        names = ", ".join(m.name for m in self.measures)
        return MeasureError(
            f"{names}: sql/{self.family.sql} could not be computed: {first_line(exc)}"
        )


def _group(
    family_name: str,
    group: list[Measure],
    context: dict[str, Any],
    default_level: int,
    index: dict[str, int],
    prefix: str,
) -> _Group:
    family = REGISTRY.families[family_name]
    sql = load_sql(family.sql)
    offered: dict[str, Any] = dict(context)
    offered |= _scalar_binds(group[0], family.key, default_level)
    by_key: dict[Any, list[Measure]] = {}
    for measure in group:
        by_key.setdefault(_key_of(measure, family.key), []).append(measure)
    if family.list_bind is not None:
        offered[family.list_bind] = list(by_key)
    pairs = [(key, index[m.name]) for key, members in by_key.items() for m in members]
    binds = sql.binds(offered)
    *setup, last = sql.statements
    if family.key is None:
        columns, match = "run_id, query_id, value", "ON TRUE"
    else:
        columns, match = "run_id, query_id, key, value", "ON f.key IS NOT DISTINCT FROM m.key"
    renamed = last.prefixed(prefix)
    select = (
        f"SELECT m.idx, f.run_id, f.query_id, f.value FROM ({renamed.duckdb}) AS f({columns}) "
        f"JOIN (SELECT unnest(${prefix}keys) AS key, unnest(${prefix}idx) AS idx) AS m {match}"
    )
    values = {prefix + name: binds[name] for name in last.names}
    values[prefix + "keys"] = [key for key, _ in pairs]
    values[prefix + "idx"] = [idx for _, idx in pairs]
    return _Group(family, group, offered, [(st, st.binds(binds)) for st in setup], select, values)


def _run_groups(duck, groups: list[_Group], *, beside: bool = False) -> None:
    """Add every group's rows to ``rh_found``: each group with helper tables by itself, the
    others in one statement (a statement's fixed cost, 2-5 ms, is most of a small group's).

    ``beside``: the groups by themselves run on a second connection to ``duck``'s database
    (see :func:`compute`'s ``private``) while the statement of the others runs on ``duck``.
    """
    alone = [group for group in groups if group.alone]
    together = [group for group in groups if not group.alone]
    if not (beside and alone and together):
        built: dict = {}
        for group in alone:
            _run_alone(duck, group, built)
        _run_together(duck, together)
        return
    from .background import Background

    second = duck.cursor()
    built: dict = {}
    beside = Background(
        lambda: [_run_alone(second, group, built) for group in alone], "rankhouse-groups"
    )
    try:
        _run_together(duck, together)
    finally:
        beside.wait()
        second.close()
    beside.result()  # a group that failed beside the others


def _run_together(duck, together: list[_Group]) -> None:
    if len(together) == 1:
        _run_alone(duck, together[0])
    elif together:
        union = " UNION ALL ".join(f"({group.select})" for group in together)
        binds = {name: value for group in together for name, value in group.binds.items()}
        try:
            duck.execute(f"INSERT INTO {_FOUND_TABLE} {union}", binds)
        except _duckdb_errors():
            # The statement inserted nothing. Group by group, the one that fails is named;
            # if none does, their rows are all in place.
            for group in together:
                _run_alone(duck, group)


def _run_alone(duck, group: _Group, built: dict | None = None) -> None:
    """Add ``group``'s rows to ``rh_found``; ``built`` as :class:`Family`'s ``prepare`` takes
    it (what the groups before this one on ``duck`` built)."""
    try:
        if group.family.prepare is not None:
            group.family.prepare(
                duck, group.measures, group.offered, {} if built is None else built
            )
        for statement, binds in group.setup:
            duck.execute(statement.duckdb, binds)
        duck.execute(f"INSERT INTO {_FOUND_TABLE} {group.select}", group.binds)
    except _duckdb_errors() as exc:
        raise group.error(exc) from None


def _run_file(duck, path: str, binds: dict[str, Any], *, temporary: bool = True):
    """Run every statement of ``sql/<path>`` with its declared binds; the last result."""
    try:
        return load_sql(path).run(duck, binds, temporary=temporary)
    except _duckdb_errors() as exc:
        raise MeasureError(f"sql/{path} could not be computed: {first_line(exc)}") from None


def _duckdb_errors() -> tuple[type[BaseException], ...]:
    from .duck import duckdb

    # a bad value that reaches SQL (an overflowing cutoff) is the caller's error to report;
    # an interrupt or an internal error is not caught
    return (
        duckdb.ConversionException,
        duckdb.OutOfRangeException,
        duckdb.BinderException,
        duckdb.InvalidInputException,
    )
