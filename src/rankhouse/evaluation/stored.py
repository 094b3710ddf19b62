"""The stored evaluations: what identifies one, finding those already computed, reading their
values back, how the queries of a run and a qrels set met, and the interval of each stored mean.

An evaluation is identified by (run, qrels set and its content hash, canonical measure,
effective relevance level, missing-query policy, other options). Storing
(:mod:`.computing`) replaces an evaluation with the same key, in one transaction with its
per-query values. Reading needs no engine: ``eval`` of stored values and ``history`` load
none (the start-up budget).

**Input signature**: what an evaluation's values were computed from. Two evaluations of one
label are comparable (a trend may join them, a gate may weigh one against the other) when they
were computed from the same inputs: the same qrels content, the same set of queries, the same
relevance level, missing-query policy and options that change values. The signature is the md5
(hex) of those five parts, one a line:

    qrels_sha256
    md5 of the evaluated query ids, sorted byte-wise, joined by line feeds
    the effective relevance level
    the missing-query policy
    the options' JSON (sorted keys, as ``evaluations.options`` holds it)

Migration 0011 gives the evaluations stored before it the same signature in SQL, from the
same columns and their per-query rows. md5 names content here; it guards nothing. A
signature is NULL (None) when unknown: never equal to another, not even to another unknown.

**Intervals** of each stored mean: Student's t over the evaluation's per-query values. A
measure averaged over the queries (``aggregate`` ``mean``) gets the interval
mean +- t_{1 - (1 - level) / 2, n - 1} * s / sqrt(n) of :func:`rankhouse.stats.t_interval`,
where n, the mean and s (the sample standard deviation) are those of its stored per-query
values, NaN values (trec_eval's ``-nan``) left out, as ``compare`` leaves them out. A sum
(``num_rel_ret``) or a geometric mean (``gm_map``) is not a mean of the per-query values and
gets none (NaN bounds), nor does a mean over fewer than two values.

The values are summarized by :func:`rankhouse.stats.summarize` in query-id byte order, whether
they are stored (read back from ``evaluation_values``) or held in memory (``rankhouse.evaluate``
on data): the same numbers, to the bit, whatever the store, the database's threads or the order
it returns rows in, and the same as ``compare``'s interval of the mean
(:func:`~rankhouse.stats.summarize` sums a list of floats in plain Python, as numpy sums them:
reading stored values loads no numpy). They agree with :func:`scipy.stats.t.interval` and
``ttest_1samp(...).confidence_interval()`` to about 1e-16. (The database's own ``avg`` and
``stddev_samp`` were tried first: summed by parallel threads, their last bits changed from one
run to the next.)

History (:func:`with_spread`): for every run and qrels set and every label shown, the
columns ``<label> low`` and ``<label> high`` follow each label, and ``num_q`` (the number of
queries the row's means are over; the largest when its labels differ, as ``AP`` and ``AP
[missing_queries=skip]`` of a run that misses queries do) comes before the first label.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..columns import INTERVAL_SUFFIXES, Rows
from ..lazy import hashlib
from ..results import PerQueryValues, QueryCounts
from ..stats import Summary, check_level, summarize, t_interval


@dataclass(frozen=True)
class EvaluationKey:
    """What identifies a stored evaluation."""

    run_id: int
    qrels_id: int
    qrels_sha256: str
    measure: str
    relevance_level: int
    missing_queries: str
    options: str


def effective_level(measure, default_level: int) -> int:
    level = getattr(measure, "relevance_level", None)
    return default_level if level is None else int(level)


_FIND_STORED = """
    SELECT id, run_id, measure, relevance_level, value, num_q, requested
    FROM evaluations
    WHERE qrels_id = :qrels_id AND qrels_sha256 = :qrels_sha256
      AND missing_queries = :missing_queries AND options = :options
      AND run_id = ANY(:run_ids) AND measure = ANY(:measures)
    ORDER BY id
    """


@dataclass(frozen=True)
class StoredMeasure:
    """A measure as its stored evaluations describe it: what reading stored values needs of
    the parser's :class:`~rankhouse.measures.Measure` (its canonical name, its own relevance
    level, its aggregate), for ``eval`` of stored values without the measure parser."""

    name: str
    relevance_level: int | None
    aggregate: str


_STORED_MEASURES = """
    SELECT DISTINCT measure, parameters, aggregate
    FROM evaluations
    WHERE qrels_id = :qrels_id AND missing_queries = 'zero' AND options = '{}'
      AND label = measure AND measure = ANY(:measures) AND run_id = ANY(:run_ids)
    """


def stored_measures(
    store, texts: Sequence[str], qrels_id: int, run_ids: Sequence[int]
) -> list[StoredMeasure] | None:
    """The measures ``texts`` name, in request order without repeats, when each text is the
    label of an evaluation of these runs stored at the default settings (level 1, missing
    queries scored zero, no option), else None.

    Such a label is its measure's canonical name, the parser's own output, which the parser
    reads back as itself (tests/test_labels.py holds the two together); the measure's own
    level is in its stored parameters (``rel``)."""
    wanted = list(dict.fromkeys(texts))
    with store.connect() as conn:
        found = conn.execute(
            _STORED_MEASURES,
            {"qrels_id": qrels_id, "measures": wanted, "run_ids": list(run_ids)},
        ).all()
    described: dict[str, set[tuple]] = {}
    for name, parameters, aggregate in found:
        try:
            level = json.loads(parameters).get("rel")
        except (TypeError, ValueError, AttributeError):
            return None
        described.setdefault(name, set()).add((level, aggregate))
    if any(len(described.get(name, ())) != 1 for name in wanted):
        return None
    return [StoredMeasure(name, *next(iter(described[name]))) for name in wanted]


def find_stored(store, keys: Iterable[EvaluationKey]) -> dict[EvaluationKey, dict[str, Any]]:
    keys = list(keys)
    if not keys:
        return {}
    wanted = set(keys)
    found: dict[EvaluationKey, dict[str, Any]] = {}
    groups: dict[tuple, list[EvaluationKey]] = {}
    for key in keys:
        groups.setdefault(
            (key.qrels_id, key.qrels_sha256, key.missing_queries, key.options), []
        ).append(key)
    with store.connect() as conn:
        for (qrels_id, sha, policy, opts), group in groups.items():
            rows = conn.execute(
                _FIND_STORED,
                {
                    "qrels_id": qrels_id,
                    "qrels_sha256": sha,
                    "missing_queries": policy,
                    "options": opts,
                    "run_ids": sorted({k.run_id for k in group}),
                    "measures": sorted({k.measure for k in group}),
                },
            ).mappings()
            for row in rows:  # the newest wins (ORDER BY id)
                key = EvaluationKey(
                    row["run_id"],
                    qrels_id,
                    sha,
                    row["measure"],
                    row["relevance_level"],
                    policy,
                    opts,
                )
                if key in wanted:
                    found[key] = dict(row)
    return found


def mark_requested(store, stored: Iterable[dict[str, Any]]) -> None:
    """Mark stored evaluations (rows of :func:`find_stored`) as asked for by a command: a
    report's precision-recall point that ``eval`` then asks for becomes a default column of
    ``history``."""
    ids = sorted({int(row["id"]) for row in stored if row.get("requested") is False})
    if ids and not store.read_only:
        with store.transaction() as conn:
            conn.execute(
                "UPDATE evaluations SET requested = TRUE WHERE id = ANY(:ids)", {"ids": ids}
            )


def stored_values(store, rows: list[dict[str, Any]]) -> PerQueryValues:
    """The stored per-query values of the evaluations in ``rows``, in result order."""
    values = PerQueryValues()
    if not rows:
        return values
    runs = list(dict.fromkeys(row["run"] for row in rows))
    measures = list(dict.fromkeys(row["measure"] for row in rows))
    with store.connect() as conn:
        found = conn.execute(
            "SELECT o.r, v.query_id, o.m, v.value FROM evaluation_values AS v JOIN "
            "(SELECT unnest(:ids) AS evaluation_id, unnest(:r) AS r, unnest(:m) AS m) AS o "
            "ON o.evaluation_id = v.evaluation_id ORDER BY o.r, v.query_id, o.m",
            {
                "ids": [int(row["evaluation_id"]) for row in rows],
                "r": [runs.index(row["run"]) for row in rows],
                "m": [measures.index(row["measure"]) for row in rows],
            },
        ).all()
    for r, query, m, value in found:
        values.run.append(runs[r])
        values.query.append(query)
        values.measure.append(measures[m])
        values.value.append(math.nan if value is None else value)
    return values


# --- input signatures ------------------------------------------------------------------------

SHORT = 8
"""Hex digits of the short id ``history`` shows (``inputs``)."""

EMPTY_QUERY_SET = "d41d8cd98f00b204e9800998ecf8427e"
"""md5 of no query id (an evaluation without per-query rows)."""


def query_set_hash(query_ids: Iterable[str]) -> str:
    """md5 of the query ids, sorted byte-wise and joined by line feeds."""
    ordered = sorted(query_ids, key=lambda q: q.encode("utf-8", "surrogatepass"))
    return hashlib.md5("\n".join(ordered).encode("utf-8", "surrogatepass")).hexdigest()


def input_signature(
    qrels_sha256: str, query_set: str, relevance_level: int, missing_queries: str, options: str
) -> str:
    """The signature of an evaluation from its five parts (see the module)."""
    text = "\n".join([qrels_sha256, query_set, str(int(relevance_level)), missing_queries, options])
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def short(signature: str | None) -> str | None:
    """The short id of a signature (its first 8 hex digits), None when unknown."""
    return None if signature is None else signature[:SHORT]


def combined(signatures: Iterable[str | None]) -> str | None:
    """One signature for several evaluations shown together (a history row's measures): the
    signature itself when they share it, else the md5 of the distinct ones sorted and joined
    by commas; None when any is unknown or there is none."""
    found = list(signatures)
    if not found or any(s is None for s in found):
        return None
    distinct = sorted(set(found))
    if len(distinct) == 1:
        return distinct[0]
    return hashlib.md5(",".join(distinct).encode("ascii")).hexdigest()


# --- how the queries met ---------------------------------------------------------------------

QUERY_COUNTS_SQL = """
    SELECT run_q.run_id,
           (SELECT count(DISTINCT query_id) FROM judgments WHERE qrels_id = :qrels_id)
               AS qrels_queries,
           count(*) AS run_queries,
           count(qrels_q.query_id) AS common
    FROM (SELECT DISTINCT run_id, query_id FROM run_rows WHERE run_id = ANY(:run_ids)) AS run_q
    LEFT JOIN (SELECT DISTINCT query_id FROM judgments WHERE qrels_id = :qrels_id) AS qrels_q
        ON qrels_q.query_id = run_q.query_id
    GROUP BY run_q.run_id
    """
"""For each run of ``:run_ids`` that holds rows: the qrels set's queries, the run's and the
queries both hold, in one statement for every run (:func:`query_counts`)."""

_QRELS_QUERIES = "SELECT count(DISTINCT query_id) FROM judgments WHERE qrels_id = :qrels_id"

_TIED_PAIRS = "SELECT id, tied_pairs FROM runs WHERE id IN (SELECT unnest(:run_ids))"

_COUNT_TIES = """
    SELECT coalesce(sum(n - 1), 0) FROM (
        SELECT count(*) AS n FROM run_rows WHERE run_id = :run_id GROUP BY query_id, score
    ) AS score_groups
    """


def query_counts(
    store, run_ids: Iterable[int], qrels_id: int, missing_queries: str, *, will_compute=False
) -> dict[int, QueryCounts]:
    """How each run's queries and the qrels set's queries met (see :class:`QueryCounts`) in
    ``store``, by run id; ``will_compute``: the rows are about to be evaluated (a server's
    are counted where the engine will read them). Two statements, however many runs."""
    run_ids = [int(run_id) for run_id in dict.fromkeys(run_ids)]
    if not run_ids:
        return {}
    with store.rows_connection(run_ids, qrels_id, load=will_compute) as conn:
        met = queries_met(conn, run_ids, qrels_id)
    with store.connect() as conn:
        tied = dict(conn.execute(_TIED_PAIRS, {"run_ids": run_ids}).all())
        for run_id, pairs in tied.items():
            if pairs is None:  # a run stored before migration 0004, or by trec-eval
                tied[run_id] = conn.execute(_COUNT_TIES, {"run_id": run_id}).scalar_one()
    return {run_id: counts_of(met[run_id], tied[run_id], missing_queries) for run_id in run_ids}


def queries_met(conn, run_ids: list[int], qrels_id: int) -> dict[int, tuple[int, int, int]]:
    """For each run of ``run_ids``, on ``conn`` where the rows are: (the qrels set's queries,
    the run's, the queries both hold), the three counts :func:`counts_of` takes."""
    found = conn.execute(QUERY_COUNTS_SQL, {"run_ids": run_ids, "qrels_id": qrels_id}).all()
    met = {row[0]: tuple(row[1:]) for row in found}
    if len(met) < len(run_ids):  # a run without rows: none of its queries met the qrels
        qrels_queries = conn.execute(_QRELS_QUERIES, {"qrels_id": qrels_id}).scalar_one()
        met.update({run_id: (qrels_queries, 0, 0) for run_id in run_ids if run_id not in met})
    return met


def counts_of(found: tuple, tied_pairs: int, missing_queries: str) -> QueryCounts:
    """The counts from the qrels set's queries, the run's and the queries both hold (a row of
    :data:`QUERY_COUNTS_SQL` after its run id) and the run's tied pairs."""
    qrels_queries, run_queries, common = (int(n) for n in found)
    missing_from_run = qrels_queries - common
    evaluated = common if missing_queries == "skip" else qrels_queries
    return QueryCounts(
        evaluated=evaluated,
        missing_from_run=missing_from_run,
        ignored=run_queries - common,
        tied_pairs=int(tied_pairs),
    )


# --- the interval of each stored mean --------------------------------------------------------

INTERVAL_KEYS = ("mean_low", "mean_high")
"""The keys each aggregate row gains: the bounds of the interval of its mean."""

NUM_Q = "num_q"
"""History's column of the number of queries."""

_STORED_VALUES = """
    SELECT v.evaluation_id, v.query_id, v.value
    FROM evaluation_values v
    JOIN evaluations e ON e.id = v.evaluation_id
    WHERE v.evaluation_id = ANY(:ids) AND e.aggregate = 'mean'
    """


def stored_summaries(conn, evaluation_ids: Iterable[int]) -> dict[int, Summary]:
    """Per stored evaluation averaged over the queries: n, mean and sample standard deviation
    of its per-query values (NaN left out), in query-id byte order. Evaluations of other
    aggregates are absent.

    Args:
        conn: a connection of the store (:meth:`Backend.connect`).
        evaluation_ids: the evaluations' ids.
    """
    ids = sorted({int(i) for i in evaluation_ids})
    if not ids:
        return {}
    grouped: dict[int, list[tuple[str, float]]] = {}
    for evaluation_id, query, value in conn.execute(_STORED_VALUES, {"ids": ids}).all():
        if value is not None and not math.isnan(value):
            grouped.setdefault(int(evaluation_id), []).append((str(query), float(value)))
    return {key: summarize(_in_query_order(pairs)) for key, pairs in grouped.items()}


def value_summaries(
    values: PerQueryValues, aggregates: Mapping[str, str]
) -> dict[tuple[str, str], Summary]:
    """(run, measure) -> the summary of its per-query values held in memory, in query-id
    byte order, for the measures ``aggregates`` (measure -> ``mean``, ``sum``, ``gmean``)
    says are averaged."""
    grouped: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for run, query, measure, value in zip(
        values.run, values.query, values.measure, values.value, strict=True
    ):
        if aggregates.get(measure) == "mean" and value is not None and not math.isnan(value):
            grouped.setdefault((run, measure), []).append((query, value))
    return {key: summarize(_in_query_order(pairs)) for key, pairs in grouped.items()}


def _in_query_order(pairs: list[tuple[str, float]]) -> list[float]:
    """The values of (query id, value) pairs in query-id byte order (a server's collation
    may have returned them in another)."""
    keys = [query.encode("utf-8", "surrogatepass") for query, _ in pairs]
    if all(a < b for a, b in zip(keys, keys[1:], strict=False)):
        return [value for _, value in pairs]
    order = sorted(range(len(pairs)), key=keys.__getitem__)
    return [pairs[i][1] for i in order]


def interval_bounds(summary: Summary | None, level: float) -> tuple[float, float]:
    """(low, high) of the t interval of a mean from its summary; NaN, NaN without one."""
    if summary is None or summary.n < 2 or math.isnan(summary.sd):
        return math.nan, math.nan
    found = t_interval(summary, level)
    return found.low, found.high


def with_intervals(
    rows: Sequence[dict[str, Any]],
    summaries: Mapping[Any, Summary],
    key,
    level: float,
) -> list[dict[str, Any]]:
    """``rows`` (aggregate rows) each with ``mean_low`` and ``mean_high`` at ``level``;
    ``key(row)`` finds a row's summary in ``summaries``.

    Raises:
        RankhouseError: a level outside (0, 1).
    """
    check_level(level)
    found = []
    for row in rows:
        low, high = interval_bounds(summaries.get(key(row)), level)
        found.append({**row, "mean_low": low, "mean_high": high})
    return found


def interval_columns(measures: Sequence[str]) -> list[str]:
    """The bound columns of ``measures``: ``AP low``, ``AP high``, ..."""
    return [measure + suffix for measure in measures for suffix in INTERVAL_SUFFIXES]


def with_spread(
    conn,
    found: Rows,
    measures: Sequence[str],
    level: float,
    evaluations: dict[tuple[str, str, str], tuple[int, int]],
) -> Rows:
    """``found`` (history's rows) with ``num_q`` before the first measure and each measure's
    bounds after it, at ``level``. ``evaluations``: (run, qrels set, label) -> (``num_q``,
    evaluation id) of the values shown, as history read them.

    Raises:
        RankhouseError: a level outside (0, 1).
    """
    check_level(level)
    position = {name: i for i, name in enumerate(found.columns)}
    first = next((position[m] for m in measures if m in position), None)
    if first is None:
        return found
    summaries = stored_summaries(conn, (ids[1] for ids in evaluations.values()))
    columns: list[str] = []
    for index, name in enumerate(found.columns):
        if index == first:
            columns.append(NUM_Q)
        columns.append(name)
        if name in measures:
            columns += [name + suffix for suffix in INTERVAL_SUFFIXES]
    rows = [
        _widened(row, found.columns, first, measures, evaluations, summaries, level)
        for row in found.rows
    ]
    return Rows(columns, rows)


def _widened(
    row: tuple[Any, ...],
    columns: list[str],
    first: int,
    measures: Sequence[str],
    evaluations: dict[tuple[str, str, str], tuple[int, int]],
    summaries: dict,
    level: float,
) -> tuple[Any, ...]:
    record = dict(zip(columns, row, strict=True))
    mine = {m: evaluations.get((record["run"], record["qrels"], m)) for m in measures}
    counts = [found[0] for found in mine.values() if found is not None]
    line: list[Any] = []
    for index, (name, value) in enumerate(zip(columns, row, strict=True)):
        if index == first:
            line.append(max(counts) if counts else None)
        line.append(value)
        if name in measures:
            found = mine[name]
            low, high = interval_bounds(summaries.get(found[1]) if found else None, level)
            line += [_or_none(low), _or_none(high)]
    return tuple(line)


def _or_none(value: float) -> float | None:
    return None if value != value else value  # a missing bound is None, as history's values
