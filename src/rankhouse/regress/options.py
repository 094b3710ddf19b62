"""What a gate is asked: its settings, one object that the API and the CLI build and the
gate reads (:class:`GateOptions`), checked before any work; the gated measures, each with the
margin it may carry (``nDCG@10:0.01``, ``AP:2%``); and the order-drift bounds.

**The order-drift bounds**: ``--max-drift rbo@100:0.9`` fails the gate when the mean drift of
the run from its baseline is below the bound. A bound is ``measure@k:least``: ``rbo``
(extrapolated rank-biased overlap, persistence 0.9), ``tau`` or ``kendall_tau`` (Kendall's tau
of the documents both top k hold), ``tau_ap``, or ``overlap`` (|shared| / k); ``@k`` defaults
to 100. The drift is computed once and stored as ``compare --drift`` stores it
(:mod:`rankhouse.compare.drift`); a mean that cannot be computed (no query where both tau are
defined) fails.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..compare.drift import run_drift
from ..compare.options import MarginSetting, parse_margin
from ..defaults import (
    DEFAULT_FALSE_ALARM,
    DEFAULT_GATE_BASELINE,
    DEFAULT_GATE_MODE,
    DEFAULT_MAX_JUDGED_DROP,
)
from ..errors import InputError, Message, Option
from ..measures import parse_measures
from ..stats import (
    DEFAULT_DEPTH,
    DEFAULT_LEVEL,
    DEFAULT_PERMUTATIONS,
    DEFAULT_PERSISTENCE,
    DEFAULT_SEED,
    check_alpha,
    check_correction,
    check_level,
    check_resampling,
    check_test,
)

MODES = (DEFAULT_GATE_MODE, "significance")
"""The gate's modes; the first is the default."""

NOT_SHOWN_POLICIES = ("auto", "fail", "pass")
"""What a measure ``not_shown`` non-inferior does to the check: ``auto`` (the default) fails it
when its margin was given and passes it with a warning when the margin was calibrated;
``fail`` and ``pass`` always."""

# `nDCG@10:0.01`, `AP:2%`: a margin after the last colon (measure names hold none)
_WITH_MARGIN = re.compile(r"^(?P<measure>.+?):(?P<margin>\s*[0-9.eE+-]+%?\s*)$")


