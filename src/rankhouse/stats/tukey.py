"""Tukey's honestly significant difference (HSD) over all pairs of several systems, with the
family-wise error rate controlled across the pairs: randomised (the default for IR) and
parametric.

**Randomised Tukey HSD** (Carterette, "Multiple testing in statistical analysis of
systems-based information retrieval experiments", TOIS 30(1), 2012; Sakai, *Laboratory
Experiments in Information Retrieval*, Springer, 2018). Under the null hypothesis that the
m systems are interchangeable on every query, each query's m values may be permuted across
the systems. For each of B permutations (every query permuted
independently, by ``numpy.random.default_rng(seed)``'s ``permuted``) the statistic is the
range of the system means, max_i mean_i* - min_i mean_i*. The p-value of the pair (i, j)
is the share of permutations whose range is at least the observed |mean_i - mean_j|:

    p_ij = (1 + #{b : range_b >= |mean_i - mean_j|}) / (B + 1)

The observed arrangement is counted as one of the permutations (+1 above and below), as
:func:`scipy.stats.permutation_test` does for random permutations (Phipson & Smyth, "Permutation
p-values should never be zero", Stat. Appl. Genet. Mol. Biol. 9(1), 2010); Carterette's
algorithm counts the sampled permutations alone (p = count / B), which can give 0. When the
number of distinct arrangements, (m!)^n, is at most B, every arrangement is enumerated
instead and p_ij is the exact share (the observed arrangement is among them, nothing is
added). "At least" allows a relative tolerance of 100 machine epsilons, as scipy's
permutation tests do, so that arrangements equal in theory but not in the last bit count.
With two systems this is Fisher's paired randomization (sign-flip) test of the mean
difference. A Monte Carlo p-value estimates the exact one with standard error
sqrt(p (1 - p) / B). The cost is B x m x n values shuffled: 10,000 permutations take about
11 s at 10 systems x 6,980 queries, 0.03 s at 4 systems x 43 queries (two cores).

**Parametric Tukey HSD** (Tukey, "The problem of multiple comparisons", 1953; Montgomery,
*Design and Analysis of Experiments*, chapter 3): q_ij = |mean_i - mean_j| / sqrt(MS_error
/ n) and p_ij = P(Q_{m, df} >= q_ij), Q the studentized range
(:data:`scipy.stats.studentized_range`). ``blocked=True`` (the default) takes MS_error and
df from the residual of the two-way system x query ANOVA (:mod:`rankhouse.stats.anova`;
df = (m - 1)(n - 1)), the model in which queries are blocks. ``blocked=False`` ignores the
pairing by query and takes the one-way ANOVA's within-system mean square (df = m (n - 1)):
that is what :func:`scipy.stats.tukey_hsd`, statsmodels' ``pairwise_tukeyhsd`` and ranx's
``tukey`` compute (ranx 0.3 calls scipy's ``tukey_hsd``; it is not randomised).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from ..defaults import DEFAULT_PERMUTATIONS, DEFAULT_SEED
from ..lazy import numpy as np
from ..lazy import scipy_stats
from .anova import two_way_anova
from .checks import check_resampling, score_matrix
from .pairwise import PairwiseResult, mean_matrix, symmetric

_BATCH_VALUES = 4_000_000
"""Values permuted at once (32 MB)."""

_TOLERANCE = 100
"""Machine epsilons of relative tolerance in "at least", as scipy's permutation tests."""


