"""What the paired differences of a run against its baseline let one say, for one measure: the
verdict (**better**, **worse**, **equivalent** or **inconclusive**, with the numbers behind
it), non-inferiority at a margin (the nightly gate's question and its words), and the power
behind them (the minimum detectable effect; how often the gate fails a run).

**The verdict**, in words a reader can trust. Given the paired differences d = run - baseline
(n pairs, mean d-bar, sample standard deviation s), the p-value of the paired test (after the
correction for multiple testing), ``alpha``, an optional practical ``margin`` (absolute, in
the measure's units) and the measure's direction (+1 when higher is better, -1 when lower is:
:func:`rankhouse.measures.model.direction`), the first rule that holds decides:

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
   this n and this s (below; every verdict carries it).

Bounds compare with ``>=`` and ``<=``, as a p-value at most ``alpha`` is significant; all
intervals are Student's t (:func:`rankhouse.stats.t_interval`), whatever test gave the
p-value. The word never says "improved" for noise: a run whose mean is higher but not
significantly so is inconclusive, and :attr:`Verdict.change` says which way the mean moved
("higher", "lower", "unchanged"; "unknown" without pairs) whatever the verdict.

**Non-inferiority**: is the run no worse than the baseline minus a practical margin? The
question a nightly gate asks: "not significantly worse" is not "not worse" (with few queries a
real loss is often not significant), so the gate must show that any loss is smaller than the
margin, not merely fail to show that there is one. For a measure where higher is better
(df = n - 1), the run is non-inferior at ``alpha`` when the lower bound of the two-sided
(1 - 2 alpha) t interval of the mean difference,

    bound = d-bar - t_{1 - alpha, df} * s / sqrt(n),

is at least -margin. That is the one-sided paired t-test of H0: mean difference <= -margin
against H1: mean difference > -margin at level alpha (Schuirmann 1987: the one-sided half of
two one-sided tests; Walker & Nowacki 2011): t = (d-bar + margin) / (s / sqrt(n)) and p =
P(T_df >= t); p <= alpha exactly when bound >= -margin (p at most alpha, as rankhouse's
significance reads). For a measure where lower is better everything is mirrored: the upper
bound d-bar + t_{1 - alpha, df} * s / sqrt(n) must be at most +margin. With fewer than two
pairs non-inferiority cannot be shown (the gate fails, the bound and p-value are NaN); when
all differences are equal (s = 0) the bound is the mean difference itself and the p-value
0.0 when it passes, 1.0 when it does not.

**The minimum detectable effect** of a paired t-test: the smallest true mean difference that
a two-sided paired t-test at ``alpha`` would find significant with probability ``power``, at
this number of pairs and this spread of the differences. With n pairs, df = n - 1, standard
deviation s of the differences and the critical value c = t_{1 - alpha / 2, df}, a true
difference of delta standard deviations gives the test statistic a noncentral t distribution
with df degrees of freedom and noncentrality lambda = delta * sqrt(n), so the power is

    power(delta) = P(T' > c) + P(T' < -c),   T' ~ t'(df, lambda)

(Cohen, *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed., 1988, chapter 2;
the two tails as :class:`statsmodels.stats.power.TTestPower` counts them). The effect size
delta solving power(delta) = ``power`` is found by bisection on scipy's noncentral t
distribution function (:func:`scipy.special.nctdtr`) to a relative 1e-12, starting from
the usual closed form with t quantiles, delta ~ (t_{1 - alpha / 2, df} + t_{power, df}) /
sqrt(n) (Cohen 1988's normal-quantile formula, chapter 2, with t quantiles), which ignores
the far tail and the noncentral shape: it is 14 % low at n = 2, 1.2 % at n = 5 and within
0.2 % from n = 10. The minimum detectable
effect is delta * s, in the measure's units.

It equals ``TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=power,
alternative='two-sided') * s`` to statsmodels' solver's precision. Fewer than two pairs give
NaN; differences that are all equal (s = 0) give 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..errors import Message, Option, RankhouseError
from ..lazy import numpy as np
from ..lazy import scipy_special
from .estimates import (
    Interval,
    Summary,
    as_summary,
    check_alpha,
    check_direction,
    check_margin,
    effect_size,
    t_interval,
    t_quantile,
)

VERDICTS = ("better", "worse", "equivalent", "inconclusive")
"""The verdict words."""

DEFAULT_POWER = 0.8
"""The power at which the minimum detectable effect is stated."""


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
        hedges_gz: the standardized effect size (:func:`rankhouse.stats.effect_size`).
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
            caller), or their :class:`~rankhouse.stats.estimates.Summary` (n, mean, sd).
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


@dataclass(frozen=True)
class NonInferiority:
    """The outcome of a non-inferiority test of a run against its baseline.

    ``bound`` is the one-sided bound of the difference that is compared with the margin:
    the lower bound of the (1 - 2 alpha) interval when higher is better (passed when
    ``bound >= -margin``), the upper bound when lower is better (passed when ``bound <=
    margin``). ``p_value`` is the one-sided t-test's.
    """

    passed: bool
    bound: float
    margin: float
    alpha: float
    direction: int
    n: int
    mean_difference: float
    sd: float
    p_value: float


def non_inferiority(
    differences: Sequence[float] | Summary,
    margin: float,
    *,
    alpha: float = 0.05,
    direction: int = 1,
) -> NonInferiority:
    """Whether the run is no worse than the baseline by ``margin`` or more, at ``alpha``.

    Args:
        differences: per-query run minus baseline (finite numbers, NaN pairs dropped by the
            caller), or their :class:`~rankhouse.stats.estimates.Summary`.
        margin: the largest loss that does not matter, in the measure's units (at least 0;
            a relative margin is converted by the caller from the baseline's mean).
        alpha: the one-sided test's level.
        direction: +1 when higher is better, -1 when lower is
            (:func:`rankhouse.measures.model.direction` of the measure).

    Raises:
        RankhouseError: alpha outside (0, 1), a negative margin, a direction other than
            +1 or -1, or a difference that is not a finite number.
    """
    check_alpha(alpha)
    check_margin(margin)
    check_direction(direction)
    summary = as_summary(differences)
    margin = float(margin)
    if summary.n < 2:
        return NonInferiority(
            False, math.nan, margin, alpha, direction, summary.n, summary.mean, summary.sd, math.nan
        )
    interval = t_interval(summary, 1 - 2 * alpha)
    bound = interval.low if direction > 0 else interval.high
    passed = bound >= -margin if direction > 0 else bound <= margin
    if summary.sd == 0:
        p_value = 0.0 if passed else 1.0
    else:
        # The distance of the mean from the margin on the worse side, in standard errors.
        t = direction * (summary.mean + direction * margin) / (summary.sd / math.sqrt(summary.n))
        p_value = float(scipy_special.stdtr(np.float64(summary.n - 1), np.float64(-t)))
    return NonInferiority(
        bool(passed),
        bound,
        margin,
        alpha,
        direction,
        summary.n,
        summary.mean,
        summary.sd,
        p_value,
    )


GATE_WORDS = ("non_inferior", "regressed", "not_shown")
"""The gate's words for one measure at a margin (:func:`gate_status`)."""


