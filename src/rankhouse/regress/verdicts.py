"""Each gated measure's verdict: the paired difference, its interval, Hedges' g_z, the
verdict word, its status in the gate's mode, whether it fails the gate, and what its margin
means (:mod:`rankhouse.regress.calibration`).

Two modes (``regress --mode``):

* ``non_inferiority`` (the default) asks whether the run is shown to be no worse than its
  reference by more than the margin: the one-sided t-test of H0: mean difference <= -margin
  at level alpha, that is the lower limit of the two-sided (1 - 2 alpha) Student t interval
  of the mean paired difference (run minus baseline) at least -margin
  (:mod:`rankhouse.stats.verdicts`; Schuirmann 1987; Walker & Nowacki 2011). Each
  measure gets one of three statuses:

  - ``non_inferior``: shown (the bound is at least -margin): it passes;
  - ``regressed``: the evidence shows a drop: the bound lies below -margin **and** the whole
    (1 - 2 alpha) interval lies on the worse side of zero (the drop is significant at the
    one-sided level alpha). A night whose mean did not drop is never regressed;
  - ``not_shown``: the bound lies below -margin but the interval reaches the better side of
    zero: these queries cannot rule out a drop beyond the margin, nor show one. By default
    (``not_shown='auto'``) it fails the check when the margin was given (the user asked for
    that margin to be shown) and passes it, said so, when the margin was calibrated: then it
    only means that tonight's queries spread wider than the system's nights do, which on
    simulated nightly series was most of the unchanged nights that failed, and no real drop
    (benchmarks/gate_oc.py, docs/history.md). ``'fail'`` and ``'pass'`` decide it always.

  Over several measures the check passes only when every measure does (intersection-union:
  each test at alpha keeps the chance of passing a run worse than a margin on some measure at
  most alpha, with no correction). The false alarms are bounded by the calibrated margins,
  which split the check's false-alarm target over the measures. ``correction`` only adjusts
  the p-values shown and the verdict word.
* ``significance`` fails a measure when its mean moves to the worse side (the measure's
  direction: lower is better for some) by more than the tolerance **and** the change is
  significant after the correction over the check's measures (Holm unless told otherwise).

The margin of a measure is given after its name (``nDCG@10:0.01`` in the measure's units,
``AP:2%`` as a share of the reference's mean: the system's pinned reference when it has one,
else the baseline's), else ``max_drop`` (absolute, or a fraction with ``relative``), else it
is calibrated from the system's nightly history (non-inferiority only). Measures not averaged
over the queries (``sum``, ``gmean``) and measures that rank nothing (direction 0) have no
interval of the mean difference: they are gated by the significance rule in either mode.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..backends.base import store_of
from ..columns import VERDICT_COLUMNS
from ..compare.options import MarginSetting, parse_margin
from ..defaults import DEFAULT_GATE_MODE
from ..errors import InputError, MeasureError
from ..lazy import numpy as np
from ..measures import parse_measures
from ..measures.model import direction
from ..pairing import paired_arrays, paired_comparison
from ..stats import correct, effect_size, gate_status, summarize, t_interval, verdict
from .calibration import Spread, calibrate, per_measure_target

MODES = (DEFAULT_GATE_MODE, "significance")
"""The gate's modes; the first is the default."""

NOT_SHOWN_POLICIES = ("auto", "fail", "pass")
"""What a measure ``not_shown`` non-inferior does to the check: ``auto`` (the default) fails it
when its margin was given and passes it with a warning when the margin was calibrated;
``fail`` and ``pass`` always."""

# `nDCG@10:0.01`, `AP:2%`: a margin after the last colon (measure names hold none)
_WITH_MARGIN = re.compile(r"^(?P<measure>.+?):(?P<margin>\s*[0-9.eE+-]+%?\s*)$")


@dataclass(frozen=True)
class GatedMeasures:
    """The measures of a gate as given, without their margins, and each one's margin by
    canonical name (those without one take the default)."""

    texts: list[str]
    margins: dict[str, MarginSetting]
    default: MarginSetting | None

    def margin(self, name: str) -> MarginSetting | None:
        """The measure's margin as given (None: to calibrate)."""
        return self.margins.get(name, self.default)


