"""Estimates from paired per-query values: the summary every other statistic starts from (n,
mean, standard deviation), confidence intervals of a mean and of a paired difference, the
standardized effect sizes, Student's t quantile they use, and the checks of the arguments the
statistics share.

**Summary.** The standard deviation divides by n - 1 and is computed as
:func:`scipy.stats.ttest_rel` computes its variance (the mean squared deviation from the mean,
times n / (n - 1)), so that a t interval here and scipy's agree to the last bits. When every
value is the same the standard deviation is exactly 0 and the mean is that value (summing n
equal floats may round; the value is taken as it is): the intervals of constant differences
have width 0.

**Intervals** of a mean (a run's mean of a measure) and of a paired difference (a run's
per-query values minus the baseline's, paired by query id). Two methods; ``t`` is the default:

* ``t``: Student's t interval, mean +- t_{1 - (1 - level) / 2, n - 1} * s / sqrt(n), with s
  the sample standard deviation (n - 1 in the denominator). For a paired difference this is
  the interval :func:`scipy.stats.ttest_rel` reports (``ttest_rel(run,
  baseline).confidence_interval(confidence_level=level)``), and :func:`scipy.stats.t.interval`
  (``t.interval(level, n - 1, loc=mean, scale=s / sqrt(n))``); the quantile comes from
  :func:`t_quantile` (plain Python, within 1e-13 of :func:`scipy.special.stdtrit` at the
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

With fewer than two values the interval is NaN to NaN (no spread to estimate); when all
values are equal it is [value, value], of width 0, for both methods.

**Effect sizes** of a paired difference. With d_i = run_i - baseline_i over the n query
pairs, mean d-bar and sample standard deviation s_d (n - 1 in the denominator):

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
is d_z; its one-sample ``compute_effsize(x - y, 0, eftype='hedges')`` is g_z. Fewer than two
pairs give NaN for both. When all differences are equal (s_d = 0) d_z is 0.0 if they are all
0 (no difference at all, as the paired tests' p-value is then 1.0) and +-infinity otherwise
(every query moved the same way by the same amount); g_z is then the same, except NaN for
n = 2 (infinity times J(1) = 0).

**Student's t quantile** in plain Python, so that a command that shows a mean's interval
(``eval``, ``history``) imports no scipy (0.12-0.2 s of its start-up). It is found by Newton's
method on the distribution function, P(T <= t) = I_x(df / 2, 1 / 2) / 2 for t <= 0 with
x = df / (df + t^2) (Abramowitz & Stegun 26.7.1), the regularized incomplete beta function I
evaluated by its continued fraction (modified Lentz; Press et al., *Numerical Recipes*, 3rd
ed., 6.4), started from the normal quantile. log(Gamma(a + 1/2) / Gamma(a)) comes from
Stirling's series for large a, where the difference of two large ``lgamma`` values would lose
digits. Against :func:`scipy.special.stdtrit`: within 2e-14 (relative) up to 50 degrees of
freedom, 1e-13 up to 300, 2e-12 up to 100,000 (tests/stats/test_stats_t_quantile.py).

**Checks** of the arguments the statistics share: alpha, a confidence level, a margin, a
direction, resamples and a seed, and lists of values. Values must be finite numbers: the
caller leaves NaN pairs out (:mod:`rankhouse.pairing` does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..defaults import DEFAULT_LEVEL, DEFAULT_PERMUTATIONS, DEFAULT_SEED, MAX_PERMUTATIONS
from ..errors import Message, Option, RankhouseError
from ..lazy import numpy as np
from ..lazy import statistics

try:  # what statistics.NormalDist.inv_cdf computes, without the statistics module (which
    # imports fractions, decimal and random: 2-3 ms of a command that prints an interval)
    from _statistics import _normal_dist_inv_cdf
except ImportError:  # an interpreter without CPython's accelerator

    def _normal_dist_inv_cdf(p: float, mu: float, sigma: float) -> float:
        return statistics.NormalDist(mu, sigma).inv_cdf(p)


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
    if isinstance(values, list) and all(type(v) is float and math.isfinite(v) for v in values):
        return _summarize_floats(values)  # stored values read back: no numpy to load
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


def _summarize_floats(values: list[float]) -> Summary:
    """:func:`summarize` of finite Python floats in plain Python, to the bit what numpy computes
    (its pairwise sum, :func:`_numpy_sum`), so that ``history`` and ``eval`` of stored values
    show their intervals without importing numpy (as long to import as DuckDB)."""
    n = len(values)
    if n == 0:
        return Summary(0, math.nan, math.nan)
    first = values[0]
    if all(v == first for v in values):
        return Summary(n, first, 0.0 if n >= 2 else math.nan)
    mean = _numpy_sum(values) / n
    if n < 2:
        return Summary(n, mean, math.nan)
    deviations = [v - mean for v in values]
    variance = _numpy_sum([d * d for d in deviations]) / n * (n / (n - 1))
    if math.isinf(variance) and math.isfinite(mean):  # squared deviations past 1.8e308
        scale = max(abs(d) for d in deviations)
        scaled = [d / scale for d in deviations]
        ratio = _numpy_sum([s * s for s in scaled]) / n * (n / (n - 1))
        return Summary(n, mean, scale * math.sqrt(ratio))
    return Summary(n, mean, math.sqrt(variance))


def _numpy_sum(values: list[float], start: int = 0, n: int | None = None) -> float:
    """The sum of ``values[start:start + n]`` in the order of numpy's ``add.reduce`` of a
    contiguous float64 array (numpy's ``pairwise_sum``): blocks of at most 128 values summed
    with eight accumulators, larger spans halved at a multiple of 8."""
    n = len(values) - start if n is None else n
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += values[i]
        return total
    if n <= 128:
        r = values[start : start + 8]
        end = start + n - n % 8
        for i in range(start + 8, end, 8):
            for j in range(8):
                r[j] += values[i + j]
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for i in range(end, start + n):
            total += values[i]
        return total
    half = n // 2
    half -= half % 8
    return _numpy_sum(values, start, half) + _numpy_sum(values, start + half, n - half)


def as_summary(differences: Sequence[float] | Summary) -> Summary:
    """``differences`` summarized, or the :class:`Summary` given."""
    return differences if isinstance(differences, Summary) else summarize(differences)


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
            caller), or their :class:`~rankhouse.stats.estimates.Summary`.

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


_TINY = 1e-300
_STIRLING_FROM = 50.0


@lru_cache(maxsize=1024)  # a command asks for the same few quantiles again and again
def t_quantile(df: float, probability: float) -> float:
    """The ``probability`` quantile of Student's t with ``df`` (> 0) degrees of freedom."""
    if probability > 0.5:
        return -t_quantile(df, 1.0 - probability)
    if probability == 0.5:
        return 0.0
    if probability <= 0.0:
        return -math.inf
    log_scale = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    t = _normal_dist_inv_cdf(probability, 0.0, 1.0)  # the normal quantile: where Newton starts
    for _ in range(200):
        density = math.exp(log_scale - (df + 1) / 2 * math.log1p(t * t / df))
        step = (_lower_tail(t, df) - probability) / density
        t -= step
        if abs(step) <= 2e-16 * abs(t):
            break
    return t


def _lower_tail(t: float, df: float) -> float:
    """P(T <= t) for t <= 0."""
    a = df / 2
    total = df + t * t
    x, y = df / total, t * t / total  # y = 1 - x without the rounding of 1 - x
    front = math.exp(
        _log_half_step(a) - 0.5 * math.log(math.pi) + a * math.log(x) + 0.5 * math.log(y)
    )
    if x < (a + 1) / (a + 2.5):
        return 0.5 * front * _continued_fraction(a, 0.5, x) / a
    return 0.5 * (1.0 - 2.0 * front * _continued_fraction(0.5, a, y))


def _log_half_step(a: float) -> float:
    """log(Gamma(a + 1/2) / Gamma(a))."""
    if a < _STIRLING_FROM:
        return math.lgamma(a + 0.5) - math.lgamma(a)
    # Stirling: the first terms of the two series, in a form without cancellation, then
    # the difference of their tails
    return (
        a * math.log1p(0.5 / a)
        - 0.5
        + 0.5 * math.log(a)
        + _stirling_tail(a + 0.5)
        - _stirling_tail(a)
    )


def _stirling_tail(z: float) -> float:
    """1/(12 z) - 1/(360 z^3) + 1/(1260 z^5) - 1/(1680 z^7)."""
    w = 1.0 / (z * z)
    return (1.0 / 12 - w * (1.0 / 360 - w * (1.0 / 1260 - w / 1680))) / z


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (modified Lentz)."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    value = d
    for m in range(1, 1_000_000):
        even = m * (b - m) * x / ((a - 1.0 + 2 * m) * (a + 2 * m))
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1.0 + 2 * m))
        for numerator in (even, odd):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            value *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return value


