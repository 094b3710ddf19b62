"""Each gated measure's verdict: the paired difference, its interval, Hedges' g_z, the
verdict word, its status in the gate's mode, whether it fails the gate, and its margin:
given, or calibrated from the system's own nightly noise, and what it means.

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

**The calibration.** Margins not given come from the system's own noise: each measure's
night-to-night spread, the margin that follows from the check's false-alarm target, and what
a margin means.

**The spread.** An unchanged system still moves from night to night (a new index build, a
sampled model, a shuffled shard). Its spread is the standard deviation of the per-query
differences between two of its nights, pooled over the pairs of nights the warehouse holds
(:func:`nightly_spread`):

* consecutive nights of the system's series (its runs on the gate's qrels set in the order
  they were stored) that both passed their gate (their first check against the qrels set:
  the night as it was judged when new; a first night passes as such), and
* replicate runs: nights of one commit (``--meta commit=...``) that both passed,

each pair's differences taken about their own mean (a pair's shift is what the gate tests,
not what it is calibrated on) and the squares pooled over the newest :data:`WINDOW` pairs
(``s^2 = sum (d - d-bar_pair)^2 / sum (n_pair - 1)``). Only evaluations on tonight's inputs
count (the same input signature). A night that failed breaks the chain on both sides, so a
lasting drop never enters the calibration.

**The margin.** The check's false-alarm target (:data:`rankhouse.defaults.DEFAULT_FALSE_ALARM`,
1 % of unchanged nights for the whole check) is spread evenly over its measures (Bonferroni:
with m measures each fails an unchanged night with probability at most target / m, so the check
at most the target, whatever their correlation). Each measure's margin is the one at which the
non-inferiority test fails an unchanged night with exactly that probability
(:func:`rankhouse.stats.verdicts.calibrated_margin`: a noncentral t computation, with the spread
against the reference and tonight's number of queries). The reference is the per-query mean of K
nights (:func:`rankhouse.regress.baselines.reference_pool`), and against the mean of K nights
the differences spread sqrt((1 + 1 / K) / 2) times as much as between two nights. Until
:data:`MIN_NIGHTS` nightly differences are stored the gate is *calibrating*: the margin then
comes from tonight's own queries, ``s / sqrt(n) * (t_{1-alpha} + t_{1-target})``
(:func:`t_test_margin`), which makes the test exactly the one-sided t-test of a drop at the
measure's target. A margin given by the user wins; the gate then says how often it fails
unchanged nights, and warns when that is above the check's target.

**What a check means.** Every measure's row carries its margin's source, the spread and how
many nightly differences it pooled, the expected false-alarm rate, and the drop it catches on
the first night with probability 0.8 (:func:`rankhouse.stats.verdicts.detectable_drop`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..backends.base import store_of
from ..catalog import TREC_EVAL_COPY
from ..columns import VERDICT_COLUMNS
from ..compare.options import MarginSetting
from ..errors import MeasureError, count
from ..lazy import numpy as np
from ..measures import parse_measures
from ..measures.model import direction
from ..pairing import paired_arrays, paired_comparison
from ..stats import correct, effect_size, gate_status, summarize, t_interval, verdict
from ..stats.estimates import t_quantile
from ..stats.verdicts import DEFAULT_POWER, calibrated_margin, detectable_drop, gate_fail_rate
from .baselines import first_checks
from .options import GatedMeasures


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
            (:func:`nightly_spread`); None: calibrate on
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


# --- the margin, calibrated from the system's nightly noise --------------------------------------

MIN_NIGHTS = 5
"""Nightly differences (pairs of passed nights) needed before the spread is taken from
history; until then the gate is calibrating and takes it from tonight's queries."""

WINDOW = 30
"""The newest pairs of nights the spread pools (it follows the system as it changes)."""

GIVEN, CALIBRATED, TONIGHT = "given", "calibrated", "tonight"
"""Where a margin came from: the user, the system's nightly history, tonight's queries."""


@dataclass(frozen=True)
class Spread:
    """The night-to-night spread of one measure's per-query differences.

    Attributes:
        sd: the pooled standard deviation of the per-query differences of two nights.
        nights: the pairs of nights pooled (consecutive passed nights and replicates).
        replicates: of those, the pairs of one commit that are not consecutive.
    """

    sd: float
    nights: int
    replicates: int = 0


