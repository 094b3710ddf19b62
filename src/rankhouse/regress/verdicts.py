"""Each gated measure's verdict: the paired difference, its interval, Hedges' g_z, the
verdict word, and whether it fails the gate in the gate's mode.

Two modes (``regress --mode``):

* ``non_inferiority`` (the default): a measure fails when the run cannot be shown to be no
  worse than the baseline by more than the margin: the lower limit of the two-sided
  (1 - 2 alpha) Student t interval of the mean paired difference (run minus baseline) lies
  below -margin. That is the one-sided t-test of H0: mean difference <= -margin at level
  alpha (:mod:`rankhouse.stats.noninferiority`; Schuirmann 1987; Walker & Nowacki 2011). A
  real drop the queries cannot show to be significant still fails, and an improvement
  whose interval reaches far below -margin fails too: the gate asks for evidence that
  nothing got worse, not for the absence of evidence that it did.
* ``significance`` (the only gate before migration 0011): a measure fails when its mean
  drops by more than the tolerance **and** the drop is significant (corrected p-value at
  most alpha).

The margin of a measure is given after its name (``nDCG@10:0.01`` in the measure's units,
``AP:2%`` as a share of the baseline's mean), else ``max_drop`` (absolute, or a fraction of
the baseline's mean with ``relative``). Measures not averaged over the queries (``sum``,
``gmean``) and measures that rank nothing (direction 0) have no interval of the mean
difference: they are gated by the significance rule in either mode.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..columns import VERDICT_COLUMNS
from ..compare.margins import MarginSetting, parse_margin
from ..errors import InputError, MeasureError
from ..measures import parse_measures
from ..measures.best import direction
from ..pairing import paired_arrays, paired_comparison
from ..stats import correct, effect_size, non_inferiority, summarize, t_interval, verdict

MODES = ("non_inferiority", "significance")
"""The gate's modes; the first is the default."""

# `nDCG@10:0.01`, `AP:2%`: a margin after the last colon (measure names hold none)
_WITH_MARGIN = re.compile(r"^(?P<measure>.+?):(?P<margin>\s*[0-9.eE+-]+%?\s*)$")


@dataclass(frozen=True)
class GatedMeasures:
    """The measures of a gate as given, without their margins, and each one's margin by
    canonical name (those without one take the default)."""

    texts: list[str]
    margins: dict[str, MarginSetting]
    default: MarginSetting

    def margin(self, name: str) -> MarginSetting:
        return self.margins.get(name, self.default)


def gated_measures(measures: Iterable[Any], max_drop: float, relative: bool) -> GatedMeasures:
    """Split ``nDCG@10:0.01`` / ``AP:2%`` into the measure and its margin.

    Raises:
        InputError: a margin that is neither a number at least 0 nor a percentage.
        MeasureError: an unknown measure.
    """
    texts, margins = [], {}
    for given in [measures] if isinstance(measures, str) else list(measures):
        if not isinstance(given, str):  # an ir_measures object or a Measure: no margin
            texts.append(given)
            continue
        match = _WITH_MARGIN.match(given)
        if match is None:
            texts.append(given)
            continue
        text = match.group("measure").strip()
        try:
            setting = parse_margin(match.group("margin"))
        except InputError:
            raise InputError(
                f"the margin of {given!r} is neither a number at least 0 nor a percentage",
                hint="write e.g. -m nDCG@10:0.01 (in the measure's units) or -m AP:2% (of the "
                "baseline's mean)",
            ) from None
        texts.append(text)
        for measure in parse_measures([text]):
            margins[measure.name] = setting
    return GatedMeasures(texts, margins, MarginSetting(float(max_drop), bool(relative)))


