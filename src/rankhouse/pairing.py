"""Per-query values of two runs paired by query id, and what a paired test makes of them.

Pairs are always made by query id, never by position; a query whose value is NaN for either
run (trec_eval's ``-nan``) is left out. :mod:`rankhouse.compare` and :mod:`rankhouse.regress`
test the pairs with :mod:`rankhouse.stats`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .backends.base import store_of
from .lazy import numpy as np
from .lazy import pandas as pd
from .results import PerQueryValues
from .stats import DEFAULT_PERMUTATIONS, DEFAULT_SEED, PairedTest, paired_test

_PAIRED_VALUES = """
    SELECT r.query_id, r.value AS run_value, b.value AS baseline_value
    FROM evaluation_values r
    JOIN evaluation_values b ON b.query_id = r.query_id
    WHERE r.evaluation_id = :run_evaluation AND b.evaluation_id = :baseline_evaluation
    ORDER BY r.query_id
    """


@dataclass(frozen=True)
class PairedComparison:
    """One measure of one run against the baseline, over the queries both have values for."""

    num_paired: int
    improved: int
    degraded: int
    tied: int
    p_value: float


def paired_values(wh, run_evaluation: int, baseline_evaluation: int) -> pd.DataFrame:
    """Per-query values of two stored evaluations joined on query id, NaN pairs dropped.

    Returns:
        A DataFrame ``query_id, run_value, baseline_value`` ordered by query id.
    """
    queries, run_values, baseline_values = _paired_arrays(wh, run_evaluation, baseline_evaluation)
    return pd.DataFrame(
        {
            "query_id": pd.Series(queries, dtype=object),
            "run_value": run_values,
            "baseline_value": baseline_values,
        }
    )


def _paired_arrays(
    wh, run_evaluation: int, baseline_evaluation: int
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """:func:`paired_values` as (query ids, run values, baseline values), without pandas."""
    with store_of(wh).connect() as conn:
        rows = conn.execute(
            _PAIRED_VALUES,
            {
                "run_evaluation": int(run_evaluation),
                "baseline_evaluation": int(baseline_evaluation),
            },
        ).all()
    run_values = np.asarray([r[1] for r in rows], dtype=float)
    baseline_values = np.asarray([r[2] for r in rows], dtype=float)
    kept = ~(np.isnan(run_values) | np.isnan(baseline_values))
    queries = [r[0] for r, keep in zip(rows, kept, strict=True) if keep]
    return queries, run_values[kept], baseline_values[kept]


def paired_arrays(
    wh, run_evaluation: int, baseline_evaluation: int
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The per-query values of two stored evaluations paired by query id, NaN pairs dropped:
    (query ids, the run's values, the baseline's), in query-id order, without pandas."""
    return _paired_arrays(wh, run_evaluation, baseline_evaluation)


def paired_comparison(
    run_values: np.ndarray,
    baseline_values: np.ndarray,
    *,
    test: PairedTest = "t",
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """Counts and p-value of paired values (same query order, no NaN)."""
    return PairedComparison(
        num_paired=len(run_values),
        improved=int(np.sum(run_values > baseline_values)),
        degraded=int(np.sum(run_values < baseline_values)),
        tied=int(np.sum(run_values == baseline_values)),
        p_value=paired_test(
            run_values, baseline_values, test, permutations=permutations, seed=seed
        ),
    )


def compare_pair(
    wh,
    run_evaluation: int,
    baseline_evaluation: int,
    *,
    test: PairedTest = "t",
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """Counts and p-value of one run's evaluation against the baseline's, paired by query."""
    _, run_values, baseline_values = _paired_arrays(wh, run_evaluation, baseline_evaluation)
    return paired_comparison(
        run_values,
        baseline_values,
        test=test,
        permutations=permutations,
        seed=seed,
    )


def values_by_run(values: PerQueryValues, measure: str) -> dict[str, dict[str, float]]:
    """The per-query values of ``measure``: run -> {query id: value}, runs in the order
    ``values`` first gives them."""
    found: dict[str, dict[str, float]] = {}
    for run, query, name, value in zip(
        values.run, values.query, values.measure, values.value, strict=True
    ):
        if name == measure:
            found.setdefault(run, {})[query] = value
    return found


def values_by_measure(values: PerQueryValues) -> dict[str, dict[str, dict[str, float]]]:
    """:func:`values_by_run` of every measure at once (one pass over the values): measure ->
    run -> {query id: value}."""
    found: dict[str, dict[str, dict[str, float]]] = {}
    for run, query, name, value in zip(
        values.run, values.query, values.measure, values.value, strict=True
    ):
        found.setdefault(name, {}).setdefault(run, {})[query] = value
    return found


def paired(
    by_run: dict[str, dict[str, float]], run: str, baseline: str
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(query ids, ``run``'s values, ``baseline``'s values) of :func:`values_by_run`, for the
    queries both have a value for (NaN is none), in query-id byte order: the order a test
    sees them in."""
    mine, theirs = by_run.get(run, {}), by_run.get(baseline, {})
    both = [
        q for q, v in mine.items() if q in theirs and not (math.isnan(v) or math.isnan(theirs[q]))
    ]
    queries = sorted(both, key=lambda q: q.encode("utf-8"))
    return (
        queries,
        np.asarray([mine[q] for q in queries], dtype=float),
        np.asarray([theirs[q] for q in queries], dtype=float),
    )


def value_matrix(
    values: PerQueryValues, measure: str, runs: list[str]
) -> tuple[list[str], np.ndarray]:
    """The values of ``measure`` as a runs x queries matrix (one row per run of ``runs``, in
    that order) over the queries every run has a value for (NaN is none), in query-id byte
    order: what the analyses of many systems at once take (:func:`rankhouse.stats.all_pairs`,
    :func:`~rankhouse.stats.randomised_tukey_hsd`, :func:`~rankhouse.stats.two_way_anova`).

    Returns:
        (the query ids, the matrix); a matrix with no column when no query is common.
    """
    by_run = values_by_run(values, measure)
    tables = [by_run.get(run, {}) for run in runs]
    common = set(tables[0]) if tables else set()
    for table in tables[1:]:
        common &= table.keys()
    kept = [q for q in common if not any(math.isnan(table[q]) for table in tables)]
    queries = sorted(kept, key=lambda q: q.encode("utf-8"))
    matrix = np.asarray([[table[q] for q in queries] for table in tables], dtype=float)
    return queries, matrix.reshape(len(runs), len(queries))


def paired_frames(values: PerQueryValues, baseline: str, measure: str) -> dict[str, pd.DataFrame]:
    """:func:`paired` of every run other than the baseline, as DataFrames ``query_id,
    run_value, baseline_value`` (the report draws them)."""
    by_run = values_by_run(values, measure)
    frames = {}
    for run in by_run:
        if run == baseline:
            continue
        queries, run_values, baseline_values = paired(by_run, run, baseline)
        frames[run] = pd.DataFrame(
            {
                "query_id": pd.Series(queries, dtype=object),
                "run_value": run_values,
                "baseline_value": baseline_values,
            }
        )
    return frames
