"""Tukey's HSD over all pairs of systems.

Randomised: with two systems it is Fisher's exact paired randomization test (scipy's
``permutation_test``, enumerated); with more, its exact form equals a brute-force enumeration
written here, and its sampled form estimates that exact p-value within sampling error.
Parametric: the one-way form is scipy's ``tukey_hsd``, statsmodels' ``pairwise_tukeyhsd`` and
what ranx's ``compare(..., stat_test='tukey')`` computes (ranx 0.3 passes each run's
per-query scores to ``ranx.statistical_tests.tukey_hsd_test``, which calls scipy's
``tukey_hsd``: ranx's Tukey test is not randomised); the blocked form is statsmodels'
studentized-range computation fed the two-way ANOVA's residual mean square and degrees of
freedom."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from ranx.statistical_tests import tukey_hsd_test
from scipy import stats as scipy_stats
from statsmodels.sandbox.stats.multicomp import tukeyhsd
from statsmodels.stats.multicomp import pairwise_tukeyhsd

from rankhouse.errors import RankhouseError
from rankhouse.stats import randomised_tukey_hsd, tukey_hsd, two_way_anova


def _scores(systems: int, queries: int, effect: float = 0.05, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    difficulty = rng.random(queries)
    return np.clip(
        difficulty[None, :]
        + effect * np.arange(systems)[:, None]
        + rng.normal(0, 0.1, (systems, queries)),
        0,
        1,
    )


def _names(count: int) -> list[str]:
    return [f"s{i}" for i in range(count)]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("queries", [5, 10, 13])
def test_two_systems_is_fishers_exact_randomization_test(seed, queries):
    """Permuting two systems' values on a query is flipping the sign of its difference, and
    the range of two means is |mean difference|: (2!)^n <= 10,000 arrangements, all counted."""
    x, y = _scores(2, queries, 0.03, seed)
    expected = scipy_stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,
    ).pvalue
    got = randomised_tukey_hsd([x, y], ["x", "y"])
    assert got.exact and got.permutations == 2**queries and got.seed is None
    assert math.isclose(got.p_value("x", "y"), expected, rel_tol=1e-12)


def test_two_systems_with_ties_count_theoretically_equal_arrangements():
    """0/1 values make many arrangements' ranges equal to the observed one in theory; the
    relative tolerance counts them, as scipy's does."""
    x = np.array([1, 0, 1, 1, 0, 1, 0, 1, 1, 1], dtype=float) * 0.1
    y = np.array([0, 0, 1, 0, 0, 1, 1, 0, 1, 0], dtype=float) * 0.1
    expected = scipy_stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,
    ).pvalue
    assert math.isclose(randomised_tukey_hsd([x, y], ["x", "y"]).p_value("x", "y"), expected)


def _brute_force(scores: np.ndarray) -> dict[tuple[int, int], float]:
    """Every arrangement of every query's values, one at a time."""
    count, queries = scores.shape
    observed = scores.mean(axis=1)
    ranges = []
    orders = list(itertools.permutations(range(count)))
    for arrangement in itertools.product(orders, repeat=queries):
        permuted = np.array(
            [[scores[arrangement[j][i], j] for j in range(queries)] for i in range(count)]
        )
        means = permuted.mean(axis=1)
        ranges.append(means.max() - means.min())
    ranges = np.array(ranges)
    return {
        (i, j): float(np.mean(ranges >= abs(observed[i] - observed[j]) - 1e-12))
        for i in range(count)
        for j in range(i + 1, count)
    }


@pytest.mark.parametrize(("systems", "queries"), [(3, 4), (4, 2), (3, 5)])
def test_few_arrangements_are_all_enumerated(systems, queries):
    scores = _scores(systems, queries, 0.1, seed=systems + queries)
    got = randomised_tukey_hsd(scores, _names(systems), permutations=10_000)
    assert got.exact and got.permutations == math.factorial(systems) ** queries
    for (i, j), expected in _brute_force(scores).items():
        assert math.isclose(got.p_values[i][j], expected, rel_tol=1e-12)
        assert got.p_values[j][i] == got.p_values[i][j]


@pytest.mark.parametrize("seed", [1, 42])
def test_sampled_p_values_estimate_the_exact_ones(seed):
    """3 systems x 5 queries have 6^5 = 7,776 arrangements; 4,000 sampled permutations
    estimate each exact p with standard error sqrt(p (1 - p) / B) (the binomial standard
    error of a share) plus the +1 / (B + 1) of counting the observed arrangement: the
    estimates lie within 4 standard errors."""
    scores = _scores(3, 5, 0.1, seed=8)
    exact = randomised_tukey_hsd(scores, _names(3), permutations=7776)
    sampled = randomised_tukey_hsd(scores, _names(3), permutations=4000, seed=seed)
    assert exact.exact and not sampled.exact
    assert (sampled.permutations, sampled.seed) == (4000, seed)
    for (_, _, _, p), (_, _, _, estimate) in zip(exact.pairs(), sampled.pairs(), strict=True):
        error = math.sqrt(p * (1 - p) / 4000)
        assert abs(estimate - p) <= 4 * error + 1 / 4001


def test_the_observed_arrangement_is_counted_in_sampled_p_values():
    """(1 + count) / (B + 1): never 0, at least 1 / (B + 1)."""
    scores = _scores(4, 60, 0.3)
    got = randomised_tukey_hsd(scores, _names(4), permutations=999, seed=3)
    assert got.p_value("s0", "s3") == 1 / 1000