def measure_verdicts(
    store,
    aggregates: list[dict[str, Any]],
    run_id: int,
    baseline_id: int,
    gated: GatedMeasures,
    settings: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """One row (:data:`~rankhouse.columns.VERDICT_COLUMNS`) per measure of ``aggregates``
    (evaluate's rows of the run and the baseline)."""
    by_run: dict[int, dict[str, dict[str, Any]]] = {}
    for row in aggregates:
        by_run.setdefault(row["run_id"], {})[row["label"]] = row
    ours, theirs = by_run[run_id], by_run.get(baseline_id, by_run[run_id])
    rows, differences = [], []
    for label in dict.fromkeys(row["label"] for row in aggregates):
        mine, base = ours[label], theirs[label]
        run_value, baseline_value = float(mine["value"]), float(base["value"])
        _, run_values, baseline_values = paired_arrays(
            store, mine["evaluation_id"], base["evaluation_id"]
        )
        paired = paired_comparison(
            run_values,
            baseline_values,
            test=settings["test"],
            permutations=settings["permutations"],
            seed=settings["seed"],
        )
        setting = gated.margin(mine["measure"])
        margin = setting.absolute(baseline_value)
        delta = run_value - baseline_value
        diff = run_values - baseline_values
        averaged = _averaged(mine["measure"])
        summary = summarize(diff)
        # the difference of two sums or geometric means is no mean of the differences
        interval = t_interval(summary if averaged else summarize([]), settings["level"])
        rows.append(
            {
                "measure": label,
                "baseline_value": baseline_value,
                "run_value": run_value,
                "delta": delta,
                "delta_low": interval.low,
                "delta_high": interval.high,
                "drop": _drop(delta, baseline_value, setting.relative),
                "tolerance": setting.value,
                "margin": math.nan if margin is None else margin,
                "bound": math.nan,
                "hedges_gz": effect_size(summary).hedges_gz if averaged else math.nan,
                "num_q": paired.num_paired,
                "improved": paired.improved,
                "degraded": paired.degraded,
                "p_value": paired.p_value,
                "run_evaluation_id": int(mine["evaluation_id"]),
                "baseline_evaluation_id": int(base["evaluation_id"]),
                "verdict": None,
            }
        )
        differences.append((diff, averaged, direction(label)))
    corrected, reject = correct(
        [row["p_value"] for row in rows], settings["correction"], alpha=settings["alpha"]
    )
    alpha = settings["alpha"]
    for row, p_corrected, significant, (diff, averaged, sign) in zip(
        rows, corrected, reject, differences, strict=True
    ):
        row["p_corrected"] = p_corrected
        row["significant"] = significant
        margin = None if math.isnan(row["margin"]) else row["margin"]
        status = _significance_status(row["delta"], row["drop"], row["tolerance"], significant)
        if averaged and sign != 0:
            if alpha < 0.5:
                row["verdict"] = verdict(
                    summarize(diff), p_corrected, alpha=alpha, margin=margin, direction=sign
                ).word
            if settings["mode"] == "non_inferiority":
                shown = (
                    None
                    if margin is None  # a relative margin of a baseline without a mean
                    else non_inferiority(summarize(diff), margin, alpha=alpha, direction=sign)
                )
                row["bound"] = math.nan if shown is None else shown.bound
                status = "non_inferior" if shown is not None and shown.passed else "regressed"
        row["status"] = status
        row["regressed"] = status == "regressed"
    return [{name: row[name] for name in VERDICT_COLUMNS} for row in rows]


def _averaged(name: str) -> bool:
    try:
        return all(m.aggregate == "mean" for m in parse_measures([name]))
    except MeasureError:
        return False


def _drop(delta: float, baseline_value: float, relative: bool) -> float:
    """How much worse the run is (positive = worse), absolute or relative to the baseline."""
    drop = -delta
    if not relative or math.isnan(drop):
        return drop
    if baseline_value == 0:
        return 0.0 if drop <= 0 else math.inf
    return drop / abs(baseline_value)


def _significance_status(delta: float, drop: float, tolerance: float, significant: bool) -> str:
    if math.isnan(delta) or delta == 0:
        return "unchanged"
    if delta > 0:
        return "improved"
    if drop <= tolerance:
        return "within_tolerance"
    return "regressed" if significant else "not_significant"