def randomised_tukey_hsd(
    scores: Sequence[Sequence[float]],
    systems: Sequence[str],
    *,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> PairwiseResult:
    """Every pair of systems by the randomised Tukey HSD test (see the module).

    Args:
        scores: systems x queries, one row per system, the same queries in the same order
            in every row, finite numbers.
        systems: the systems' names, one per row.
        permutations: B, the number of random permutations (every arrangement is
            enumerated instead when there are at most B).
        seed: the seed of ``numpy.random.default_rng``.

    Raises:
        RankhouseError: a malformed ``scores`` or fewer than one permutation.
    """
    matrix = score_matrix(scores, systems)
    check_resampling(permutations, seed)
    means, differences = mean_matrix(matrix)
    count, queries = matrix.shape
    exact = _few_arrangements(count, queries, permutations)
    ranges = _exact_ranges(matrix) if exact else _sampled_ranges(matrix, permutations, seed)
    ranges.sort()
    added = 0 if exact else 1
    p_values = {}
    for i in range(count):
        for j in range(i + 1, count):
            observed = abs(differences[i][j])
            threshold = observed - _TOLERANCE * np.finfo(float).eps * observed
            at_least = len(ranges) - int(np.searchsorted(ranges, threshold, side="left"))
            p_values[i, j] = (at_least + added) / (len(ranges) + added)
    return PairwiseResult(
        systems=tuple(systems),
        means=means,
        differences=differences,
        p_values=symmetric(count, p_values),
        method="randomised tukey hsd",
        num_queries=queries,
        permutations=len(ranges) if exact else permutations,
        seed=None if exact else seed,
        exact=exact,
    )


def _few_arrangements(count: int, queries: int, permutations: int) -> bool:
    """Whether (count!)^queries, the number of arrangements, is at most ``permutations``."""
    total = 1
    for _ in range(queries):
        total *= math.factorial(count)
        if total > permutations:
            return False
    return True


def _sampled_ranges(matrix: np.ndarray, permutations: int, seed: int) -> np.ndarray:
    """The range of system means under each of ``permutations`` random permutations."""
    count, queries = matrix.shape
    by_query = np.ascontiguousarray(matrix.T)  # queries x systems: each row is permuted
    rng = np.random.default_rng(seed)
    batch = max(1, _BATCH_VALUES // matrix.size)
    ranges = np.empty(permutations)
    for start in range(0, permutations, batch):
        rows = min(batch, permutations - start)
        shuffled = np.broadcast_to(by_query, (rows, queries, count)).copy()
        rng.permuted(shuffled, axis=2, out=shuffled)
        means = shuffled.mean(axis=1)
        ranges[start : start + rows] = means.max(axis=1) - means.min(axis=1)
    return ranges


def _exact_ranges(matrix: np.ndarray) -> np.ndarray:
    """The range of system means under every arrangement of every query's values."""
    count, queries = matrix.shape
    orders = np.asarray(list(itertools.permutations(range(count))))
    sums = matrix[orders, 0]  # arrangements x systems
    for j in range(1, queries):
        sums = (sums[:, None, :] + matrix[orders, j][None, :, :]).reshape(-1, count)
    means = sums / queries
    return means.max(axis=1) - means.min(axis=1)


def tukey_hsd(
    scores: Sequence[Sequence[float]], systems: Sequence[str], *, blocked: bool = True
) -> PairwiseResult:
    """Every pair of systems by the parametric Tukey HSD test (see the module).

    Args:
        scores: systems x queries, one row per system, the same queries in the same order
            in every row, finite numbers.
        systems: the systems' names, one per row.
        blocked: True for the error of the two-way system x query ANOVA (queries as
            blocks); False for the one-way error scipy's ``tukey_hsd`` uses.

    Raises:
        RankhouseError: a malformed ``scores``.
    """
    matrix = score_matrix(scores, systems)
    means, differences = mean_matrix(matrix)
    count, queries = matrix.shape
    if blocked:
        residual = two_way_anova(matrix).residual
        error, df = residual.mean_square, residual.df
    else:
        deviations = matrix - matrix.mean(axis=1, keepdims=True)
        df = count * (queries - 1)
        error = float(np.sum(deviations**2)) / df
    scale = math.sqrt(error / queries)
    p_values = {}
    for i in range(count):
        for j in range(i + 1, count):
            observed = abs(differences[i][j])
            if scale > 0:
                q = observed / scale
                p_values[i, j] = float(scipy_stats.studentized_range.sf(q, count, df))
            else:
                p_values[i, j] = 0.0 if observed > 0 else 1.0
    return PairwiseResult(
        systems=tuple(systems),
        means=means,
        differences=differences,
        p_values=symmetric(count, p_values),
        method="tukey hsd" if blocked else "tukey hsd (one-way)",
        num_queries=queries,
    )
