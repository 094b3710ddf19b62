"""Paired significance tests and multiple-testing corrections, wrapping scipy and statsmodels.

Every test compares two runs' per-query values of one measure, paired by query id by the
caller, and returns a two-sided p-value for "the mean difference is zero":

* ``t``: Student's paired t-test, :func:`scipy.stats.ttest_rel`.
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

Conventions shared by all four: when every paired difference is exactly zero the p-value is
1.0 (there is no evidence of a difference; scipy would return NaN for the t-test); with fewer
than two pairs the p-value is NaN (no test is possible) and NaN is never significant.

Corrections (:func:`correct`) come from :func:`statsmodels.stats.multitest.multipletests`:
``none``, ``bonferroni``, ``holm`` and ``bh`` (Benjamini-Hochberg, ``fdr_bh``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from .defaults import DEFAULT_PERMUTATIONS, DEFAULT_SEED
from .errors import Message, Option, RankhouseError

TESTS = ("t", "wilcoxon", "randomization", "bootstrap")
CORRECTIONS = ("none", "bonferroni", "holm", "bh")

_STATSMODELS_METHOD = {"bonferroni": "bonferroni", "holm": "holm", "bh": "fdr_bh"}


def paired_test(
    run: Sequence[float],
    baseline: Sequence[float],
    test: str = "t",
    *,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> float:
    """Two-sided p-value of a paired test of ``run`` against ``baseline``.

    Args:
        run: per-query values of the run, in the same query order as ``baseline``.
        baseline: per-query values of the baseline.
        test: ``'t'``, ``'wilcoxon'``, ``'randomization'`` or ``'bootstrap'``.
        permutations: resamples of the randomization and bootstrap tests.
        seed: seed of the randomization and bootstrap tests' random generator.

    Returns:
        The p-value; 1.0 when all differences are zero, NaN with fewer than two pairs.

    Raises:
        RankhouseError: an unknown test, unequal lengths, or a non-positive ``permutations``.
    """
    check_test(test)
    x = np.asarray(run, dtype=float)
    y = np.asarray(baseline, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise RankhouseError(
            f"a paired test needs two equally long lists of values, got {x.shape} and {y.shape}"
        )
    if permutations < 1:
        raise RankhouseError(f"permutations must be at least 1, got {permutations}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise RankhouseError("a paired test cannot use NaN values; drop those queries first")
    if len(x) < 2:
        return math.nan
    differences = x - y
    if not differences.any():
        return 1.0
    with warnings.catch_warnings():
        # Nearly constant differences make scipy warn about precision; the p-value stands.
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "t":
            return float(scipy_stats.ttest_rel(x, y).pvalue)
        if test == "wilcoxon":
            return float(scipy_stats.wilcoxon(x, y).pvalue)
        if test == "randomization":
            return _randomization(x, y, permutations, seed)
        return _bootstrap(differences, permutations, seed)


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def _randomization(x: np.ndarray, y: np.ndarray, permutations: int, seed: int) -> float:
    result = scipy_stats.permutation_test(
        (x, y),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=permutations,
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
        alternative="two-sided",
    )
    return float(result.pvalue)


def correct(
    pvalues: Sequence[float], method: str = "none", *, alpha: float = 0.05
) -> tuple[list[float], list[bool]]:
    """Correct a family of p-values for multiple testing.

    NaN p-values stay NaN, are not significant and are left out of the family.

    Args:
        pvalues: the family's p-values.
        method: ``'none'``, ``'bonferroni'``, ``'holm'`` or ``'bh'`` (Benjamini-Hochberg).
        alpha: the family-wise error rate (or false discovery rate for ``bh``).

    Returns:
        The corrected p-values and, for each, whether it is significant at ``alpha``
        (corrected p-value at most ``alpha``, as statsmodels decides).

    Raises:
        RankhouseError: an unknown method or an alpha outside (0, 1).
    """
    check_correction(method)
    check_alpha(alpha)
    values = np.asarray(pvalues, dtype=float)
    corrected = values.copy()
    reject = np.zeros(len(values), dtype=bool)
    present = ~np.isnan(values)
    if present.any():
        if method == "none":
            reject[present] = values[present] <= alpha
        else:
            flags, adjusted, _, _ = multipletests(
                values[present], alpha=alpha, method=_STATSMODELS_METHOD[method]
            )
            corrected[present] = adjusted
            reject[present] = flags
    return [float(v) for v in corrected], [bool(v) for v in reject]


def check_test(test: str) -> None:
    """Raise RankhouseError unless ``test`` is one of :data:`TESTS`."""
    if test not in TESTS:
        raise RankhouseError(f"unknown test {test!r}; choose one of {', '.join(TESTS)}")


def check_correction(method: str) -> None:
    """Raise RankhouseError unless ``method`` is one of :data:`CORRECTIONS`."""
    if method not in CORRECTIONS:
        raise RankhouseError(
            f"unknown correction {method!r}; choose one of {', '.join(CORRECTIONS)}"
        )


def check_alpha(alpha: float) -> None:
    """Raise RankhouseError unless ``0 < alpha < 1``."""
    if not 0.0 < alpha < 1.0:
        raise RankhouseError(
            Message(Option("alpha"), f" must lie strictly between 0 and 1, got {alpha}")
        )
