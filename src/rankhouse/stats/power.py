"""The minimum detectable effect of a paired t-test: the smallest true mean difference that a
two-sided paired t-test at ``alpha`` would find significant with probability ``power``, at
this number of pairs and this spread of the differences.

With n pairs, df = n - 1, standard deviation s of the differences and the critical value
c = t_{1 - alpha / 2, df}, a true difference of delta standard deviations gives the test
statistic a noncentral t distribution with df degrees of freedom and noncentrality
lambda = delta * sqrt(n), so the power is

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
from functools import lru_cache

from ..errors import Message, Option, RankhouseError
from ..lazy import numpy as np
from ..lazy import scipy_special
from .checks import check_alpha
from .intervals import t_quantile

DEFAULT_POWER = 0.8
"""The power at which the minimum detectable effect is stated."""

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
