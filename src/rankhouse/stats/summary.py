"""The summary of paired differences every interval, effect size and verdict starts from:
the number of pairs n, their mean and their sample standard deviation.

The standard deviation divides by n - 1 and is computed as :func:`scipy.stats.ttest_rel`
computes its variance (the mean squared deviation from the mean, times n / (n - 1)), so
that a t interval here and scipy's agree to the last bits. When every value is the same
the standard deviation is exactly 0 and the mean is that value (summing n equal floats may
round; the value is taken as it is): the intervals of constant differences have width 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..lazy import numpy as np
from .checks import finite_values


@dataclass(frozen=True)
class Summary:
    """n, mean and sample standard deviation (n - 1 in the denominator) of some values.

    ``mean`` is NaN without values, ``sd`` NaN with fewer than two.
    """

    n: int
    mean: float
    sd: float


def summarize(values: Sequence[float]) -> Summary:
    """The :class:`Summary` of ``values`` (finite numbers: the caller drops NaN pairs).

    Raises:
        RankhouseError: a value that is not a finite number.
    """
    array = finite_values(values)
    n = len(array)
    if n == 0:
        return Summary(0, math.nan, math.nan)
    if bool((array == array[0]).all()):
        return Summary(n, float(array[0]), 0.0 if n >= 2 else math.nan)
    # values near the largest double (an older release stored RBP(p=1.5)) overflow: inf, no
    # RuntimeWarning for every later reader
    with np.errstate(over="ignore", invalid="ignore"):
        mean = np.mean(array)
        if n < 2:
            return Summary(n, float(mean), math.nan)
        deviations = array - mean
        variance = np.mean(deviations**2) * (np.float64(n) / np.float64(n - 1))
        if np.isinf(variance) and np.isfinite(mean):  # squared deviations past 1.8e308
            scale = np.max(np.abs(deviations))
            ratio = np.mean((deviations / scale) ** 2) * (np.float64(n) / np.float64(n - 1))
            return Summary(n, float(mean), float(scale * np.sqrt(ratio)))
    return Summary(n, float(mean), float(np.sqrt(variance)))


def as_summary(differences: Sequence[float] | Summary) -> Summary:
    """``differences`` summarized, or the :class:`Summary` given."""
    return differences if isinstance(differences, Summary) else summarize(differences)
