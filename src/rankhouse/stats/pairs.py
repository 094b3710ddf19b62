"""Many systems at once, every pair of them: the two-way analysis of variance, the pairs
tested with the family-wise error controlled (paired tests with a correction, randomised and
parametric Tukey HSD), all returning one shape (:class:`PairwiseResult`), and the compact
letter display of the pairs that cannot be told apart.

**The two-way analysis of variance** of several systems over the same queries: system x
query, no interaction, one observation per cell (a randomized complete block design with the
queries as blocks: Montgomery, *Design and Analysis of Experiments*, chapter 4; the model of
Carterette, TOIS 30(1), 2012, for IR evaluation). With x_ij the score of system i (of m) on
query j (of n), row means x_i., column means x_.j and grand mean x_..:

    SS_system   = n * sum_i (x_i. - x_..)^2,              df = m - 1
    SS_query    = m * sum_j (x_.j - x_..)^2,              df = n - 1
    SS_residual = sum_ij (x_ij - x_i. - x_.j + x_..)^2,   df = (m - 1)(n - 1)
    MS = SS / df,  F = MS / MS_residual,  p = P(F_{df, df_residual} >= F)

The p-value comes from :func:`scipy.special.fdtrc`. The table equals statsmodels'
``anova_lm(ols('score ~ C(system) + C(query)', data))`` (type I; with one observation per
cell the design is balanced and types I, II and III agree). When the residual sum of
squares is 0 (scores exactly additive), F is infinite (p = 0) for a source with a non-zero
sum of squares and NaN for one without.

**All pairs by a paired test.** :func:`all_pairs` runs :func:`rankhouse.stats.paired_test`
(t, Wilcoxon, randomization, bootstrap) on each of the m (m - 1) / 2 pairs of systems, over
the queries (the same for every system), and corrects the family of pairs' p-values with
:func:`rankhouse.stats.correct` (Holm by default: it controls the family-wise error rate
under any dependence, Holm, Scand. J. Stat. 6, 1979; ``bh`` controls the false discovery
rate instead, Benjamini & Hochberg, JRSS B 57, 1995).

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
df from the residual of the two-way system x query ANOVA (:func:`two_way_anova`;
df = (m - 1)(n - 1)), the model in which queries are blocks. ``blocked=False`` ignores the
pairing by query and takes the one-way ANOVA's within-system mean square (df = m (n - 1)):
that is what :func:`scipy.stats.tukey_hsd`, statsmodels' ``pairwise_tukeyhsd`` and ranx's
``tukey`` compute (ranx 0.3 calls scipy's ``tukey_hsd``; it is not randomised).

**Compact letter display**: a letter per group of systems that cannot be told apart, so that
two systems share a letter exactly when their difference is not significant. The
insert-and-absorb algorithm with the sweeping step (Piepho, "An algorithm for a
letter-based representation of all-pairwise comparisons", J. Comput. Graph. Stat. 13(2),
2004; the algorithm of R's multcompView):

1. Start with one column (letter) holding every system.
2. Insert: for each significant pair (i, j), every column holding both is replaced by two
   copies, one without i and one without j. Absorb: a column whose systems are all in
   another column is dropped.
3. Sweep: for each column in turn and each of its systems, the system leaves the column
   when it has another column and every other system of the column shares another column
   with it (the letter is redundant there); then empty and absorbed columns are dropped.
4. Letters: the columns are ordered by their best system (then their next best, ...), the
   systems ordered by mean, best first (the measure's direction decides; ties keep the
   given order), and named a, b, c, ..., z, A, ..., Z, then aa, ab, ...

Each system's letters are read in that order (``'ab'``). Two systems share a letter if and
only if the pair is not among the significant ones.
"""

from __future__ import annotations

import itertools
import math
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..defaults import DEFAULT_PERMUTATIONS, DEFAULT_SEED
from ..errors import RankhouseError
from ..lazy import numpy as np
from ..lazy import scipy_special, scipy_stats
from .estimates import check_alpha, check_direction, check_resampling, score_matrix
from .paired import PairedTest, check_test, correct, correction_method, paired_test


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


@dataclass(frozen=True)
class AnovaRow:
    """One source of variation: sum of squares, degrees of freedom, mean square, F and its
    p-value (NaN for the residual)."""

    source: str
    sum_of_squares: float
    df: int
    mean_square: float
    f: float
    p_value: float


@dataclass(frozen=True)
class AnovaTable:
    """The two-way ANOVA table: the ``system``, ``query`` and ``residual`` rows."""

    system: AnovaRow
    query: AnovaRow
    residual: AnovaRow

    @property
    def rows(self) -> tuple[AnovaRow, AnovaRow, AnovaRow]:
        return (self.system, self.query, self.residual)


