"""Confidence intervals of a mean (a run's mean of a measure) and of a paired difference (a
run's per-query values minus the baseline's, paired by query id).

Two methods; ``t`` is the default:

* ``t``: Student's t interval, mean +- t_{1 - (1 - level) / 2, n - 1} * s / sqrt(n), with s
  the sample standard deviation (n - 1 in the denominator). For a paired difference this is
  the interval :func:`scipy.stats.ttest_rel` reports (``ttest_rel(run,
  baseline).confidence_interval(confidence_level=level)``), and :func:`scipy.stats.t.interval`
  (``t.interval(level, n - 1, loc=mean, scale=s / sqrt(n))``); the quantile comes from
  :mod:`.t_quantile` (plain Python, within 1e-13 of :func:`scipy.special.stdtrit` at the
  usual numbers of queries), so the interval imports no scipy. Reference:
  any statistics text, e.g. Montgomery & Runger, *Applied
  Statistics and Probability for Engineers*, chapter 8.
* ``bootstrap``: the percentile bootstrap interval (Efron & Tibshirani, *An Introduction to
  the Bootstrap*, 1993, chapter 13): ``resamples`` resamples of the n values drawn with
  replacement by ``numpy.random.default_rng(seed)`` (for a paired difference: of the
  query pairs), the mean of each, and the (1 - level) / 2 and 1 - (1 - level) / 2
  quantiles of those means (linear interpolation, Hyndman & Fan's definition 7). Draws and
  quantiles are scipy's: the interval equals ``scipy.stats.bootstrap((values,), numpy.mean,
  confidence_level=level, n_resamples=resamples, method='percentile',
  rng=numpy.random.default_rng(seed))`` to the bit (checked with scipy 1.17, which
  interpolates with ``scipy.stats.quantile``; a version interpolating with numpy's
  ``percentile`` may differ in the last bit, and before scipy 1.15 the generator argument is
  ``random_state``). Resamples are drawn in batches of a bounded size, which leaves the
  draws unchanged.

Edge cases: with fewer than two values the interval is NaN to NaN (no spread to estimate);
when all values are equal it is [value, value], of width 0, for both methods. Values must be
finite numbers: the caller leaves NaN pairs out (:mod:`rankhouse.pairing` does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..defaults import DEFAULT_LEVEL, DEFAULT_PERMUTATIONS, DEFAULT_SEED
from ..errors import Message, Option, RankhouseError
from ..lazy import numpy as np
from .checks import check_level, check_resampling, finite_values, paired_differences
from .summary import Summary, as_summary
from .t_quantile import t_quantile

INTERVAL_METHODS = ("t", "bootstrap")
"""The interval methods; the first is the default."""

_BATCH_VALUES = 4_000_000
"""Resampled values drawn at once by the bootstrap (32 MB of indices)."""


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval ``[low, high]`` at ``level`` by ``method``."""

    low: float
    high: float
    level: float
    method: str

    @property
    def width(self) -> float:
        return self.high - self.low

    def contains(self, value: float) -> bool:
        """Whether ``low <= value <= high`` (never for a NaN interval)."""
        return self.low <= value <= self.high


def t_interval(summary: Summary, level: float = DEFAULT_LEVEL) -> Interval:
    """The t interval of a mean from its :class:`Summary` (n, mean, standard deviation).

    low = mean + t_{(1 - level) / 2, n - 1} * sd / sqrt(n), high = mean + t_{1 - (1 - level)
    / 2, n - 1} * sd / sqrt(n), as scipy's ``TtestResult.confidence_interval`` computes them.

    Raises:
        RankhouseError: a level outside (0, 1).
    """
    check_level(level)
    if summary.n < 2:
        return Interval(math.nan, math.nan, level, "t")
    if summary.sd == 0:
        return Interval(summary.mean, summary.mean, level, "t")
    tail = (1 - level) / 2
    error = summary.sd / math.sqrt(summary.n)
    df = summary.n - 1
    low = t_quantile(df, tail) * error + summary.mean
    high = t_quantile(df, 1 - tail) * error + summary.mean
    return Interval(low, high, level, "t")


def mean_interval(
    values: Sequence[float],
    level: float = DEFAULT_LEVEL,
    *,
    method: str = "t",
    resamples: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """The confidence interval of the mean of ``values``.

    Args:
        values: finite numbers (for a paired difference, run minus baseline per query).
        level: the confidence level, in (0, 1).
        method: ``'t'`` (Student's t) or ``'bootstrap'`` (seeded percentile bootstrap).
        resamples: the bootstrap's number of resamples.
        seed: the bootstrap's seed of ``numpy.random.default_rng``.

    Returns:
        The :class:`Interval`; NaN bounds with fewer than two values.

    Raises:
        RankhouseError: an unknown method, a level outside (0, 1), resamples below 1, or a
            value that is not a finite number.
    """
    if method not in INTERVAL_METHODS:
        raise RankhouseError(
            Message(
                "unknown interval method ",
                repr(method),
                "; choose one of ",
                ", ".join(INTERVAL_METHODS),
                " (",
                Option("method"),
                ")",
            )
        )
    array = finite_values(values)
    if method == "t":
        return t_interval(as_summary(array), level)
    check_level(level)
    check_resampling(resamples, seed, name="resamples")
    return _bootstrap_interval(array, level, resamples, seed)


def difference_interval(
    run: Sequence[float],
    baseline: Sequence[float],
    level: float = DEFAULT_LEVEL,
    *,
    method: str = "t",
    resamples: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> Interval:
    """The confidence interval of the mean paired difference ``run - baseline``: the
    :func:`mean_interval` of the per-query differences (the bootstrap resamples query pairs).

    Raises:
        RankhouseError: unequal lengths, or as :func:`mean_interval`.
    """
    differences = paired_differences(run, baseline)
    return mean_interval(differences, level, method=method, resamples=resamples, seed=seed)


def _bootstrap_interval(values: np.ndarray, level: float, resamples: int, seed: int) -> Interval:
    n = len(values)
    if n < 2:
        return Interval(math.nan, math.nan, level, "bootstrap")
    if bool((values == values[0]).all()):
        return Interval(float(values[0]), float(values[0]), level, "bootstrap")
    rng = np.random.default_rng(seed)
    batch = max(1, _BATCH_VALUES // n)
    means = np.empty(resamples)
    for start in range(0, resamples, batch):
        rows = min(batch, resamples - start)
        # scipy.stats.bootstrap draws each batch as integers(0, n, (rows, n)).
        means[start : start + rows] = values[rng.integers(0, n, (rows, n))].mean(axis=-1)
    means.sort()
    tail = (1 - level) / 2
    return Interval(_quantile(means, tail), _quantile(means, 1 - tail), level, "bootstrap")


def _quantile(ordered: np.ndarray, probability: float) -> float:
    """The ``probability`` quantile of sorted values by Hyndman & Fan's definition 7
    (linear interpolation; The American Statistician 50, 1996), written as
    :func:`scipy.stats.quantile` writes it, so that the bounds equal scipy's to the bit
    (:func:`numpy.quantile` interpolates in another order and may differ in the last bit)."""
    n = len(ordered)
    position = probability * n + (1 - probability)
    above = math.floor(position)
    below = above - 1
    fraction = 0.0 if below < 0 else position % 1
    below = min(max(below, 0), n - 1)
    above = min(max(above, 0), n - 1)
    return float((1 - fraction) * ordered[below] + fraction * ordered[above])
