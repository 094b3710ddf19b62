"""Paired significance tests of two runs' per-query values, wrapping scipy, and the
corrections of a family of their p-values for multiple testing.

Every test compares two runs' per-query values of one measure, paired by query id by the
caller, and returns a two-sided p-value for "the mean difference is zero":

* ``t``: Student's paired t-test, as :func:`scipy.stats.ttest_rel` computes it (the same
  operations, with scipy's own Student t distribution, :func:`scipy.special.stdtr`; tests
  hold the two equal to the bit). Importing ``scipy.stats`` and statsmodels takes about
  0.8 s, more than a whole ``compare`` needs otherwise: they are imported only for the other
  tests and for a correction.
* ``wilcoxon``: Wilcoxon signed-rank test, :func:`scipy.stats.wilcoxon` (zero differences
  dropped, ``zero_method='wilcox'``; exact distribution for small samples, ``method='auto'``).
* ``randomization``: Fisher's paired randomization (sign-flip) test,
  :func:`scipy.stats.permutation_test` with ``permutation_type='samples'``, statistic the mean
  difference, ``permutations`` random resamples drawn from a generator seeded with ``seed``
  (exact enumeration when ``2**n`` is not larger than ``permutations``).
* ``bootstrap``: a paired bootstrap test of the mean difference (Efron & Tibshirani, *An
  Introduction to the Bootstrap*, 1993, section 16.4, shift method): the differences are
  centred on zero to impose the null hypothesis, resampled with replacement ``permutations``
  times by a generator seeded with ``seed``, and :func:`scipy.stats.monte_carlo_test` turns
  the null distribution of the mean into a two-sided p-value.

* a callable, as PyTerrier's ``Experiment`` takes one: called as ``test(run, baseline)``
  with the two arrays of paired values, it returns what :func:`scipy.stats.ttest_rel` does
  (a tuple or result whose second item, or ``pvalue``, is the p-value).

Conventions shared by the four named tests: when every paired difference is exactly zero the
p-value is 1.0 (there is no evidence of a difference; scipy would return NaN for the t-test);
with fewer than two pairs the p-value is NaN (no test is possible) and NaN is never
significant. A callable is called whenever there are two pairs or more.

**Corrections.** :func:`correct` wraps :func:`statsmodels.stats.multitest.multipletests`:
``none`` (or None), ``bh`` (Benjamini-Hochberg, statsmodels' ``fdr_bh``), and every method
name and alias statsmodels accepts (``bonferroni``/``bonf``/``b``, ``sidak``, ``holm``,
``holm-sidak``/``hs``, ``simes-hochberg``, ``hommel``, ``fdr_bh``, ``fdr_by``, ``fdr_tsbh``,
``fdr_tsbky``, ``fdr_gbs``...; see :data:`CORRECTION_NAMES`), in any case. Holm's step-down,
the gate's default, is computed here as statsmodels computes it (sorted p-values times m,
m - 1, ..., 1, made non-decreasing, cut at 1; rejected up to the first p_(i) > alpha / (m -
i + 1)), so that a nightly check imports no statsmodels.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ..defaults import DEFAULT_PERMUTATIONS, DEFAULT_SEED
from ..errors import RankhouseError
from ..lazy import multitest, scipy_special, scipy_stats
from ..lazy import numpy as np
from .estimates import check_alpha, check_resampling

TESTS = ("t", "wilcoxon", "randomization", "bootstrap")

_BATCH_VALUES = 1_000_000
"""Resampled values drawn at once by the randomization and bootstrap tests: with scipy's
index and data arrays, about 80 MB at most, however many resamples and queries."""
PairedTest = str | Callable[..., Any]
"""A test name of :data:`TESTS`, or a callable as :func:`scipy.stats.ttest_rel`."""


def paired_test(
    run: Sequence[float],
    baseline: Sequence[float],
    test: PairedTest = "t",
    *,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> float:
    """Two-sided p-value of a paired test of ``run`` against ``baseline``.

    Args:
        run: per-query values of the run, in the same query order as ``baseline``.
        baseline: per-query values of the baseline.
        test: ``'t'``, ``'wilcoxon'``, ``'randomization'``, ``'bootstrap'``, or a callable
            ``test(run, baseline)`` returning a (statistic, p-value) pair as
            :func:`scipy.stats.ttest_rel` does.
        permutations: resamples of the randomization and bootstrap tests.
        seed: seed of the randomization and bootstrap tests' random generator.

    Returns:
        The p-value; NaN with fewer than two pairs; for the named tests 1.0 when all
        differences are zero.

    Raises:
        RankhouseError: an unknown test, unequal lengths, ``permutations`` outside 1 to
            :data:`~rankhouse.defaults.MAX_PERMUTATIONS`, a negative ``seed``, or a
            callable that returns no p-value.
    """
    check_test(test)
    x = np.asarray(run, dtype=float)
    y = np.asarray(baseline, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise RankhouseError(
            f"a paired test needs two equally long lists of values, got {x.shape} and {y.shape}"
        )
    check_resampling(permutations, seed)
    if np.isnan(x).any() or np.isnan(y).any():
        raise RankhouseError("a paired test cannot use NaN values; drop those queries first")
    if len(x) < 2:
        return math.nan
    if callable(test):
        return _called(test, x, y)
    differences = x - y
    if not differences.any():
        return 1.0
    with warnings.catch_warnings():
        # Nearly constant differences make scipy warn about precision; the p-value stands.
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "t":
            return _t_test(differences)
        if test == "wilcoxon":
            return float(scipy_stats.wilcoxon(x, y).pvalue)
        if test == "randomization":
            return _randomization(x, y, permutations, seed)
        return _bootstrap(differences, permutations, seed)


def _called(test: Callable[..., Any], x: np.ndarray, y: np.ndarray) -> float:
    """The p-value of a user's test: the second item of what it returns, as PyTerrier reads it
    (or its ``pvalue``)."""
    result = test(x, y)
    value = getattr(result, "pvalue", None)
    if value is None:
        try:
            value = result[1]
        except (TypeError, IndexError, KeyError):
            raise RankhouseError(
                f"the test {getattr(test, '__name__', test)!r} returned {result!r}; a test "
                "returns (statistic, p-value), as scipy.stats.ttest_rel does"
            ) from None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise RankhouseError(
            f"the test {getattr(test, '__name__', test)!r} returned the p-value {value!r}, "
            "not a number"
        ) from None


def _t_test(differences: np.ndarray) -> float:
    """The two-sided p-value of ``scipy.stats.ttest_rel(x, y)`` for ``differences = x - y``,
    step by step as scipy computes it: the mean, the variance as the mean squared deviation
    times n / (n - 1), t = mean / sqrt(variance / n), then 2 * sf(|t|) of Student's t with
    n - 1 degrees of freedom."""
    n = len(differences)
    mean = np.mean(differences)
    deviations = differences - np.mean(differences, keepdims=True)
    variance = np.mean(deviations**2) * (np.float64(n) / np.float64(n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(variance / n)
    return float(2 * scipy_special.stdtr(np.float64(n - 1), -np.abs(t)))


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def _batch(n: int) -> int:
    """Resamples drawn at once for ``n`` pairs: memory stays bounded however many there are
    (scipy draws the same numbers batch by batch as at once: the p-value does not change)."""
    return max(1, _BATCH_VALUES // max(n, 1))


def _randomization(x: np.ndarray, y: np.ndarray, permutations: int, seed: int) -> float:
    result = scipy_stats.permutation_test(
        (x, y),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=permutations,
        batch=_batch(len(x)),
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue)


def bootstrap_null_sampler(differences: np.ndarray, seed: int):
    """The resampler of the bootstrap test: draws from the differences centred on zero."""
    centred = differences - differences.mean()
    rng = np.random.default_rng(seed)

    def draw(size):
        return rng.choice(centred, size=size, replace=True)

    return draw


def _bootstrap(differences: np.ndarray, permutations: int, seed: int) -> float:
    result = scipy_stats.monte_carlo_test(
        differences,
        bootstrap_null_sampler(differences, seed),
        np.mean,
        vectorized=True,
        n_resamples=permutations,
        batch=_batch(len(differences)),
        alternative="two-sided",
    )
    return float(result.pvalue)


def check_test(test: PairedTest) -> None:
    """Raise RankhouseError unless ``test`` is one of :data:`TESTS` or a callable."""
    if callable(test):
        return
    if test not in TESTS:
        raise RankhouseError(
            f"unknown test {test!r}; choose one of {', '.join(TESTS)} (or, from Python, a "
            "function as scipy.stats.ttest_rel)"
        )


CORRECTIONS = ("none", "bonferroni", "holm", "bh")
"""The short correction names (the CLI's since the start); statsmodels' own are accepted too."""

CORRECTION_NAMES: dict[str, tuple[str, ...]] = {
    "none": ("none",),
    "bonferroni": ("bonferroni", "bonf", "b"),
    "sidak": ("sidak", "s"),
    "holm": ("holm", "h"),
    "holm-sidak": ("holm-sidak", "hs"),
    "simes-hochberg": ("simes-hochberg", "sh"),
    "hommel": ("hommel", "ho"),
    "fdr_bh": ("fdr_bh", "bh", "fdr_i", "fdr_p", "fdri", "fdrp"),
    "fdr_by": ("fdr_by", "fdr_n", "fdr_c", "fdrn", "fdrcorr"),
    "fdr_tsbh": ("fdr_tsbh", "fdr_2sbh"),
    "fdr_tsbky": ("fdr_tsbky", "fdr_2sbky", "fdr_twostage"),
    "fdr_gbs": ("fdr_gbs",),
}
"""Every correction by its statsmodels method name, with the names that select it (PyTerrier's
table of aliases, and rankhouse's ``bh``)."""

_METHOD_OF = {alias: method for method, aliases in CORRECTION_NAMES.items() for alias in aliases}


def correct(
    pvalues: Sequence[float], method: str | None = "none", *, alpha: float = 0.05
) -> tuple[list[float], list[bool]]:
    """Correct a family of p-values for multiple testing.

    NaN p-values stay NaN, are not significant and are left out of the family.

    Args:
        pvalues: the family's p-values.
        method: ``'none'`` (or None), or any name of :data:`CORRECTION_NAMES`: statsmodels'
            methods and aliases (``'bonferroni'``, ``'holm'``, ``'holm-sidak'``,
            ``'fdr_bh'``...) and ``'bh'`` (Benjamini-Hochberg).
        alpha: the family-wise error rate (or false discovery rate for the ``fdr_`` methods).

    Returns:
        The corrected p-values and, for each, whether it is significant at ``alpha``
        (corrected p-value at most ``alpha``, as statsmodels decides).

    Raises:
        RankhouseError: an unknown method or an alpha outside (0, 1).
    """
    statsmodels_method = correction_method(method)
    check_alpha(alpha)
    values = np.asarray(pvalues, dtype=float)
    corrected = values.copy()
    reject = np.zeros(len(values), dtype=bool)
    present = ~np.isnan(values)
    if present.any():
        if statsmodels_method is None:
            reject[present] = values[present] <= alpha
        elif statsmodels_method == "holm":
            corrected[present], reject[present] = _holm(values[present], alpha)
        else:
            flags, adjusted, _, _ = multitest.multipletests(
                values[present], alpha=alpha, method=statsmodels_method
            )
            corrected[present] = adjusted
            reject[present] = flags
    return [float(v) for v in corrected], [bool(v) for v in reject]


def _holm(values, alpha: float):
    """Holm's step-down adjusted p-values and rejections (statsmodels' ``holm``)."""
    count = len(values)
    order = np.argsort(values)
    ranked = values[order]
    steps = np.arange(count, 0, -1)
    kept = np.nonzero(ranked > alpha / steps)[0]
    rejected = np.ones(count, dtype=bool)
    rejected[(kept[0] if kept.size else count) :] = False
    adjusted = np.minimum(np.maximum.accumulate(ranked * steps), 1.0)
    corrected, reject = np.empty(count), np.empty(count, dtype=bool)
    corrected[order], reject[order] = adjusted, rejected
    return corrected, reject


def correction_method(method: str | None) -> str | None:
    """statsmodels' name of a correction (None for none), whatever name selected it.

    Raises:
        RankhouseError: a name that selects no correction.
    """
    if method is None:
        return None
    found = _METHOD_OF.get(str(method).lower())
    if found is None:
        names = ", ".join(CORRECTION_NAMES)
        raise RankhouseError(
            f"unknown correction {method!r}; choose one of {names} (or an alias statsmodels "
            "accepts: bonf, hs, fdr_i, ...)"
        )
    return None if found == "none" else found


def check_correction(method: str | None) -> None:
    """Raise RankhouseError unless ``method`` names a correction (see :data:`CORRECTION_NAMES`)."""
    correction_method(method)
