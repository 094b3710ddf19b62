"""Compute measures in DuckDB: the shared ranking once, then every measure group.

:func:`compute` builds the shared ranking (``sql/ranking_sorted.sql`` or
``sql/ranking_per_query.sql``, then ``sql/ranking.sql``: temporary tables of the judged
retrieved documents and per-query statistics), then runs each needed family's SQL file once
per group of measures that differ only in the family's key parameter; every value lands in
the temporary table ``rh_values`` on the connection (:mod:`.values`).

Groups whose family builds no helper table run together as one ``UNION ALL`` statement (a
statement's fixed cost, 2-5 ms, is most of a small group's); the others run one by one, on a
second connection beside the first when the caller owns its database.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..defaults import read_sql
from ..duck import duckdb
from ..errors import MeasureError, first_line
from ..lazy import Background
from ..measures import REGISTRY, Measure
from ..measures.sqlfile import load_sql
from .values import VALUES_TABLE, Values, lift_memory_limit

RANKING_SQL = "ranking.sql"
RANKING_SORTED_SQL = "ranking_sorted.sql"
RANKING_PER_QUERY_SQL = "ranking_per_query.sql"
MISSING_QUERIES = ("zero", "skip")
#: The temporary table the groups add their rows to (``measure_idx, run_id, query_id, value``).
FOUND_TABLE = "rh_found"
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
        if not lift_memory_limit(duck):
            raise MeasureError(f"DuckDB ran out of memory: {first_line(exc)}") from None
    return run()  # every statement replaces what it builds: running again is safe


def check_settings(relevance_level: int, max_rank: int | None) -> None:
    """Raise MeasureError when the relevance level or ``max_rank`` is one the engine refuses
    (a caller that stores before computing asks first)."""
    if relevance_level < 0:
        raise MeasureError(f"relevance level must be >= 0, not {relevance_level}")
    if max_rank is not None and max_rank < 0:
        raise MeasureError(f"max_rank must be >= 0, not {max_rank}")


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
    check_settings(relevance_level, max_rank)
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
        f"CREATE OR REPLACE {'' if private else 'TEMP '}TABLE {FOUND_TABLE} "
        "(measure_idx INTEGER, run_id INTEGER, query_id VARCHAR, value DOUBLE)"
    )
    index = {m.name: i for i, m in enumerate(measures)}
    groups = [
        make_group(family_name, group, context, relevance_level, index, prefix=f"rh{i}_")
        for i, (family_name, group) in enumerate(groups_of(measures, relevance_level))
    ]
    run_groups(duck, groups, beside=private)
    duck.execute(
        _FILL,
        {
            "idx": list(range(len(measures))),
            "empty": [float(m.empty_value) for m in measures],
        },
    )
    duck.execute(f"DROP TABLE {FOUND_TABLE}")
    return Values(duck, measures, run_ids)


#: The k of the judged share (:func:`judged_cutoff`) of a measure without a cutoff.
DEFAULT_JUDGED_K = 10
#: The temporary table :func:`judged_shares` builds: ``run_id, query_id, k, judged``.
JUDGED_TABLE = "rh_judged"


def judged_cutoff(measure: str) -> int:
    """The k of a measure's judged share (the holes rule, :mod:`rankhouse.judgments.holes`):
    its cutoff, the first ``@k`` of its name or label, :data:`DEFAULT_JUDGED_K` without one."""
    found = re.search(r"@(\d+)", measure)
    return int(found.group(1)) if found else DEFAULT_JUDGED_K


def judged_shares(duck, cutoffs: Sequence[int]) -> None:
    """Keep the judged shares (:data:`JUDGED_SHARES_SQL`) of the ranking :func:`compute`
    just built on ``duck`` in :data:`JUDGED_TABLE`, for each k of ``cutoffs`` (the next
    ``compute`` replaces the ranking, not the table)."""
    duck.execute(
        f"CREATE OR REPLACE TEMP TABLE {JUDGED_TABLE} AS {read_sql(JUDGED_SHARES_SQL)}",
        {"ks": sorted({int(k) for k in cutoffs})},
    )


#: ``run_id, query_id, k, judged`` of the ranking :func:`compute` just built, for each k of
#: the bind ``$ks`` (the header of the file says the rule).
JUDGED_SHARES_SQL = "judged_shares.sql"


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


# --- internals ------------------------------------------------------------------------------------


def _judged_deeply(duck, qrels_id: int) -> bool:
    """Whether at least :data:`SORTED_FROM_SHARE` of the qrels set's queries have more than
    :data:`DENSE_FROM` judgment lines (then sorting every query is the cheaper ranking)."""
    try:
        deep, queries = duck.execute(
            "SELECT count(*) FILTER (WHERE lines > ?), count(*) FROM "
            "(SELECT count(*) AS lines FROM judgments WHERE qrels_id = ? GROUP BY query_id)",
            [DENSE_FROM, int(qrels_id)],
        ).fetchone()
    except DUCKDB_ERRORS as exc:
        raise MeasureError(f"the judgments could not be read: {first_line(exc)}") from None
    return queries > 0 and deep >= SORTED_FROM_SHARE * queries


_FILL = f"""
CREATE OR REPLACE TEMP TABLE {VALUES_TABLE} AS
SELECT q.run_id, q.query_id, m.idx AS measure_idx,
       CASE WHEN f.measure_idx IS NULL THEN m.empty
            ELSE coalesce(f.value, CAST('NaN' AS DOUBLE)) END AS value
FROM rh_queries AS q
CROSS JOIN (SELECT CAST(unnest($idx) AS INTEGER) AS idx,
                   CAST(unnest($empty) AS DOUBLE) AS empty) AS m
LEFT JOIN {FOUND_TABLE} AS f
  ON f.run_id = q.run_id AND f.query_id = q.query_id AND f.measure_idx = m.idx
"""


def _run_file(duck, path: str, binds: dict[str, Any], *, temporary: bool = True):
    """Run every statement of ``sql/<path>`` with its declared binds; the last result."""
    try:
        return load_sql(path).run(duck, binds, temporary=temporary)
    except DUCKDB_ERRORS as exc:
        raise MeasureError(f"sql/{path} could not be computed: {first_line(exc)}") from None


# --- the measure groups ---------------------------------------------------------------------------


def groups_of(measures: list[Measure], default_level: int) -> list[tuple[str, list[Measure]]]:
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
    graded = measure.definition.graded
    binds["rel"] = measure.relevance_level if graded else measure.effective_level(default_level)
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


def make_group(
    family_name: str,
    group: list[Measure],
    context: dict[str, Any],
    default_level: int,
    index: dict[str, int],
    prefix: str,
) -> _Group:
    family = REGISTRY.families[family_name]
    sql = load_sql(family.sql)
    offered: dict[str, Any] = dict(context) | dict.fromkeys(family.unset) | dict(family.absent)
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


def run_groups(duck, groups: list[_Group], *, beside: bool = False) -> None:
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
            duck.execute(f"INSERT INTO {FOUND_TABLE} {union}", binds)
        except DUCKDB_ERRORS:
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
        duck.execute(f"INSERT INTO {FOUND_TABLE} {group.select}", group.binds)
    except DUCKDB_ERRORS as exc:
        raise group.error(exc) from None


# a bad value that reaches SQL (an overflowing cutoff) is the caller's error to report; an
# interrupt or an internal error is not caught
DUCKDB_ERRORS = (
    duckdb.ConversionException,
    duckdb.OutOfRangeException,
    duckdb.BinderException,
    duckdb.InvalidInputException,
)
