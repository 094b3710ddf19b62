"""Per-query values of two runs paired by query id, and what a paired test makes of them.

Pairs are always made by query id, never by position; a query whose value is NaN for either
run (trec_eval's ``-nan``) is left out. :mod:`rankhouse.compare` and :mod:`rankhouse.regress`
test the pairs with :mod:`rankhouse.stats`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .stats import DEFAULT_PERMUTATIONS, DEFAULT_SEED, PairedTest, paired_test

if TYPE_CHECKING:
    import pandas as pd

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
    import pandas as pd

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
    with wh.connect() as conn:
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


def paired_frame(per_query: pd.DataFrame, run: str, baseline: str, measure: str) -> pd.DataFrame:
    """One run's and the baseline's values of ``measure`` joined on query id, NaN pairs
    dropped: ``query_id, run_value, baseline_value`` in query-id byte order.

    Args:
        per_query: per-query values, :data:`PER_QUERY_COLUMNS`.
        run: the run (as named in ``per_query``).
        baseline: the baseline (as named in ``per_query``).
        measure: the measure's label.
    """
    return pairs_of(wide_values(per_query, measure), run, baseline)


def paired_frames(per_query: pd.DataFrame, baseline: str, measure: str) -> dict[str, pd.DataFrame]:
    """:func:`paired_frame` of every run other than the baseline (one pivot for all)."""
    wide = wide_values(per_query, measure)
    return {run: pairs_of(wide, run, baseline) for run in wide.columns if run != baseline}


def wide_values(per_query: pd.DataFrame, measure: str) -> pd.DataFrame:
    """The values of ``measure``, one row per query (in byte order), one column per run."""
    import pandas as pd

    of_measure = per_query[per_query["measure"] == measure]
    runs = list(pd.unique(of_measure["run"].to_numpy(dtype=object)))
    wide = of_measure.pivot(index="query", columns="run", values="value").reindex(columns=runs)
    keys = np.array([str(q).encode("utf-8") for q in wide.index], dtype=bytes)
    return wide.iloc[np.argsort(keys, kind="stable")]


def pairs_of(wide: pd.DataFrame, run: str, baseline: str) -> pd.DataFrame:
    """The pairs of two columns of :func:`wide_values` (rows with a NaN dropped)."""
    import pandas as pd

    pairs = wide[[run, baseline]].dropna()
    return pd.DataFrame(
        {
            "query_id": pairs.index.to_numpy(dtype=object),
            "run_value": pairs[run].to_numpy(dtype=float),
            "baseline_value": pairs[baseline].to_numpy(dtype=float),
        }
    )
