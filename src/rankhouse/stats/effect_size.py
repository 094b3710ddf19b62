"""Standardized effect sizes of a paired difference: Cohen's d_z and Hedges' g_z.

With d_i = run_i - baseline_i over the n query pairs, mean d-bar and sample standard
deviation s_d (n - 1 in the denominator):

* Cohen's d_z = d-bar / s_d (Cohen, *Statistical Power Analysis for the Behavioral
  Sciences*, 2nd ed., 1988, chapter 2; the "z" of Lakens, Front. Psychol. 4:863, 2013):
  the mean difference in units of the differences' own spread, equal to t / sqrt(n)
  of the paired t-test.
* Hedges' g_z = d_z * J(n - 1), with the small-sample correction J(df) = 1 - 3 / (4 df - 1)
  (Hedges & Olkin, *Statistical Methods for Meta-Analysis*, 1985; Borenstein et al.,
  *Introduction to Meta-Analysis*, 2009, chapter 4, with df = n - 1 for a paired design).
  This is the usual approximation of Hedges' (1981) exact J(df) = Gamma(df / 2) /
  (sqrt(df / 2) Gamma((df - 1) / 2)); the two differ by less than 0.1 % of g from n = 10.
  With n = 2, J(1) = 0 and g_z = 0.

Neither is pingouin's paired ``compute_effsize(x, y, paired=True, eftype='cohen')``, which
is d_av = (mean(x) - mean(y)) / sqrt((s_x^2 + s_y^2) / 2) (Cumming 2012), nor its paired
``eftype='hedges'``, d_av * (1 - 3 / (4 (n_x + n_y) - 9)). pingouin's ``eftype='cohen_dz'``
is d_z; its one-sample ``compute_effsize(x - y, 0, eftype='hedges')`` is g_z.

Edge cases: fewer than two pairs give NaN for both. When all differences are equal (s_d = 0)
d_z is 0.0 if they are all 0 (no difference at all, as the paired tests' p-value is then
1.0) and +-infinity otherwise (every query moved the same way by the same amount); g_z is
then the same, except NaN for n = 2 (infinity times J(1) = 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .summary import Summary, as_summary


@dataclass(frozen=True)
class EffectSize:
    """The standardized effect size of a paired difference and the numbers it comes from."""

    n: int
    mean_difference: float
    sd: float
    cohen_dz: float
    hedges_gz: float


def hedges_correction(df: float) -> float:
    """Hedges & Olkin's small-sample correction J(df) = 1 - 3 / (4 df - 1); NaN below df 1."""
    return 1 - 3 / (4 * df - 1) if df >= 1 else math.nan


def effect_size(differences: Sequence[float] | Summary) -> EffectSize:
    """Cohen's d_z and Hedges' g_z of paired differences (run minus baseline per query).

    Args:
        differences: the per-query differences (finite numbers, NaN pairs dropped by the
            caller), or their :class:`~rankhouse.stats.summary.Summary`.

    Raises:
        RankhouseError: a difference that is not a finite number.
    """
    summary = as_summary(differences)
    if summary.n < 2:
        return EffectSize(summary.n, summary.mean, summary.sd, math.nan, math.nan)
    if summary.sd == 0:
        d = 0.0 if summary.mean == 0 else math.copysign(math.inf, summary.mean)
    else:
        d = summary.mean / summary.sd
    g = d * hedges_correction(summary.n - 1)
    return EffectSize(summary.n, summary.mean, summary.sd, d, g)
