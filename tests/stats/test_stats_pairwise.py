"""All pairs of systems by a paired test, corrected across the pairs: scipy's tests and
statsmodels' corrections, pair by pair."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from rankhouse.errors import RankhouseError
from rankhouse.stats import all_pairs


def _scores(systems: int = 4, queries: int = 43, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    difficulty = rng.random(queries)
    return np.clip(
        difficulty[None, :]
        + 0.03 * np.arange(systems)[:, None]
        + rng.normal(0, 0.1, (systems, queries)),
        0,
        1,
    )


NAMES = ["bm25", "dense", "rerank", "fusion"]


@pytest.mark.parametrize(
    ("test", "reference", "correction", "statsmodels_name"),
    [
        ("t", scipy_stats.ttest_rel, "holm", "holm"),
        ("t", scipy_stats.ttest_rel, "bh", "fdr_bh"),
        ("wilcoxon", scipy_stats.wilcoxon, "holm", "holm"),
        ("wilcoxon", scipy_stats.wilcoxon, "bonferroni", "bonferroni"),
    ],
)
def test_each_pair_is_scipys_test_corrected_by_statsmodels(
    test, reference, correction, statsmodels_name
):
    scores = _scores()
    pairs = list(itertools.combinations(range(4), 2))
    raw = [reference(scores[i], scores[j]).pvalue for i, j in pairs]
    expected = multipletests(raw, alpha=0.05, method=statsmodels_name)[1]
    got = all_pairs(scores, NAMES, test=test, correction=correction)
    for (i, j), p in zip(pairs, expected, strict=True):
        assert math.isclose(got.p_values[i][j], p, rel_tol=1e-12)
        assert got.p_values[j][i] == got.p_values[i][j]
    assert got.method == f"{test}, {statsmodels_name}"


def test_no_correction_leaves_the_p_values():
    scores = _scores()
    got = all_pairs(scores, NAMES, correction="none")
    assert got.p_value("bm25", "fusion") == scipy_stats.ttest_rel(scores[0], scores[3]).pvalue


def test_the_matrix_of_differences_and_the_separable_pairs():
    scores = _scores(queries=200)
    got = all_pairs(scores, NAMES)
    means = scores.mean(axis=1)
    assert got.means == tuple(means)
    for i, j in itertools.product(range(4), repeat=2):
        assert got.differences[i][j] == means[i] - means[j]
        assert got.differences[i][j] == -got.differences[j][i]
    assert [got.p_values[i][i] for i in range(4)] == [1.0] * 4
    separable = got.separable(0.05)
    assert separable == [(a, b) for a, b, _, p in got.pairs() if p <= 0.05]
    assert ("bm25", "fusion") in separable
    assert len(got.pairs()) == 6 and got.num_queries == 200


def test_randomised_tests_record_their_permutations_and_seed():
    got = all_pairs(_scores(3, 20), NAMES[:3], test="randomization", permutations=500, seed=7)
    assert (got.permutations, got.seed) == (500, 7)
    assert all_pairs(_scores(3, 20), NAMES[:3]).permutations is None


def test_a_callable_test():
    scores = _scores(3, 20)
    got = all_pairs(scores, NAMES[:3], test=scipy_stats.ttest_rel, correction="none")
    assert got.p_value("bm25", "rerank") == scipy_stats.ttest_rel(scores[0], scores[2]).pvalue
    assert got.method == "ttest_rel, none"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"test": "z"}, "unknown test 'z'"),
        ({"correction": "tukey"}, "unknown correction 'tukey'"),
        ({"alpha": 0.0}, "alpha must lie strictly between 0 and 1"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(RankhouseError, match=message):
        all_pairs(_scores(), NAMES, **kwargs)
