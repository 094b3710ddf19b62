"""All pairs of several systems: the result every all-pairs analysis returns (a matrix of
mean differences and p-values), and the all-pairs paired tests with a correction for
multiple testing across the pairs.

:func:`all_pairs` runs :func:`rankhouse.stats.paired_test` (t, Wilcoxon, randomization,
bootstrap) on each of the m (m - 1) / 2 pairs of systems, over the queries (the same for
every system), and corrects the family of pairs' p-values with
:func:`rankhouse.stats.correct` (Holm by default: it controls the family-wise error rate
under any dependence, Holm, Scand. J. Stat. 6, 1979; ``bh`` controls the false discovery
rate instead, Benjamini & Hochberg, JRSS B 57, 1995). The randomised Tukey HSD and the
parametric Tukey HSD (:mod:`rankhouse.stats.tukey`) return the same shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..defaults import DEFAULT_PERMUTATIONS, DEFAULT_SEED
from .checks import check_alpha, score_matrix
from .corrections import correct, correction_method
from .paired import PairedTest, check_test, paired_test


@dataclass(frozen=True)
class PairwiseResult:
    """Every pair of systems: mean differences and p-values.

    Attributes:
        systems: the systems, in the order of the rows of ``scores``.
        means: each system's mean over the queries.
        differences: ``differences[i][j]`` = ``means[i] - means[j]``.
        p_values: ``p_values[i][j]`` (= ``p_values[j][i]``), the p-value of the pair after
            the method's own control of multiplicity; 1.0 on the diagonal.
        method: what produced the p-values (``'randomised tukey hsd'``, ``'tukey hsd'``,
            ``'t, holm'``...).
        num_queries: the number of queries every system was compared on.
        permutations: the number of permutations or resamples, for a randomised method.
        seed: the random generator's seed, for a randomised method.
        exact: True when every permutation was enumerated instead of sampled.
    """

    systems: tuple[str, ...]
    means: tuple[float, ...]
    differences: tuple[tuple[float, ...], ...]
    p_values: tuple[tuple[float, ...], ...]
    method: str
    num_queries: int
    permutations: int | None = None
    seed: int | None = None
    exact: bool = False

    def p_value(self, first: str, second: str) -> float:
        """The p-value of the pair ``first``, ``second``."""
        return self.p_values[self.systems.index(first)][self.systems.index(second)]

    def difference(self, first: str, second: str) -> float:
        """``first``'s mean minus ``second``'s."""
        return self.differences[self.systems.index(first)][self.systems.index(second)]

    def separable(self, alpha: float = 0.05) -> list[tuple[str, str]]:
        """The pairs whose p-value is at most ``alpha``, in the order of ``systems``."""
        check_alpha(alpha)
        return [(a, b) for a, b, _, p in self.pairs() if p <= alpha]

    def pairs(self) -> list[tuple[str, str, float, float]]:
        """Each pair once, ``(first, second, first's mean minus second's, p-value)``, in the
        order of ``systems``."""
        count = len(self.systems)
        return [
            (self.systems[i], self.systems[j], self.differences[i][j], self.p_values[i][j])
            for i in range(count)
            for j in range(i + 1, count)
        ]


def mean_matrix(matrix) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]:
    """Each row's mean, and the matrix of differences of means (row minus column)."""
    means = tuple(float(v) for v in matrix.mean(axis=1))
    return means, tuple(tuple(a - b for b in means) for a in means)


def symmetric(count: int, values: dict[tuple[int, int], float]) -> tuple[tuple[float, ...], ...]:
    """A symmetric matrix with 1.0 on the diagonal from the values of pairs ``(i, j)``, i < j."""
    return tuple(
        tuple(1.0 if i == j else values[min(i, j), max(i, j)] for j in range(count))
        for i in range(count)
    )


def all_pairs(
    scores: Sequence[Sequence[float]],
    systems: Sequence[str],
    *,
    test: PairedTest = "t",
    correction: str | None = "holm",
    alpha: float = 0.05,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> PairwiseResult:
    """Every pair of systems by a paired test, corrected across the pairs.

    Args:
        scores: systems x queries, one row per system, the same queries in the same order
            in every row, finite numbers.
        systems: the systems' names, one per row.
        test: a test of :data:`rankhouse.stats.TESTS` or a callable (see
            :func:`rankhouse.stats.paired_test`); each pair is tested row i against row j.
        correction: a correction of :data:`rankhouse.stats.CORRECTION_NAMES` applied to the
            family of the m (m - 1) / 2 pairs (``'holm'`` by default, ``'bh'``...).
        alpha: the level the correction is made at (it matters to the two-stage FDR methods).
        permutations: resamples of the randomization and bootstrap tests.
        seed: their seed (the same for every pair).

    Raises:
        RankhouseError: as :func:`rankhouse.stats.paired_test` and
            :func:`rankhouse.stats.correct`, or a malformed ``scores``.
    """
    matrix = score_matrix(scores, systems)
    check_test(test)
    method = correction_method(correction)
    check_alpha(alpha)
    count = len(systems)
    pairs = [(i, j) for i in range(count) for j in range(i + 1, count)]
    raw = [
        paired_test(matrix[i], matrix[j], test, permutations=permutations, seed=seed)
        for i, j in pairs
    ]
    corrected, _ = correct(raw, correction, alpha=alpha)
    means, differences = mean_matrix(matrix)
    name = getattr(test, "__name__", test) if callable(test) else test
    randomised = test in ("randomization", "bootstrap")
    return PairwiseResult(
        systems=tuple(systems),
        means=means,
        differences=differences,
        p_values=symmetric(count, dict(zip(pairs, corrected, strict=True))),
        method=f"{name}, {method or 'none'}",
        num_queries=matrix.shape[1],
        permutations=permutations if randomised else None,
        seed=seed if randomised else None,
    )