@dataclass(frozen=True)
class GateOptions:
    """How :func:`rankhouse.regress.regress` gates a run (every field has its default);
    :meth:`rankhouse.Warehouse.regress` and ``rankhouse regress`` build it from their keywords
    and options.

    Attributes:
        baseline: a run (name, id or file), or a rule: ``'previous'`` (the latest run of the
            same system tag ingested before ``run``), ``'last-passed'`` (the newest of those
            whose gate passed), ``'best'`` (the passed one with the highest mean of the
            first measure) or ``'reference'`` (the run pinned as the system's reference on
            ``qrels``, pinned now when there is none); :mod:`rankhouse.regress.baselines`.
        mode: ``'non_inferiority'`` (a measure passes when the lower limit of the (1 - 2
            alpha) t interval of the paired difference is at least -margin) or
            ``'significance'`` (fail when the change is to the worse side, beyond the
            margin, and significant).
        max_drop: the margin of the measures given without one (absolute, or a fraction
            of the reference's mean with ``relative``); None (the default): calibrated from
            the system's nightly history for ``false_alarm`` (non-inferiority), no
            tolerance (significance).
        relative: read ``max_drop`` as a fraction of the reference's mean.
        false_alarm: the share of unchanged nights the whole check may fail, spread over
            its measures; the calibrated margins follow from it.
        not_shown: what a measure not shown non-inferior (nor shown to regress) does to the
            check: ``'auto'`` (the default) fails it when its margin was given and passes it,
            said so, when the margin was calibrated; ``'fail'``, ``'pass'``: always.
        alpha: significance level: of the (corrected) p-values, and of the one-sided
            non-inferiority test.
        level: confidence level of the intervals of the differences shown.
        test: the paired test of the p-values (see :mod:`rankhouse.stats`).
        correction: correction over the measures of this check (Holm by default; in the
            non-inferiority mode it changes the p-values and verdict words shown, not the
            decision).
        permutations: resamples of the randomization and bootstrap tests.
        seed: seed of the randomization and bootstrap tests.
        relevance_level: as for evaluate.
        missing_queries: as for evaluate.
        max_drift: order-drift bounds (``'rbo@100:0.9'``, ``'tau@10:0.8'``,
            ``'overlap@100:0.8'``): fail when the run's mean drift from the baseline is
            below the bound.
        allow_missing_baseline: pass the first run of a system (stored as a check without
            a baseline: ``history`` shows its gate as ``first run``; with ``'reference'`` it
            becomes the system's reference) instead of raising NoBaselineError.
        new_system: ``'warn'`` (the default) or ``'fail'``: what ``allow_missing_baseline``
            does with a first run whose system tag is new while other systems are stored (a
            renamed run tag?): pass it with a warning naming the nearest known system, or
            raise NoBaselineError naming it.
        allow_input_change: gate against a baseline judged on other inputs (qrels
            content, queries, settings) instead of raising InputChangeError; the check
            records what differed.
        max_judged_drop: the holes rule (0..1): a run whose mean Judged@k (k the measure's
            cutoff, 10 without one) lies below the baseline's by more than this is warned
            of; a measure it fails is then ``unsettled``, not ``regressed``.
    """

    baseline: Any = DEFAULT_GATE_BASELINE
    mode: str = MODES[0]
    max_drop: float | None = None
    relative: bool = False
    false_alarm: float = DEFAULT_FALSE_ALARM
    not_shown: str = NOT_SHOWN_POLICIES[0]
    alpha: float = 0.05
    level: float = DEFAULT_LEVEL
    test: str = "t"
    correction: str = "holm"
    permutations: int = DEFAULT_PERMUTATIONS
    seed: int = DEFAULT_SEED
    relevance_level: int = 1
    missing_queries: str = "zero"
    max_drift: Iterable[str] | str | None = None
    allow_missing_baseline: bool = False
    new_system: str = "warn"
    allow_input_change: bool = False
    max_judged_drop: float = DEFAULT_MAX_JUDGED_DROP


def check_options(options: GateOptions) -> None:
    """Refuse settings out of range before the gate does any work.

    Raises:
        InputError: an unknown mode, ``not_shown`` or ``new_system``; alpha at least 0.5 in
            the non-inferiority mode; a negative ``max_drop``; a false-alarm target outside
            (0, 0.5).
        RankhouseError: an unknown test or correction, alpha or the level outside (0, 1),
            bad resampling settings.
    """
    o = options
    _check(o.mode, o.alpha, o.level, o.max_drop, o.test, o.correction, o.permutations, o.seed)
    _check_gate_policy(o.false_alarm, o.not_shown, o.new_system)
    if not 0 <= o.max_judged_drop <= 1:
        said = f" must lie between 0 and 1, not {o.max_judged_drop!r}"
        raise InputError(Message(Option("max_judged_drop"), said))


def _check(mode, alpha, level, max_drop, test, correction, permutations, seed) -> None:
    if mode not in MODES:
        raise InputError(
            f"mode must be one of {', '.join(MODES)}, not {mode!r}",
            hint="non_inferiority fails a measure unless it is shown no worse than the "
            "margin; significance fails it when a drop beyond the margin is significant",
        )
    check_test(test)
    check_correction(correction)
    check_alpha(alpha)
    check_level(level)
    check_resampling(permutations, seed)
    if mode == "non_inferiority" and not alpha < 0.5:
        raise InputError(
            f"alpha must be below 0.5 in the non-inferiority mode, got {alpha} (its bound is "
            "the lower limit of the (1 - 2 alpha) interval)"
        )
    if max_drop is not None and not max_drop >= 0:
        raise InputError(f"max_drop must be zero or positive, got {max_drop}", field="max_drop")


