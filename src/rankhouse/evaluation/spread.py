"""The interval of each stored mean: Student's t over the evaluation's per-query values.

A measure averaged over the queries (``aggregate`` ``mean``) gets the interval
mean +- t_{1 - (1 - level) / 2, n - 1} * s / sqrt(n) of :func:`rankhouse.stats.t_interval`,
where n, the mean and s (the sample standard deviation) are those of its stored per-query
values, NaN values (trec_eval's ``-nan``) left out, as ``compare`` leaves them out. A sum
(``num_rel_ret``) or a geometric mean (``gm_map``) is not a mean of the per-query values and
gets none (NaN bounds), nor does a mean over fewer than two values.

The values are summarized by :func:`rankhouse.stats.summarize` in query-id byte order,
whether they are stored (read back from ``evaluation_values``) or held in memory
(``rankhouse.evaluate`` on data): the same numbers, to the bit, whatever the store, the
database's threads or the order it returns rows in, and the same as ``compare``'s interval
of the mean. They agree with :func:`scipy.stats.t.interval` and
``ttest_1samp(...).confidence_interval()`` to about 1e-16. (The database's own ``avg`` and
``stddev_samp`` were tried first: summed by parallel threads, their last bits changed from
one run to the next.)

History (:func:`with_spread`): for every run and qrels set and every label shown, the
columns ``<label> low`` and ``<label> high`` follow each label, and ``num_q`` (the number of
queries the row's means are over; the largest when its labels differ, as ``AP`` and ``AP
[missing_queries=skip]`` of a run that misses queries do) comes before the first label.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..columns import INTERVAL_SUFFIXES, Rows
from ..results import PerQueryValues
from ..stats import Summary, check_level, summarize, t_interval

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


_EVALUATIONS = """
    SELECT le.run_name, le.qrels_name, le.measure, le.num_q, le.evaluation_id
    FROM latest_evaluations le
    WHERE le.measure = ANY(:labels) AND le.run_name = ANY(:runs)
    """


def interval_columns(measures: Sequence[str]) -> list[str]:
    """The bound columns of ``measures``: ``AP low``, ``AP high``, ..."""
    return [measure + suffix for measure in measures for suffix in INTERVAL_SUFFIXES]


def with_spread(conn, found: Rows, measures: Sequence[str], level: float) -> Rows:
    """``found`` (history's rows) with ``num_q`` before the first measure and each measure's
    bounds after it, at ``level``.

    Raises:
        RankhouseError: a level outside (0, 1).
    """
    check_level(level)
    position = {name: i for i, name in enumerate(found.columns)}
    first = next((position[m] for m in measures if m in position), None)
    if first is None:
        return found
    evaluations: dict[tuple[str, str, str], tuple[int, int]] = {}
    if found.rows:
        runs = sorted({str(run) for run in found.column("run")})
        params = {"labels": list(measures), "runs": runs}
        for run, qrels, label, num_q, evaluation_id in conn.execute(_EVALUATIONS, params).all():
            evaluations[(run, qrels, label)] = (int(num_q), int(evaluation_id))
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