def test_same_seed_same_p_values_other_seed_others():
    scores = _scores(4, 30, 0.02)
    first = randomised_tukey_hsd(scores, _names(4), permutations=500, seed=1)
    assert randomised_tukey_hsd(scores, _names(4), permutations=500, seed=1) == first
    assert randomised_tukey_hsd(scores, _names(4), permutations=500, seed=2) != first


def test_large_inputs_are_permuted_in_batches_with_the_same_draws():
    """Batches are cut by the input's size; one permutation at a time gives the same
    ranges."""
    scores = _scores(3, 40, 0.02)
    rng = np.random.default_rng(9)
    ranges = []
    for _ in range(200):
        shuffled = np.broadcast_to(scores.T, (1, 40, 3)).copy()
        rng.permuted(shuffled, axis=2, out=shuffled)
        means = shuffled.mean(axis=1)[0]
        ranges.append(means.max() - means.min())
    observed = abs(scores[0].mean() - scores[2].mean())
    expected = (1 + sum(r >= observed * (1 - 100 * np.finfo(float).eps) for r in ranges)) / 201
    got = randomised_tukey_hsd(scores, _names(3), permutations=200, seed=9)
    assert got.p_value("s0", "s2") == expected


@pytest.mark.parametrize(("systems", "queries"), [(3, 10), (4, 43), (10, 50)])
def test_one_way_is_scipys_tukey_hsd_and_ranxs_tukey(systems, queries):
    scores = _scores(systems, queries)
    got = tukey_hsd(scores, _names(systems), blocked=False)
    expected = scipy_stats.tukey_hsd(*scores).pvalue
    ranx = tukey_hsd_test(_names(systems), list(scores), max_p=0.05)
    for row in ranx:
        i, j = int(row["control"][1:]), int(row["treatment"][1:])
        assert math.isclose(got.p_values[i][j], expected[i, j], rel_tol=1e-9, abs_tol=1e-15)
        assert math.isclose(got.p_values[i][j], row["p-value"], rel_tol=1e-9, abs_tol=1e-15)
    assert got.method == "tukey hsd (one-way)"


def test_one_way_is_statsmodels_pairwise_tukeyhsd():
    scores = _scores(4, 30)
    groups = np.repeat(_names(4), 30)
    expected = pairwise_tukeyhsd(scores.ravel(), groups)
    got = tukey_hsd(scores, _names(4), blocked=False)
    pairs = itertools.combinations(range(4), 2)
    for (i, j), p, difference in zip(pairs, expected.pvalues, expected.meandiffs, strict=True):
        assert math.isclose(got.p_values[i][j], p, rel_tol=1e-9, abs_tol=1e-15)
        # statsmodels' mean difference is the second group's minus the first's
        assert math.isclose(got.differences[j][i], difference, rel_tol=1e-12)


@pytest.mark.parametrize(("systems", "queries"), [(3, 10), (4, 43), (10, 50)])
def test_blocked_is_the_studentized_range_on_the_anovas_residual(systems, queries):
    """statsmodels' tukeyhsd(means, n, variance, df) with the two-way ANOVA's residual mean
    square: q = |mean_i - mean_j| / sqrt(MS / n) against the studentized range with m and
    (m - 1)(n - 1) degrees of freedom (statsmodels multiplies a scalar df by m)."""
    scores = _scores(systems, queries)
    residual = two_way_anova(scores).residual
    result = tukeyhsd(scores.mean(axis=1), queries, residual.mean_square, df=residual.df / systems)
    (first, second), p_values = result[0], result[8]
    assert result[6] == residual.df
    got = tukey_hsd(scores, _names(systems))
    for i, j, p in zip(first, second, p_values, strict=True):
        assert math.isclose(got.p_values[i][j], p, rel_tol=1e-9, abs_tol=1e-15)
    assert got.method == "tukey hsd"


def test_blocking_removes_the_query_variance():
    """Queries differ far more than systems: the one-way error drowns the systems' difference,
    the blocked one does not (why IR analyses block on queries)."""
    rng = np.random.default_rng(4)
    scores = rng.random(40)[None, :] + 0.02 * np.arange(3)[:, None] + rng.normal(0, 0.02, (3, 40))
    blocked = tukey_hsd(scores, _names(3)).p_value("s0", "s2")
    one_way = tukey_hsd(scores, _names(3), blocked=False).p_value("s0", "s2")
    assert blocked < 0.05 < one_way


def test_the_result_holds_means_and_differences():
    scores = _scores(3, 10)
    got = randomised_tukey_hsd(scores, ["a", "b", "c"], permutations=100)
    assert got.systems == ("a", "b", "c") and got.num_queries == 10
    assert got.means == tuple(scores.mean(axis=1))
    assert got.difference("a", "c") == scores[0].mean() - scores[2].mean()
    assert [got.p_values[i][i] for i in range(3)] == [1.0, 1.0, 1.0]
    assert got.method == "randomised tukey hsd"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: randomised_tukey_hsd([[0.1, 0.2]], ["a"]), "at least two systems"),
        (lambda: randomised_tukey_hsd([[0.1, 0.2], [0.3, 0.1]], ["a"]), "2 rows for 1 systems"),
        (lambda: tukey_hsd([[0.1, 0.2], [0.3, 0.1]], ["a", "a"]), "distinct names"),
        (
            lambda: randomised_tukey_hsd([[0.1, 0.2], [0.3, 0.1]], ["a", "b"], permutations=0),
            "permutations must lie between 1 and 1,000,000",
        ),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(RankhouseError, match=message):
        call()