def check_alpha(alpha: float) -> None:
    """Raise RankhouseError unless ``0 < alpha < 1``."""
    if not 0.0 < alpha < 1.0:
        raise RankhouseError(
            Message(Option("alpha"), f" must lie strictly between 0 and 1, got {alpha}")
        )


def check_resampling(permutations: int, seed: int, *, name: str = "permutations") -> None:
    """Raise RankhouseError unless ``permutations`` (called ``name``) is a whole number from
    1 to :data:`~rankhouse.defaults.MAX_PERMUTATIONS` and ``seed`` a whole number at least 0
    (numpy's generators take no negative seed)."""
    if isinstance(permutations, bool) or not isinstance(permutations, int):
        raise RankhouseError(
            Message(Option(name), f" must be a whole number, got {permutations!r}")
        )
    if not 1 <= permutations <= MAX_PERMUTATIONS:
        raise RankhouseError(
            Message(
                Option(name),
                f" must lie between 1 and {MAX_PERMUTATIONS:,} (rankhouse's bound: a p-value's "
                f"resolution is then 1e-6), got {permutations:,}",
            )
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise RankhouseError(
            Message(
                Option("seed"),
                f" must be a whole number at least 0 (numpy's random generator takes no "
                f"negative seed), got {seed!r}",
            )
        )


def check_level(level: float) -> None:
    """Raise RankhouseError unless the confidence level lies strictly between 0 and 1."""
    if not 0.0 < level < 1.0:
        raise RankhouseError(
            Message(Option("level"), f" must lie strictly between 0 and 1, got {level}")
        )


def check_margin(margin: float | None) -> None:
    """Raise RankhouseError unless ``margin`` is None or a finite number at least 0."""
    if margin is not None and not 0.0 <= margin < float("inf"):
        raise RankhouseError(
            Message(
                Option("margin"),
                f" must be a finite number at least 0 (an absolute difference), got {margin}",
            )
        )


def check_direction(direction: int) -> None:
    """Raise RankhouseError unless ``direction`` is +1 (higher is better) or -1 (lower is)."""
    if direction not in (1, -1):
        raise RankhouseError(
            Message(
                Option("direction"),
                f" must be 1 (higher is better) or -1 (lower is better), got {direction!r}; a "
                "measure that ranks nothing (a count) has no better or worse",
            )
        )


def finite_values(values: Sequence[float], what: str = "values") -> np.ndarray:
    """``values`` as a one-dimensional float array, checked to hold no NaN or infinity.

    Raises:
        RankhouseError: not one-dimensional, or a value that is not a finite number.
    """
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise RankhouseError(f"{what} must be one list of numbers, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise RankhouseError(
            f"{what} must be finite numbers; drop the queries whose value is NaN first"
        )
    return array


def paired_differences(run: Sequence[float], baseline: Sequence[float]) -> np.ndarray:
    """``run - baseline``, both checked to be equally long lists of finite numbers.

    Raises:
        RankhouseError: unequal lengths or a value that is not a finite number.
    """
    x = finite_values(run, "the run's values")
    y = finite_values(baseline, "the baseline's values")
    if x.shape != y.shape:
        raise RankhouseError(
            f"paired values need two equally long lists, got {len(x)} and {len(y)} values"
        )
    return x - y


def score_matrix(scores: Sequence[Sequence[float]], systems: Sequence[str]) -> np.ndarray:
    """``scores`` as a systems x queries float array, checked against ``systems``.

    Each row is one system's values of one measure, each column one query, the same queries
    in the same order for every system (the caller keeps only the queries every system has a
    value for).

    Raises:
        RankhouseError: fewer than two systems or two queries, a row count other than
            ``len(systems)``, repeated system names, or a value that is not a finite number.
    """
    matrix = np.asarray(scores, dtype=float)
    if matrix.ndim != 2:
        raise RankhouseError(
            f"scores must be a table of systems x queries, got shape {matrix.shape}"
        )
    if matrix.shape[0] != len(systems):
        raise RankhouseError(
            f"scores has {matrix.shape[0]} rows for {len(systems)} systems; give one row per system"
        )
    if len(set(systems)) != len(systems):
        raise RankhouseError(f"the systems must have distinct names, got {list(systems)}")
    if matrix.shape[0] < 2 or matrix.shape[1] < 2:
        raise RankhouseError(
            f"comparing systems needs at least two systems and two queries, got "
            f"{matrix.shape[0]} and {matrix.shape[1]}"
        )
    if not np.isfinite(matrix).all():
        raise RankhouseError(
            "scores must be finite numbers; keep only the queries every system has a value for"
        )
    return matrix