def gate_status(
    differences: Sequence[float] | Summary,
    margin: float | None,
    *,
    alpha: float = 0.05,
    direction: int = 1,
) -> tuple[str, float]:
    """What the non-inferiority gate says of the paired differences at ``margin``, and the
    bound it compared (``rankhouse regress``, ``compare --margin``, the report):

    * ``non_inferior``: the bound (the lower limit of the (1 - 2 alpha) interval; the upper
      one when lower is better) is at least -margin;
    * ``regressed``: it is not, and the whole (1 - 2 alpha) interval lies on the worse side of
      zero: the evidence shows a drop (the one-sided t-test at alpha);
    * ``not_shown``: neither: the queries can rule out neither a drop beyond the margin nor
      no drop at all. Fewer than two pairs, or no margin, give ``not_shown`` and a NaN bound.

    A mean that did not move to the worse side is never ``regressed``.
    """
    summary = as_summary(differences)
    if margin is None or summary.n < 2:
        return "not_shown", math.nan
    shown = non_inferiority(summary, margin, alpha=alpha, direction=direction)
    if shown.passed:
        return "non_inferior", shown.bound
    interval = t_interval(summary, 1 - 2 * alpha)
    worse = interval.high < 0 if direction > 0 else interval.low > 0
    return ("regressed" if worse else "not_shown"), shown.bound


_TOLERANCE = 1e-12


@lru_cache(maxsize=256)  # one n for every run and measure of a comparison: computed once
def detectable_effect_size(n: int, *, alpha: float = 0.05, power: float = DEFAULT_POWER) -> float:
    """The effect size delta (in standard deviations of the differences) that a two-sided
    paired t-test at ``alpha`` over ``n`` pairs detects with probability ``power``.

    Raises:
        RankhouseError: alpha outside (0, 1) or power outside (alpha, 1).
    """
    check_alpha(alpha)
    if not alpha < power < 1:
        raise RankhouseError(
            Message(Option("power"), f" must lie between alpha ({alpha}) and 1, got {power}")
        )
    if n < 2:
        return math.nan
    df = n - 1
    critical = t_quantile(df, 1 - alpha / 2)
    root_n = math.sqrt(n)

    def power_at(delta: float) -> float:
        lam = np.float64(delta * root_n)
        below = float(scipy_special.nctdtr(np.float64(df), lam, np.float64(-critical)))
        above = 1 - float(scipy_special.nctdtr(np.float64(df), lam, np.float64(critical)))
        # The far tail is below 1e-15 where boost's noncentral t cannot compute it (NaN).
        return above + (0.0 if math.isnan(below) else below)

    low, high = 0.0, (critical + t_quantile(df, power)) / root_n
    while power_at(high) < power:
        low, high = high, 2 * high
    while high - low > _TOLERANCE * high:
        middle = (low + high) / 2
        if power_at(middle) < power:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def minimum_detectable_effect(
    n: int, sd: float, *, alpha: float = 0.05, power: float = DEFAULT_POWER
) -> float:
    """The smallest mean difference (in the measure's units) that a two-sided paired t-test
    at ``alpha`` over ``n`` pairs whose differences have standard deviation ``sd`` detects
    with probability ``power``: :func:`detectable_effect_size` times ``sd``.

    Returns:
        NaN with fewer than two pairs, 0.0 when ``sd`` is 0.

    Raises:
        RankhouseError: as :func:`detectable_effect_size`.
    """
    delta = detectable_effect_size(n, alpha=alpha, power=power)
    if math.isnan(delta) or math.isnan(sd):
        return math.nan
    return 0.0 if sd == 0 else delta * sd