def gated_measures(
    measures: Iterable[Any], max_drop: float | None, relative: bool
) -> GatedMeasures:
    """Split ``nDCG@10:0.01`` / ``AP:2%`` into the measure and its margin (``max_drop`` None:
    the measures without one are calibrated).

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
    default = None if max_drop is None else MarginSetting(float(max_drop), bool(relative))
    return GatedMeasures(texts, margins, default)


def measure_verdicts(
    store,
    aggregates: list[dict[str, Any]],
    run_id: int,
    baseline_id: int,
    gated: GatedMeasures,
    settings: Mapping[str, Any],
    history: Mapping[str, Spread | None] | None = None,
    reference_means: Mapping[str, float] | None = None,
    pool: Mapping[str, list[dict[str, Any]]] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """One row (:data:`~rankhouse.columns.VERDICT_COLUMNS`) per measure of ``aggregates``
    (evaluate's rows of the run and the baseline), and the warnings on margins the data
    cannot show.

    Args:
        history: each label's nightly spread from the system's history
            (:func:`rankhouse.regress.calibration.nightly_spread`); None: calibrate on
            tonight's queries.
        reference_means: each label's mean on the system's reference, the base of percent
            margins (else the baseline's mean).
        pool: each label's evaluate rows of the reference pool (the reference run first,
            then the nights pooled with it): the baseline's per-query values are their
            per-query means, its mean the mean of their means (measures averaged over the
            queries; the others weigh the reference run alone).
    """
    by_run: dict[int, dict[str, dict[str, Any]]] = {}
    for row in aggregates:
        by_run.setdefault(row["run_id"], {})[row["label"]] = row
    ours, theirs = by_run[run_id], by_run.get(baseline_id, by_run[run_id])
    labels = list(dict.fromkeys(row["label"] for row in aggregates))
    alpha = settings["alpha"]
    target = per_measure_target(settings["false_alarm"], len(labels))
    rows, differences, warnings = [], [], []
    for label in labels:
        mine, base = ours[label], theirs[label]
        run_value, baseline_value = float(mine["value"]), float(base["value"])
        members = (pool or {}).get(label, [])
        pooled = len(members) > 1 and _averaged(mine["measure"])
        if pooled:
            run_values, baseline_values = _pooled_pairs(store, mine, members)
            baseline_value = sum(float(m["value"]) for m in members) / len(members)
        else:
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
        sign = direction(label)
        worse_when_lower = sign >= 0  # measures that rank nothing: as higher is better
        setting = gated.margin(mine["measure"])
        base_mean = (reference_means or {}).get(label, baseline_value)
        given = None if setting is None else setting.absolute(base_mean)
        delta = run_value - baseline_value
        diff = run_values - baseline_values
        averaged = _averaged(mine["measure"])
        summary = summarize(diff)
        # the difference of two sums or geometric means is no mean of the differences
        interval = t_interval(summary if averaged else summarize([]), settings["level"])
        row = {
            "measure": label,
            "baseline_value": baseline_value,
            "run_value": run_value,
            "delta": delta,
            "delta_low": interval.low,
            "delta_high": interval.high,
            "drop": _drop(delta if worse_when_lower else -delta, base_mean, setting),
            "tolerance": math.nan if setting is None else setting.value,
            "margin": math.nan,
            "bound": math.nan,
            "hedges_gz": effect_size(summary).hedges_gz if averaged else math.nan,
            "num_q": paired.num_paired,
            "improved": paired.improved if worse_when_lower else paired.degraded,
            "degraded": paired.degraded if worse_when_lower else paired.improved,
            "p_value": paired.p_value,
            "run_evaluation_id": int(mine["evaluation_id"]),
            "baseline_evaluation_id": int(base["evaluation_id"]),
            "verdict": None,
            "margin_source": None,
            "spread": summary.sd,
            "spread_nights": 0,
            "false_alarm": math.nan,
            "detectable_drop": math.nan,
        }
        gated_by_interval = averaged and sign != 0 and settings["mode"] == "non_inferiority"
        if gated_by_interval:
            if setting is not None and given is None:
                pass  # a percent margin of a reference without a mean: nothing can be shown
            else:
                calibration = calibrate(
                    label,
                    given,
                    (history or {}).get(label),
                    summary.sd,
                    summary.n,
                    alpha=alpha,
                    target=target,
                    check_target=settings["false_alarm"],
                    pooled=len(members) if pooled else 1,
                )
                row |= {
                    "margin": calibration.margin,
                    "margin_source": calibration.source,
                    "spread": calibration.spread,
                    "spread_nights": calibration.nights,
                    "false_alarm": calibration.false_alarm,
                    "detectable_drop": calibration.detectable_drop,
                }
                if calibration.warning:
                    warnings.append(calibration.warning)
        elif given is not None:
            row |= {"margin": given, "margin_source": "given"}
        rows.append(row)
        differences.append((diff, averaged, sign, gated_by_interval))
    corrected, reject = correct(
        [row["p_value"] for row in rows], settings["correction"], alpha=alpha
    )
    for row, p_corrected, significant, (diff, averaged, sign, by_interval) in zip(
        rows, corrected, reject, differences, strict=True
    ):
        row["p_corrected"] = p_corrected
        row["significant"] = significant
        margin = None if math.isnan(row["margin"]) else row["margin"]
        if averaged and sign != 0 and alpha < 0.5:
            row["verdict"] = verdict(
                summarize(diff), p_corrected, alpha=alpha, margin=margin, direction=sign
            ).word
        if by_interval:
            status, row["bound"] = gate_status(summarize(diff), margin, alpha=alpha, direction=sign)
        else:
            status = _significance_status(row["delta"], row["drop"], row, significant, sign)
        row["status"] = status
        row["regressed"] = status == "regressed"
        row["fails"] = status == "regressed" or (
            status == "not_shown" and _not_shown_fails(settings.get("not_shown"), row)
        )
    return [{name: row[name] for name in VERDICT_COLUMNS} for row in rows], warnings


def _not_shown_fails(policy: str | None, row: Mapping[str, Any]) -> bool:
    """Whether a measure not shown non-inferior fails the check (:data:`NOT_SHOWN_POLICIES`)."""
    if policy in ("fail", "pass"):
        return policy == "fail"
    return row.get("margin_source") not in ("calibrated", "tonight")


def _pooled_pairs(store, mine: dict[str, Any], members: list[dict[str, Any]]):
    """The run's per-query values and the pool's per-query means, over the queries every
    evaluation has a value for (NaN left out), in query order."""
    ids = [int(mine["evaluation_id"]), *(int(m["evaluation_id"]) for m in members)]
    with store_of(store).connect() as conn:
        rows = conn.execute(
            "SELECT evaluation_id, query_id, value FROM evaluation_values "
            "WHERE evaluation_id = ANY(:ids)",
            {"ids": sorted(set(ids))},
        ).all()
    values: dict[int, dict[str, float]] = {}
    for evaluation_id, query_id, value in rows:
        if value is not None and value == value:
            values.setdefault(int(evaluation_id), {})[query_id] = float(value)
    run = values.get(ids[0], {})
    shared = set(run)
    for evaluation_id in ids[1:]:
        shared &= set(values.get(evaluation_id, {}))
    queries = sorted(shared)
    means = [sum(values[i][q] for i in ids[1:]) / len(ids[1:]) for q in queries]
    return np.asarray([run[q] for q in queries], dtype=float), np.asarray(means, dtype=float)


def _averaged(name: str) -> bool:
    try:
        return all(m.aggregate == "mean" for m in parse_measures([name]))
    except MeasureError:
        return False


def _drop(change: float, base_mean: float, setting: MarginSetting | None) -> float:
    """How much worse the run is (positive = worse, ``change`` on the higher-is-better
    scale), absolute, or relative to the reference's mean for a percent margin."""
    drop = -change
    if setting is None or not setting.relative or math.isnan(drop):
        return drop
    if base_mean == 0:
        return 0.0 if drop <= 0 else math.inf
    return drop / abs(base_mean)


def _significance_status(
    delta: float, drop: float, row: Mapping[str, Any], significant: bool, sign: int
) -> str:
    """The significance rule, in the measure's direction (lower is better when sign < 0)."""
    if math.isnan(delta) or delta == 0:
        return "unchanged"
    if drop < 0:
        return "improved"
    tolerance = 0.0 if math.isnan(row["tolerance"]) else row["tolerance"]
    if drop <= tolerance:
        return "within_tolerance"
    return "regressed" if significant else "not_significant"
