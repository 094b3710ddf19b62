"""Non-inferiority of a run to its baseline: is the run no worse than the baseline minus a
practical margin? The question a nightly gate asks: "not significantly worse" is not "not
worse" (with few queries a real loss is often not significant), so the gate must show that
any loss is smaller than the margin, not merely fail to show that there is one.

For a measure where higher is better, with paired differences d = run - baseline (n pairs,
mean d-bar, sample standard deviation s, df = n - 1), the run is non-inferior at ``alpha``
when the lower bound of the two-sided (1 - 2 alpha) t interval of the mean difference,

    bound = d-bar - t_{1 - alpha, df} * s / sqrt(n),

is at least -margin. That is the one-sided paired t-test of H0: mean difference <= -margin
against H1: mean difference > -margin at level alpha (Schuirmann, J. Pharmacokin.
Biopharm. 15, 1987: the one-sided half of two one-sided tests; Walker & Nowacki, J. Gen.
Intern. Med. 26, 2011): t = (d-bar + margin) / (s / sqrt(n)) and p = P(T_df >= t); p <=
alpha exactly when bound >= -margin (p at most alpha, as rankhouse's significance reads).
For a measure where lower is better everything is mirrored: the upper bound d-bar +
t_{1 - alpha, df} * s / sqrt(n) must be at most +margin.

Edge cases: with fewer than two pairs non-inferiority cannot be shown (the gate fails, the
bound and p-value are NaN); when all differences are equal (s = 0) the bound is the mean
difference itself and the p-value 0.0 when it passes, 1.0 when it does not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..lazy import numpy as np
from ..lazy import scipy_special
from .checks import check_alpha, check_direction, check_margin
from .intervals import t_interval
from .summary import Summary, as_summary


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
            caller), or their :class:`~rankhouse.stats.summary.Summary`.
        margin: the largest loss that does not matter, in the measure's units (at least 0;
            a relative margin is converted by the caller from the baseline's mean).
        alpha: the one-sided test's level.
        direction: +1 when higher is better, -1 when lower is
            (:func:`rankhouse.measures.best.direction` of the measure).

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