# The operating characteristics of the non-inferiority gate (rankhouse.regress): how often
# it fails a run whose true mean difference from its reference is -drop. The gate fails a
# measure when the lower limit of the (1 - 2 alpha) t interval of the mean paired difference
# lies below -margin, that is when T = (d-bar + margin) / (s / sqrt(n)) < t_{1 - alpha, df}.
# With differences of standard deviation sd and a true mean of -drop, T follows a noncentral
# t distribution with df = n - 1 and noncentrality (margin - drop) * sqrt(n) / sd, so
#
#     P(fail | drop) = P(T' < t_{1 - alpha, df}),   T' ~ t'(df, (margin - drop) sqrt(n) / sd),
#
# one minus the power of the one-sided one-sample t-test of H0: mean <= -margin at the effect
# size (margin - drop) / sd (statsmodels' TTestPower with alternative='larger').


def gate_fail_rate(drop: float, margin: float, sd: float, n: int, *, alpha: float) -> float:
    """The probability that the non-inferiority gate fails a measure whose true mean
    difference from its reference is ``-drop`` (0: an unchanged run, the false-alarm rate),
    with ``n`` queries whose differences have standard deviation ``sd``.

    NaN with fewer than two queries or an unknown spread; with ``sd`` 0 the gate is certain:
    1.0 when the drop exceeds the margin, else 0.0.
    """
    check_alpha(alpha)
    if n < 2 or math.isnan(sd) or math.isnan(margin) or math.isnan(drop):
        return math.nan
    if sd == 0:
        return 1.0 if drop > margin else 0.0
    df = n - 1
    lam = (margin - drop) * math.sqrt(n) / sd
    return float(
        scipy_special.nctdtr(np.float64(df), np.float64(lam), np.float64(t_quantile(df, 1 - alpha)))
    )


def _noncentrality(df: int, probability: float, critical: float) -> float:
    """The noncentrality lam with P(T' < critical) = probability, T' ~ t'(df, lam): scipy's
    cdflib estimate (about 1e-8), then bisection on the distribution function to 1e-12."""
    guess = float(scipy_special.nctdtrinc(np.float64(df), np.float64(probability), critical))

    def below(lam: float) -> float:  # decreasing in lam
        return float(scipy_special.nctdtr(np.float64(df), np.float64(lam), np.float64(critical)))

    step = max(abs(guess) * 1e-6, 1e-9)
    low, high = guess - step, guess + step
    while below(low) < probability:
        low -= 2 * (high - low)
    while below(high) > probability:
        high += 2 * (high - low)
    while high - low > _TOLERANCE * max(1.0, abs(high)):
        middle = (low + high) / 2
        if below(middle) > probability:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def calibrated_margin(sd: float, n: int, *, alpha: float, false_alarm: float) -> float:
    """The margin at which the non-inferiority gate fails an unchanged run with probability
    ``false_alarm`` (n queries, differences of standard deviation ``sd``): the solution of
    :func:`gate_fail_rate` (0, margin, ...) = ``false_alarm``. NaN with fewer than two queries
    or an unknown spread; 0.0 when ``sd`` is 0.

    Raises:
        RankhouseError: alpha or false_alarm outside (0, 1).
    """
    check_alpha(alpha)
    check_alpha(false_alarm)
    if n < 2 or math.isnan(sd):
        return math.nan
    if sd == 0:
        return 0.0
    df = n - 1
    lam = _noncentrality(df, false_alarm, t_quantile(df, 1 - alpha))
    return lam * sd / math.sqrt(n)


def detectable_drop(
    margin: float, sd: float, n: int, *, alpha: float, power: float = DEFAULT_POWER
) -> float:
    """The true drop the non-inferiority gate fails with probability ``power`` (on the first
    night it is seen): the solution of :func:`gate_fail_rate` (drop, margin, ...) = ``power``.
    NaN with fewer than two queries or an unknown spread; the margin itself when ``sd`` is 0.
    """
    check_alpha(alpha)
    check_alpha(power)
    if n < 2 or math.isnan(sd) or math.isnan(margin):
        return math.nan
    if sd == 0:
        return margin
    df = n - 1
    lam = _noncentrality(df, power, t_quantile(df, 1 - alpha))
    return margin - lam * sd / math.sqrt(n)
