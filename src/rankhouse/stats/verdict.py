"""The verdict on a run against its baseline for one measure, in words a reader can trust:
**better**, **worse**, **equivalent** or **inconclusive**, with the numbers behind it.

Given the paired differences d = run - baseline (n pairs, mean d-bar, sample standard
deviation s), the p-value of the paired test (after the correction for multiple testing),
``alpha``, an optional practical ``margin`` (absolute, in the measure's units) and the
measure's direction (+1 when higher is better, -1 when lower is:
:func:`rankhouse.measures.best.direction`), the first rule that holds decides:

1. fewer than two pairs: **inconclusive** (no test is possible);
2. **better** / **worse**: the p-value is at most ``alpha`` and the mean difference lies on
   the better / worse side; with a margin, also the (1 - alpha) t interval of the
   difference lies entirely beyond the margin on that side (for higher-is-better and
   better: low >= +margin; worse: high <= -margin; mirrored when lower is better). The
   (1 - alpha) interval is the two-sided test's own at ``alpha``; it is not widened for
   multiplicity (pass a smaller ``alpha`` for that);
3. **equivalent** (a margin is given): the (1 - 2 alpha) t interval lies inside [-margin,
   +margin]. That is Schuirmann's two one-sided tests (TOST; J. Pharmacokin. Biopharm. 15,
   1987): H0: d-bar <= -margin and H0: d-bar >= +margin each rejected by a one-sided t-test
   at ``alpha``, which is the same as the (1 - 2 alpha) interval inside the margins (each
   one-sided test at alpha excludes one tail of alpha; together, 2 alpha; Walker &
   Nowacki, J. Gen. Intern. Med. 26, 2011). The equivalence test is not corrected for
   multiplicity;
4. otherwise **inconclusive**: neither a difference nor its absence is shown. The verdict
   then states the minimum detectable effect, the smallest true difference the two-sided
   paired t-test at ``alpha`` would find with probability ``power`` (0.8 unless told) at
   this n and this s (:mod:`rankhouse.stats.power`; every verdict carries it).

Bounds compare with ``>=`` and ``<=``, as a p-value at most ``alpha`` is significant; all
intervals are Student's t (:mod:`rankhouse.stats.intervals`), whatever test gave the
p-value. The word never says "improved" for noise: a run whose mean is higher but not
significantly so is inconclusive, and :attr:`Verdict.change` says which way the mean moved
("higher", "lower", "unchanged"; "unknown" without pairs) whatever the verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .checks import check_alpha, check_direction, check_margin
from .effect_size import effect_size
from .intervals import Interval, t_interval
from .power import DEFAULT_POWER, minimum_detectable_effect
from .summary import Summary, as_summary

VERDICTS = ("better", "worse", "equivalent", "inconclusive")
"""The verdict words."""


@dataclass(frozen=True)
class Verdict:
    """A run against its baseline on one measure: the word and the numbers behind it.

    Attributes:
        word: ``'better'``, ``'worse'``, ``'equivalent'`` or ``'inconclusive'``.
        reason: why, in words.
        change: which way the mean moved: ``'higher'``, ``'lower'``, ``'unchanged'``, or
            ``'unknown'`` without pairs.
        n: the number of query pairs.
        mean_difference: run minus baseline, averaged over the pairs.
        sd: the standard deviation of the differences.
        p_value: the (corrected) p-value the verdict was given.
        alpha: the significance level.
        margin: the practical margin, or None.
        direction: +1 when higher is better, -1 when lower is.
        interval: the (1 - alpha) t interval of the mean difference.
        equivalence_interval: the (1 - 2 alpha) t interval (the TOST's).
        hedges_gz: the standardized effect size (:mod:`rankhouse.stats.effect_size`).
        minimum_detectable_effect: the smallest true difference the paired t-test at alpha
            detects with probability ``power`` at this n and sd.
        power: the power of the minimum detectable effect.
    """

    word: str
    reason: str
    change: str
    n: int
    mean_difference: float
    sd: float
    p_value: float
    alpha: float
    margin: float | None
    direction: int
    interval: Interval
    equivalence_interval: Interval
    hedges_gz: float
    minimum_detectable_effect: float
    power: float


def verdict(
    differences: Sequence[float] | Summary,
    p_value: float,
    *,
    alpha: float = 0.05,
    margin: float | None = None,
    direction: int = 1,
    power: float = DEFAULT_POWER,
) -> Verdict:
    """The verdict on a run against its baseline (see the module's rules).

    Args:
        differences: per-query run minus baseline (finite numbers, NaN pairs dropped by the
            caller), or their :class:`~rankhouse.stats.summary.Summary` (n, mean, sd).
        p_value: the paired test's two-sided p-value, corrected for multiple testing when
            there is a family; NaN is never significant.
        alpha: the significance level.
        margin: the practical margin in the measure's units (a relative margin is converted
            by the caller from the baseline's mean), or None for none.
        direction: +1 when higher is better, -1 when lower is.
        power: the power at which the minimum detectable effect is stated.

    Raises:
        RankhouseError: alpha outside (0, 1), a negative margin, a direction other than
            +1 or -1, power outside (alpha, 1), or a difference that is not a finite number.
    """
    check_alpha(alpha)
    check_margin(margin)
    check_direction(direction)
    summary = as_summary(differences)
    margin = None if margin is None else float(margin)
    interval = t_interval(summary, 1 - alpha)
    equivalence = t_interval(summary, 1 - 2 * alpha)
    word, reason = _decide(summary, p_value, alpha, margin, direction, interval, equivalence)
    return Verdict(
        word=word,
        reason=reason,
        change=_change(summary.mean),
        n=summary.n,
        mean_difference=summary.mean,
        sd=summary.sd,
        p_value=float(p_value),
        alpha=alpha,
        margin=margin,
        direction=direction,
        interval=interval,
        equivalence_interval=equivalence,
        hedges_gz=effect_size(summary).hedges_gz,
        minimum_detectable_effect=minimum_detectable_effect(
            summary.n, summary.sd, alpha=alpha, power=power
        ),
        power=power,
    )


def _decide(
    summary: Summary,
    p_value: float,
    alpha: float,
    margin: float | None,
    direction: int,
    interval: Interval,
    equivalence: Interval,
) -> tuple[str, str]:
    if summary.n < 2:
        return "inconclusive", "fewer than two pairs: no test is possible"
    significant = not math.isnan(p_value) and p_value <= alpha
    # The difference on the "better" scale: positive when the run is better.
    gain = direction * summary.mean
    better_low, better_high = sorted((direction * interval.low, direction * interval.high))
    if significant and gain != 0:
        word = "better" if gain > 0 else "worse"
        if margin is None:
            return word, f"significant, on the {word} side"
        beyond = better_low >= margin if gain > 0 else better_high <= -margin
        if beyond:
            return word, f"significant, and the interval lies beyond the margin on the {word} side"
    if margin is not None and -margin <= equivalence.low and equivalence.high <= margin:
        return "equivalent", "the (1 - 2 alpha) interval lies inside plus or minus the margin"
    if significant and gain != 0:
        return "inconclusive", "significant, but the interval reaches inside the margin"
    if significant:
        return "inconclusive", "significant, but the mean difference is 0"
    if margin is None:
        return "inconclusive", "not significant, and no margin to show equivalence"
    return "inconclusive", "not significant, and the interval reaches beyond the margin"


def _change(mean: float) -> str:
    if math.isnan(mean):
        return "unknown"
    if mean == 0:
        return "unchanged"
    return "higher" if mean > 0 else "lower"
