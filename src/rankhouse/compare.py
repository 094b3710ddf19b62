"""Compare runs on the same qrels: means, and paired significance tests against a baseline.

The per-query values come from stored evaluations (computed first when missing) and are
paired by query id in SQL, never by position. Queries where either value is NaN (trec_eval's
``-nan``) are left out of the pairs. The tests are those of :mod:`rankhouse.stats`; the
correction for multiple testing is applied per measure over the runs compared with the
baseline (the family of PyTerrier's ``Experiment``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .errors import InputError, RankhouseError
from .stats import (
    DEFAULT_PERMUTATIONS,
    DEFAULT_SEED,
    check_alpha,
    check_correction,
    check_test,
    correct,
    paired_test,
)

COLUMNS = (
    "run",
    "measure",
    "mean",
    "num_q",
    "baseline",
    "delta",
    "num_paired",
    "improved",
    "degraded",
    "tied",
    "p_value",
    "p_corrected",
    "significant",
)
"""Columns of :func:`compare`'s result, one row per run and measure."""

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
    """Per-query values of two evaluations joined on query id, NaN pairs dropped.

    Returns:
        A DataFrame ``query_id, run_value, baseline_value`` ordered by query id.
    """
    with wh.connect() as conn:
        rows = conn.execute(
            _PAIRED_VALUES,
            {
                "run_evaluation": int(run_evaluation),
                "baseline_evaluation": int(baseline_evaluation),
            },
        ).all()
    frame = pd.DataFrame(rows, columns=["query_id", "run_value", "baseline_value"])
    frame["run_value"] = frame["run_value"].astype(float)
    frame["baseline_value"] = frame["baseline_value"].astype(float)
    return frame.dropna(subset=["run_value", "baseline_value"]).reset_index(drop=True)