@dataclass(frozen=True)
class MeasureCalibration:
    """What one measure's margin is and means in tonight's check.

    Attributes:
        margin: in the measure's units (NaN when none can be set).
        source: :data:`GIVEN`, :data:`CALIBRATED` or :data:`TONIGHT`.
        spread: the standard deviation of nightly per-query differences the figures use.
        nights: the nightly differences behind ``spread`` (0: tonight's queries).
        false_alarm: the expected share of unchanged nights this measure fails.
        detectable_drop: the drop it fails on the first night with probability 0.8.
        warning: a margin the data cannot show, in words; None otherwise.
    """

    margin: float
    source: str
    spread: float
    nights: int
    false_alarm: float
    detectable_drop: float
    warning: str | None = None


def per_measure_target(false_alarm: float, measures: int) -> float:
    """Each measure's share of the check's false-alarm target (Bonferroni)."""
    return false_alarm / max(1, measures)


def calibrate(
    label: str,
    given: float | None,
    history: Spread | None,
    tonight_sd: float,
    n: int,
    *,
    alpha: float,
    target: float,
    check_target: float,
    pooled: int = 1,
) -> MeasureCalibration:
    """The margin of one measure and what it means.

    Args:
        label: the measure's label (for the warning).
        given: the margin the user gave, in the measure's units; None to calibrate.
        history: the nightly spread from history, or None when there is too little.
        tonight_sd: the standard deviation of tonight's per-query differences.
        n: tonight's paired queries.
        alpha: the non-inferiority test's level.
        target: this measure's false-alarm target.
        check_target: the whole check's (for the warning).
        pooled: the nights the reference pools (1: a single run). Against the mean of K
            nights the differences spread as sqrt((1 + 1 / K) / 2) times two nights' do.
    """
    if history is not None and history.nights >= MIN_NIGHTS and history.sd > 0:
        spread, nights = history.sd * math.sqrt((1 + 1 / pooled) / 2), history.nights
    else:  # calibrating (or a system whose nights never differ): tonight's queries
        spread, nights = tonight_sd, 0
    if given is not None:
        margin, source = float(given), GIVEN
    elif nights:
        margin = calibrated_margin(spread, n, alpha=alpha, false_alarm=target)
        source = CALIBRATED
    else:
        # tonight's own spread: the margin that makes the test the one-sided t-test of a
        # drop at the target, exactly (the bound below -margin when the t statistic of the
        # mean difference is below -t_{1 - target, n - 1})
        margin, source = t_test_margin(spread, n, alpha=alpha, false_alarm=target), TONIGHT
    false_alarm = (
        target if source == TONIGHT else gate_fail_rate(0.0, margin, spread, n, alpha=alpha)
    )
    caught = detectable_drop(margin, spread, n, alpha=alpha, power=DEFAULT_POWER)
    warning = None
    if source == GIVEN and not math.isnan(false_alarm) and false_alarm > check_target:
        fitting = calibrated_margin(spread, n, alpha=alpha, false_alarm=target)
        basis = (
            f"a night-to-night spread of {spread:.3g} ({count(nights, 'nightly difference')})"
            if nights
            else f"tonight's spread of {spread:.3g}"
        )
        warning = (
            f"{label}: with {count(n, 'query')} and {basis}, a margin of {margin:g} fails "
            f"unchanged runs about {_percent(false_alarm)} of the time (the calibrated margin, "
            f"{fitting:.3g}, about {_percent(target)})"
        )
    return MeasureCalibration(
        margin=margin,
        source=source,
        spread=spread,
        nights=nights,
        false_alarm=false_alarm,
        detectable_drop=caught,
        warning=warning,
    )


def t_test_margin(sd: float, n: int, *, alpha: float, false_alarm: float) -> float:
    """``sd / sqrt(n) * (t_{1 - alpha, n - 1} + t_{1 - false_alarm, n - 1})``: with tonight's own
    standard deviation of the differences, the non-inferiority test at this margin fails
    exactly when the one-sided t-test finds a drop at ``false_alarm``. NaN below two
    queries."""
    if n < 2 or math.isnan(sd):
        return math.nan
    df = n - 1
    return sd / math.sqrt(n) * (t_quantile(df, 1 - alpha) + t_quantile(df, 1 - false_alarm))


def _percent(share: float) -> str:
    """0.93 -> ``93%``, 0.01 -> ``1%``, 0.005 -> ``0.5%``, 0.00012 -> ``0.012%``."""
    if share >= 0.995:
        return "100%"
    if share < 0.0001:
        return "under 0.01%"
    return f"{share * 100:.2g}%"


def describe_target(false_alarm: float) -> str:
    """``1%`` for 0.01: the target as the gate prints it."""
    return _percent(false_alarm)