def two_way_anova(scores: Sequence[Sequence[float]]) -> AnovaTable:
    """The system x query ANOVA table of ``scores`` (systems x queries, finite numbers).

    Raises:
        RankhouseError: fewer than two systems or two queries, or a value that is not a
            finite number.
    """
    matrix = score_matrix(scores, [str(i) for i in range(len(scores))])
    m, n = matrix.shape
    grand = matrix.mean()
    system_means = matrix.mean(axis=1)
    query_means = matrix.mean(axis=0)
    residuals = matrix - system_means[:, None] - query_means[None, :] + grand
    residual_ss = float(np.sum(residuals**2))
    residual_df = (m - 1) * (n - 1)
    residual_ms = residual_ss / residual_df

    def row(source: str, ss: float, df: int) -> AnovaRow:
        ms = ss / df
        f = _ratio(ms, residual_ms)
        p = float(scipy_special.fdtrc(np.float64(df), np.float64(residual_df), np.float64(f)))
        return AnovaRow(source, ss, df, ms, f, 0.0 if f == math.inf else p)

    return AnovaTable(
        system=row("system", float(n * np.sum((system_means - grand) ** 2)), m - 1),
        query=row("query", float(m * np.sum((query_means - grand) ** 2)), n - 1),
        residual=AnovaRow("residual", residual_ss, residual_df, residual_ms, math.nan, math.nan),
    )


def _ratio(mean_square: float, residual_mean_square: float) -> float:
    if residual_mean_square > 0:
        return mean_square / residual_mean_square
    return math.inf if mean_square > 0 else math.nan


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
        scores: systems x queries, as :func:`all_pairs` takes them.
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


def compact_letter_display(
    systems: Sequence[str],
    means: Sequence[float],
    separable: Iterable[tuple[str, str]],
    *,
    direction: int = 1,
) -> dict[str, str]:
    """The letters of each system, best system first (see the module).

    Args:
        systems: the systems' names.
        means: each system's mean, in the order of ``systems``.
        separable: the pairs whose difference is significant
            (:meth:`rankhouse.stats.pairs.PairwiseResult.separable`).
        direction: +1 when higher is better, -1 when lower is.

    Returns:
        system -> its letters, in order of mean, best first.

    Raises:
        RankhouseError: a pair naming an unknown system, repeated names, means of another
            length, or a direction other than +1 or -1.
    """
    check_direction(direction)
    if len(means) != len(systems) or len(set(systems)) != len(systems):
        raise RankhouseError(
            f"compact letters need distinct systems and one mean each, got {len(systems)} "
            f"systems ({len(set(systems))} distinct) and {len(means)} means"
        )
    order = sorted(range(len(systems)), key=lambda i: -direction * means[i])
    ranked = [systems[i] for i in order]
    position = {name: k for k, name in enumerate(ranked)}
    pairs = set()
    for first, second in separable:
        if first not in position or second not in position:
            raise RankhouseError(f"the pair ({first!r}, {second!r}) names an unknown system")
        pairs.add(frozenset((position[first], position[second])))
    columns = [frozenset(range(len(ranked)))]
    for pair in sorted(tuple(sorted(p)) for p in pairs if len(p) == 2):
        columns = _insert(columns, *pair)
    columns = _sweep(_absorb(columns))
    columns.sort(key=sorted)
    letters = {name: "" for name in ranked}
    for k, column in enumerate(columns):
        for member in sorted(column):
            letters[ranked[member]] += _letter(k)
    return letters


def _insert(columns: list[frozenset[int]], i: int, j: int) -> list[frozenset[int]]:
    split = []
    for column in columns:
        if i in column and j in column:
            split += [column - {i}, column - {j}]
        else:
            split.append(column)
    return _absorb(split)


def _absorb(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    """The columns that are no subset of another (of equal columns, the first)."""
    kept: list[frozenset[int]] = []
    for k, column in enumerate(columns):
        if not column:
            continue
        inside = any(
            column < other or (column == other and m < k) for m, other in enumerate(columns)
        )
        if not inside:
            kept.append(column)
    return kept


def _sweep(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    columns = sorted(columns, key=sorted)
    for k in range(len(columns)):
        for member in sorted(columns[k]):
            others = [c for m, c in enumerate(columns) if m != k and member in c]
            if others and all(
                any(partner in c for c in others) for partner in columns[k] if partner != member
            ):
                columns[k] = columns[k] - {member}
    return _absorb(columns)


def _letter(k: int) -> str:
    """a..z, A..Z, then aa, ab, ... for the k-th column."""
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    name = alphabet[k % len(alphabet)]
    k //= len(alphabet)
    while k:
        k -= 1
        name = string.ascii_lowercase[k % 26] + name
        k //= 26
    return name
