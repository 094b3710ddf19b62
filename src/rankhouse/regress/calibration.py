"""The gate calibrated from the system's own noise: each measure's night-to-night spread, the
margin that follows from the check's false-alarm target, and what a margin means.

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
from dataclasses import dataclass
from typing import Any

from ..backends.base import store_of
from ..catalog import TREC_EVAL_COPY
from ..errors import count
from ..lazy import numpy as np
from ..stats.estimates import t_quantile
from ..stats.verdicts import DEFAULT_POWER, calibrated_margin, detectable_drop, gate_fail_rate
from .inputs import first_checks

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