def _check_gate_policy(false_alarm: float, not_shown: str, new_system: str = "warn") -> None:
    if new_system not in ("warn", "fail"):
        raise InputError(f"new_system must be 'warn' or 'fail', not {new_system!r}")
    if not 0 < false_alarm < 0.5:
        raise InputError(
            f"the false-alarm target must lie between 0 and 0.5, got {false_alarm}",
            field="false_alarm",
            hint="it is the share of unchanged nights the whole check may fail, e.g. 0.01",
        )
    if not_shown not in NOT_SHOWN_POLICIES:
        raise InputError(
            f"not_shown must be one of {', '.join(NOT_SHOWN_POLICIES)}, not {not_shown!r}"
        )


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


# --- the order-drift bounds ----------------------------------------------------------------------

DRIFT_GATE_COLUMNS = ("measure", "k", "p", "value", "bound", "num_q", "drift_id", "passed")
"""Columns of a gate's drift rows (``RegressResult.drift_rows``, table ``regress_drift``)."""

_NAMES = {"rbo": "rbo", "tau": "kendall_tau", "kendall_tau": "kendall_tau"}
_NAMES |= {"tau_ap": "tau_ap", "overlap": "overlap"}
_BOUND = re.compile(r"^\s*(?P<name>[a-z_]+)\s*(?:@\s*(?P<k>\d+))?\s*:\s*(?P<bound>[-+0-9.eE]+)\s*$")


@dataclass(frozen=True)
class DriftBound:
    """One ``--max-drift``: the drift measure, its depth and the least mean that passes."""

    measure: str
    k: int
    bound: float

    @property
    def text(self) -> str:
        return f"{self.measure}@{self.k}"


def drift_bounds(given: Iterable[str] | str | None) -> list[DriftBound]:
    """``rbo@100:0.9`` texts as bounds.

    Raises:
        InputError: a text that is not ``measure@k:bound`` with a known drift measure, k at
            least 1 and a bound within the measure's range.
    """
    found = []
    for text in [given] if isinstance(given, str) else list(given or []):
        match = _BOUND.match(str(text))
        name = _NAMES.get(match.group("name")) if match else None
        try:
            bound = float(match.group("bound")) if match else math.nan
        except ValueError:
            bound = math.nan
        k = int(match.group("k") or DEFAULT_DEPTH) if match else 0
        least = -1.0 if name in ("kendall_tau", "tau_ap") else 0.0
        if name is None or k < 1 or not least <= bound <= 1:
            raise InputError(
                f"--max-drift {text!r} is not a drift bound",
                hint="write measure@k:bound, e.g. rbo@100:0.9 (rbo, tau, tau_ap or overlap; "
                "bounds from 0 to 1, from -1 for the two tau)",
            )
        found.append(DriftBound(name, k, bound))
    return found


def drift_checks(store, run_id: int, baseline_id: int, bounds: list[DriftBound]) -> list[dict]:
    """One row (:data:`DRIFT_GATE_COLUMNS`) per bound: the run's mean drift from the
    baseline, computed once and stored, and whether it is at least the bound."""
    rows = []
    for bound in bounds:
        stored = run_drift(store, run_id, baseline_id, k=bound.k, p=DEFAULT_PERSISTENCE)
        means = stored.means()
        value = means.value(bound.measure)
        rows.append(
            {
                "measure": bound.text,
                "k": bound.k,
                "p": DEFAULT_PERSISTENCE,
                "value": value,
                "bound": bound.bound,
                "num_q": means.num_tau if "tau" in bound.measure else means.num_q,
                "drift_id": stored.drift_id,
                "passed": not math.isnan(value) and value >= bound.bound,
            }
        )
    return rows
