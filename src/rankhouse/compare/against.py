"""What a comparison adds to each run's mean: the interval of the mean, and against a baseline,
per measure, the paired counts and test, the correction over the runs, the interval of the
paired difference, Hedges' g_z and the verdict; with a margin, also the nightly gate's word at
that margin (non-inferior, regressed, not shown: :func:`rankhouse.stats.gate_status`), so that
a comparison and the gate given the same margin say the same.

Intervals, effect sizes and verdicts are those of :mod:`rankhouse.stats`, over the per-query
values paired by query id (:mod:`rankhouse.pairing`). They are made for measures averaged
over the queries (``aggregate`` ``mean``): the difference of two sums (``num_rel_ret``) or of
two geometric means (``gm_map``) is not the mean of the per-query differences, so those rows
keep their means and p-values but get no interval, effect size or verdict. A measure that
ranks nothing (a count: :func:`rankhouse.measures.best.direction` 0) has no better or worse
and gets no verdict either, nor does any row when ``alpha`` is 0.5 or more (equivalence is
shown by the (1 - 2 alpha) interval, which then has no width to show it with).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..lazy import numpy as np
from ..measures.best import direction
from ..pairing import paired, paired_comparison, values_by_measure
from ..results import PerQueryValues
from ..stats import (
    correct,
    effect_size,
    gate_status,
    mean_interval,
    summarize,
    t_interval,
    verdict,
)
from .margins import MarginSetting
from .options import CompareOptions

COUNTS = ("num_paired", "improved", "degraded", "tied")

_TESTED_NUMBERS = ("delta", "delta_low", "delta_high", "hedges_gz", "margin", "mde")


def with_mean_intervals(
    rows: list[dict[str, Any]],
    values: PerQueryValues,
    options: CompareOptions,
    aggregates: Mapping[str, str],
) -> list[dict[str, Any]]:
    """``rows`` (run, measure, mean, num_q) with ``mean_low`` and ``mean_high``: the interval
    of the mean of each run's per-query values (NaN for a measure not averaged)."""
    by_measure = values_by_measure(values)
    found = []
    for row in rows:
        low = high = math.nan
        if aggregates.get(row["measure"]) == "mean":
            mine = by_measure.get(row["measure"], {}).get(row["run"], {})
            present = [v for v in mine.values() if not math.isnan(v)]
            interval = _interval(present, options)
            low, high = interval.low, interval.high
        found.append({**row, "mean_low": low, "mean_high": high})
    return found


def with_tests(
    rows: list[dict[str, Any]],
    values: PerQueryValues,
    baseline: str | None,
    options: CompareOptions,
    alpha: float,
    aggregates: Mapping[str, str],
    margins: Mapping[str, MarginSetting],
) -> list[dict[str, Any]]:
    """``rows`` with the test columns of :data:`~rankhouse.columns.COMPARE_COLUMNS`: empty
    without a baseline and on the baseline's own rows; else each run against the baseline,
    per measure, the p-values corrected over the runs of the measure, and the verdict on the
    corrected p-value."""
    rows = [
        {
            **row,
            "baseline": baseline,
            **dict.fromkeys(_TESTED_NUMBERS, math.nan),
            "verdict": None,
            "gate": None,
            "p_value": math.nan,
            "p_corrected": math.nan,
            "significant": None,
            **dict.fromkeys(COUNTS),
        }
        for row in rows
    ]
    if baseline is None:
        return rows
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["measure"], []).append(row)
    by_measure = values_by_measure(values)
    for measure, group in groups.items():
        base_mean = next(row["mean"] for row in group if row["run"] == baseline)
        others = [row for row in group if row["run"] != baseline]
        by_run = by_measure.get(measure, {})
        averaged = aggregates.get(measure) == "mean"
        margin = margins.get(measure)
        differences = {}
        for row in others:
            _, run_values, baseline_values = paired(by_run, row["run"], baseline)
            compared = paired_comparison(
                run_values,
                baseline_values,
                test=options.test,
                permutations=options.permutations,
                seed=options.seed,
            )
            row["delta"] = row["mean"] - base_mean
            row["num_paired"] = compared.num_paired
            row["improved"] = compared.improved
            row["degraded"] = compared.degraded
            row["tied"] = compared.tied
            row["p_value"] = compared.p_value
            if averaged:
                differences[row["run"]] = run_values - baseline_values
                _add_difference(row, differences[row["run"]], options)
            if margin is not None:
                row["margin"] = _or_nan(margin.absolute(base_mean))
        p_values = [row["p_value"] for row in others]
        corrected, reject = correct(p_values, options.correction, alpha=alpha)
        sign = direction(measure)
        for row, p_corrected, significant in zip(others, corrected, reject, strict=True):
            row["p_corrected"] = p_corrected
            row["significant"] = significant
            if averaged and sign != 0 and alpha < 0.5:
                _add_verdict(row, differences[row["run"]], alpha, sign)
    return rows


def _add_difference(row: dict[str, Any], differences: np.ndarray, options: CompareOptions):
    summary = summarize(differences)
    interval = _interval(differences, options, summary)
    row["delta_low"], row["delta_high"] = interval.low, interval.high
    row["hedges_gz"] = effect_size(summary).hedges_gz


def _add_verdict(row: dict[str, Any], differences: np.ndarray, alpha: float, sign: int):
    margin = None if math.isnan(row["margin"]) else row["margin"]
    found = verdict(
        summarize(differences), row["p_corrected"], alpha=alpha, margin=margin, direction=sign
    )
    row["verdict"] = found.word
    row["mde"] = found.minimum_detectable_effect
    if margin is not None:  # the gate's word at the same margin (rankhouse regress)
        row["gate"] = gate_status(summarize(differences), margin, alpha=alpha, direction=sign)[0]


def _interval(values, options: CompareOptions, summary=None):
    if options.interval == "t":
        return t_interval(summary or summarize(values), options.level)
    return mean_interval(
        values,
        options.level,
        method=options.interval,
        resamples=options.permutations,
        seed=options.seed,
    )


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)