_SERIES = (
    "SELECT id, metadata FROM runs WHERE system_tag = :tag AND id <> :id "
    "AND (ingested_at < :at OR (ingested_at = :at AND id < :id)) "
    "AND parse_options <> :trec_eval_copy ORDER BY ingested_at, id"
)

_EVALUATIONS = (
    "SELECT run_id, id FROM evaluations WHERE run_id = ANY(:ids) AND qrels_id = :qrels "
    "AND label = :label AND input_signature = :signature ORDER BY id"
)


def nightly_spread(
    wh,
    run_row: dict[str, Any],
    qrels_id: int,
    labels: list[str],
    signatures: dict[str, str | None],
) -> dict[str, Spread | None]:
    """The night-to-night spread of each label from the system's earlier nights (the module's
    rule); None for a label with no pair of nights on tonight's inputs.

    Args:
        run_row: tonight's run (its system's earlier runs are the history).
        qrels_id: the gate's qrels set.
        labels: the gated measures' labels.
        signatures: each label's input signature tonight.
    """
    store = store_of(wh)
    with store.connect() as conn:
        series = conn.execute(
            _SERIES,
            {
                "tag": run_row["system_tag"],
                "id": run_row["id"],
                "at": run_row["ingested_at"],
                "trec_eval_copy": TREC_EVAL_COPY,
            },
        ).all()
        ids = [int(row[0]) for row in series]
        checks = first_checks(conn, ids, qrels_id)
        good = {i for i in ids if i in checks and checks[i].passed}
        pairs = _pairs(ids, good, {int(row[0]): row[1] for row in series})
        found: dict[str, Spread | None] = {}
        for label in labels:
            found[label] = _pooled(conn, pairs, qrels_id, label, signatures.get(label))
    return found


def _pairs(ids: list[int], good: set[int], metadata: dict[int, str]) -> list[tuple[int, int, bool]]:
    """(earlier, later, replicate) pairs of passed nights, the newest :data:`WINDOW`."""
    pairs: dict[tuple[int, int], bool] = {}
    for earlier, later in zip(ids, ids[1:], strict=False):
        if earlier in good and later in good:
            pairs[(earlier, later)] = False
    by_commit: dict[str, list[int]] = {}
    for run_id in ids:
        commit = _commit(metadata.get(run_id))
        if commit and run_id in good:
            by_commit.setdefault(commit, []).append(run_id)
    for runs in by_commit.values():
        for earlier, later in zip(runs, runs[1:], strict=False):
            pairs.setdefault((earlier, later), True)
    position = {run_id: i for i, run_id in enumerate(ids)}
    newest = sorted(pairs, key=lambda pair: (position[pair[1]], position[pair[0]]))[-WINDOW:]
    return [(a, b, pairs[(a, b)]) for a, b in newest]


def _commit(metadata: str | None) -> str | None:
    try:
        meta = json.loads(metadata or "{}")
    except ValueError:
        return None
    commit = meta.get("commit") if isinstance(meta, dict) else None
    if isinstance(commit, str) and commit not in ("", "unknown"):
        return commit
    return None


def _pooled(conn, pairs, qrels_id: int, label: str, signature: str | None) -> Spread | None:
    if not pairs or signature is None:
        return None
    ids = sorted({run_id for a, b, _ in pairs for run_id in (a, b)})
    evaluation = {
        int(run_id): int(evaluation_id)
        for run_id, evaluation_id in conn.execute(
            _EVALUATIONS,
            {"ids": ids, "qrels": qrels_id, "label": label, "signature": signature},
        ).all()
    }  # oldest first: the newest evaluation of each run wins
    if not evaluation:
        return None
    values: dict[int, dict[str, float]] = {}
    for evaluation_id, query_id, value in conn.execute(
        "SELECT evaluation_id, query_id, value FROM evaluation_values "
        "WHERE evaluation_id = ANY(:ids)",
        {"ids": sorted(set(evaluation.values()))},
    ).all():
        if value is not None and value == value:
            values.setdefault(int(evaluation_id), {})[query_id] = float(value)
    squares, freedom, used, replicates = 0.0, 0, 0, 0
    for earlier, later, replicate in pairs:
        if earlier not in evaluation or later not in evaluation:
            continue
        a, b = values.get(evaluation[earlier], {}), values.get(evaluation[later], {})
        shared = sorted(a.keys() & b.keys())
        if len(shared) < 2:
            continue
        diff = np.asarray([b[q] - a[q] for q in shared], dtype=float)
        squares += float(np.sum((diff - diff.mean()) ** 2))
        freedom += len(shared) - 1
        used += 1
        replicates += int(replicate)
    if not used:
        return None
    return Spread(math.sqrt(squares / freedom), used, replicates)