def compare_pair(
    wh,
    run_evaluation: int,
    baseline_evaluation: int,
    *,
    test: str = "t",
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """Counts and p-value of one run's evaluation against the baseline's, paired by query."""
    pairs = paired_values(wh, run_evaluation, baseline_evaluation)
    run_values = pairs["run_value"].to_numpy()
    baseline_values = pairs["baseline_value"].to_numpy()
    return PairedComparison(
        num_paired=len(pairs),
        improved=int(np.sum(run_values > baseline_values)),
        degraded=int(np.sum(run_values < baseline_values)),
        tied=int(np.sum(run_values == baseline_values)),
        p_value=paired_test(
            run_values, baseline_values, test, permutations=permutations, seed=seed
        ),
    )


def compare(
    wh,
    qrels: Any,
    runs: Any,
    measures: Iterable[Any],
    *,
    baseline: Any = None,
    test: str = "t",
    correction: str = "none",
    alpha: float = 0.05,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    relevance_level: int = 1,
    missing_queries: str = "zero",
) -> pd.DataFrame:
    """Means of several runs and, with a baseline, paired tests of each run against it.

    Args:
        wh: the :class:`~rankhouse.Warehouse`.
        qrels: a stored qrels set (name or id), a file path or a DataFrame.
        runs: runs as :func:`rankhouse.evaluation.evaluate` accepts them.
        measures: measure names (any accepted spelling) or Measure objects.
        baseline: the run the others are tested against (name, id or path); it need not
            be among ``runs`` (it is then listed first). None: means only.
        test: ``'t'``, ``'wilcoxon'``, ``'randomization'`` or ``'bootstrap'``
            (see :mod:`rankhouse.stats`).
        correction: ``'none'``, ``'bonferroni'``, ``'holm'`` or ``'bh'``, applied per
            measure over the runs other than the baseline.
        alpha: significance level of the corrected p-values.
        permutations: resamples of the randomization and bootstrap tests.
        seed: seed of the randomization and bootstrap tests.
        relevance_level: as for evaluate.
        missing_queries: as for evaluate.

    Returns:
        A DataFrame (a :class:`~rankhouse.display.ComparisonFrame`, which a notebook shows
        as the Experiment table) with :data:`COLUMNS`, one row per run and measure (runs in
        the order given, measures in request order). ``mean`` and ``num_q`` are the stored
        aggregate; ``delta`` is the run's mean minus the baseline's; ``num_paired`` counts
        the queries paired by id; ``improved``/``degraded``/``tied`` count those queries;
        the test columns are empty for the baseline itself and when no baseline is given.

    Raises:
        RankhouseError: an unknown test or correction, or alpha outside (0, 1).
        InputError: a baseline that stands for several runs (a multi-tag file).
        NotFoundError, MeasureError: as for evaluate.
    """
    from .evaluation import evaluate

    check_test(test)
    check_correction(correction)
    check_alpha(alpha)
    if permutations < 1:
        raise RankhouseError(f"permutations must be at least 1, got {permutations}")
    options = {"relevance_level": relevance_level, "missing_queries": missing_queries}
    result = evaluate(wh, qrels, runs, measures, **options)
    aggregates = result.aggregates
    baseline_id = None
    if baseline is not None:
        base = evaluate(wh, qrels, [baseline], measures, **options).aggregates
        if base["run_id"].nunique() != 1:
            raise InputError(
                f"the baseline {baseline!r} stands for {base['run_id'].nunique()} runs",
                hint="name one stored run (a file with several run tags holds several runs)",
            )
        baseline_id = int(base["run_id"].iloc[0])
        if baseline_id not in set(aggregates["run_id"]):
            aggregates = pd.concat([base, aggregates], ignore_index=True)
    rows = [
        {
            "run": row.run,
            "measure": row.label,  # the name with its settings: AP at level 2 is AP(rel=2)
            "mean": float(row.value),
            "num_q": int(row.num_q),
            "_run_id": int(row.run_id),
            "_evaluation_id": int(row.evaluation_id),
        }
        for row in aggregates.itertuples(index=False)
    ]
    frame = pd.DataFrame(rows)
    frame = _add_tests(
        wh,
        frame,
        baseline_id,
        test=test,
        correction=correction,
        alpha=alpha,
        permutations=permutations,
        seed=seed,
    )
    from .display import ComparisonFrame

    return ComparisonFrame(frame[list(COLUMNS)])


def _add_tests(
    wh,
    frame: pd.DataFrame,
    baseline_id: int | None,
    *,
    test: str,
    correction: str,
    alpha: float,
    permutations: int,
    seed: int,
) -> pd.DataFrame:
    frame = frame.copy()
    for name in ("baseline", "significant"):
        frame[name] = pd.Series([None] * len(frame), dtype=object)
    for name in ("delta", "p_value", "p_corrected"):
        frame[name] = np.nan
    for name in ("num_paired", "improved", "degraded", "tied"):
        frame[name] = pd.array([pd.NA] * len(frame), dtype="Int64")
    if baseline_id is None:
        return frame
    base_rows = frame[frame["_run_id"] == baseline_id].set_index("measure")
    frame["baseline"] = base_rows["run"].iloc[0]
    for measure, group in frame.groupby("measure", sort=False):
        base = base_rows.loc[measure]
        others = group.index[group["_run_id"] != baseline_id]
        for index in others:
            paired = compare_pair(
                wh,
                frame.at[index, "_evaluation_id"],
                base["_evaluation_id"],
                test=test,
                permutations=permutations,
                seed=seed,
            )
            frame.loc[index, "delta"] = frame.at[index, "mean"] - base["mean"]
            frame.loc[index, "num_paired"] = paired.num_paired
            frame.loc[index, "improved"] = paired.improved
            frame.loc[index, "degraded"] = paired.degraded
            frame.loc[index, "tied"] = paired.tied
            frame.loc[index, "p_value"] = paired.p_value
        corrected, reject = correct(frame.loc[others, "p_value"].tolist(), correction, alpha=alpha)
        for index, p_corrected, significant in zip(others, corrected, reject, strict=True):
            frame.loc[index, "p_corrected"] = p_corrected
            frame.at[index, "significant"] = significant
    return frame


def experiment_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The wide view of :func:`compare`'s result, one row per run (PyTerrier's Experiment).

    Columns: ``run``, then per measure its mean, and when a baseline was given
    ``<m> delta``, ``<m> +``, ``<m> -``, ``<m> p``, ``<m> p corr`` and ``<m> sig`` (True,
    False, or missing for the baseline itself: the ``significant`` column of the long form).
    """
    runs = list(dict.fromkeys(frame["run"]))
    measures = list(dict.fromkeys(frame["measure"]))
    indexed = frame.set_index(["run", "measure"])
    has_baseline = frame["baseline"].notna().any()
    columns: dict[str, Any] = {"run": runs}
    for measure in measures:
        part = indexed.xs(measure, level="measure").reindex(runs)
        columns[measure] = part["mean"].to_numpy(dtype=float)
        if has_baseline:
            columns[f"{measure} delta"] = part["delta"].to_numpy(dtype=float)
            columns[f"{measure} +"] = pd.array(part["improved"], dtype="Int64")
            columns[f"{measure} -"] = pd.array(part["degraded"], dtype="Int64")
            columns[f"{measure} p"] = part["p_value"].to_numpy(dtype=float)
            columns[f"{measure} p corr"] = part["p_corrected"].to_numpy(dtype=float)
            columns[f"{measure} sig"] = pd.array(
                [None if flag is None else bool(flag) for flag in part["significant"]],
                dtype="boolean",
            )
    # built in one step: a column at a time fragments a frame of many measures
    return pd.DataFrame(columns)
