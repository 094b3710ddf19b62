"""The agreement statistics of :mod:`rankhouse.judgments.agreement` against reference
implementations on randomized graded data (scikit-learn's ``cohen_kappa_score``, statsmodels'
``fleiss_kappa``, the ``krippendorff`` package, scipy's ``kendalltau``, ``spearmanr`` and
``ttest_rel``, the ``tau-ap`` package), to 1e-9, and small cases computed by hand."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss
from tau_ap import tau_ap as tau_ap_package

from rankhouse.errors import RankhouseError
from rankhouse.judgments.agreement import (
    LEVELS,
    WEIGHTS,
    RankingOptions,
    cohen_kappa,
    compare_rankings,
    confusion_matrix,
    exact_agreement,
    fleiss_kappa,
    grade_scale,
    krippendorff_alpha,
)

TOLERANCE = 1e-9
SEEDS = range(25)


def _graded(seed: int, raters: int) -> np.ndarray:
    """units x raters grades from -1 to 4, raters near a shared truth (so kappa is not ~0)."""
    rng = np.random.default_rng(seed)
    units = int(rng.integers(2, 150))
    truth = rng.integers(-1, 5, units)
    return np.clip(truth[:, None] + rng.integers(-1, 2, (units, raters)), -1, 4)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohen_kappa_is_scikit_learns(seed, weights):
    a, b = _graded(seed, 2).T
    # scikit-learn numbers the labels it is given: the whole grade scale, as ours
    expected = cohen_kappa_score(a, b, weights=weights, labels=grade_scale(a, b))
    if math.isnan(expected):
        assert math.isnan(cohen_kappa(a, b, weights))
    else:
        assert cohen_kappa(a, b, weights) == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.parametrize("seed", SEEDS)
def test_fleiss_kappa_is_statsmodels(seed):
    grades = _graded(seed, 2 + seed % 4)
    expected = statsmodels_fleiss(aggregate_raters(grades)[0], method="fleiss")
    assert fleiss_kappa(grades) == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_is_the_krippendorff_packages(seed, level):
    """Raters x units with about a third of the grades missing, two to five raters."""
    grades = _graded(seed, 2 + seed % 4).T.astype(float)
    rng = np.random.default_rng(1000 + seed)
    grades[rng.random(grades.shape) < 0.3] = np.nan
    expected = krippendorff.alpha(reliability_data=grades, level_of_measurement=level)
    assert krippendorff_alpha(grades, level) == pytest.approx(expected, abs=TOLERANCE)


def test_kappa_by_hand():
    # observed agreement 3/4, chance (1/2)(1/4) + (1/2)(3/4) = 1/2: (3/4 - 1/2) / (1/2)
    assert cohen_kappa([0, 0, 1, 1], [0, 1, 1, 1]) == pytest.approx(0.5)
    # one disagreement (1 against 2) of three units; the weighted chance disagreement
    # sum_ij a_i b_j w_ij with a = (1/3, 1/3, 1/3), b = (1/3, 0, 2/3): 1 linear, 5/3 quadratic
    a, b = [0, 1, 2], [0, 2, 2]
    assert cohen_kappa(a, b, "linear") == pytest.approx(1 - (1 / 3) / 1)
    assert cohen_kappa(a, b, "quadratic") == pytest.approx(1 - (1 / 3) / (5 / 3))
    assert confusion_matrix(a, b).tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 1]]


def test_a_grade_nobody_gives_still_counts_in_the_distance():
    """0 against 3 is three steps apart on the 0..3 scale even when no one gives 1 or 2."""
    a, b = [0, 3, 3, 0], [3, 3, 0, 0]
    # observed: two disagreements at distance 3 of four; chance: every cell 1/4
    assert cohen_kappa(a, b, "linear") == pytest.approx(1 - (2 / 4 * 3) / (2 / 4 * 3))
    assert confusion_matrix(a, b).shape == (4, 4)


def test_fleiss_kappa_by_hand():
    # units graded (1, 1, 1) and (0, 0, 1): p = (1/3, 2/3), chance 5/9, P = (1, 1/3)
    assert fleiss_kappa([[1, 1, 1], [0, 0, 1]]) == pytest.approx((2 / 3 - 5 / 9) / (4 / 9))


def test_krippendorff_alpha_by_hand():
    # units (0, 0), (1, 1), (0, 1) and one graded once (left out): coincidences o00 = o11 = 2,
    # o01 = o10 = 1, n0 = n1 = 3, n = 6: alpha = 1 - 5 * 2 / 18
    grades = [[0, 1, 0, 2], [0, 1, 1, np.nan]]
    assert krippendorff_alpha(grades, "nominal") == pytest.approx(4 / 9)
    # two grades: every level's distance is one number, alpha the same
    assert krippendorff_alpha(grades, "ordinal") == pytest.approx(4 / 9)


def test_undefined_statistics_are_nan():
    assert math.isnan(cohen_kappa([2, 2, 2], [2, 2, 2]))  # no chance disagreement
    assert math.isnan(cohen_kappa([], []))
    assert math.isnan(fleiss_kappa(np.zeros((0, 3))))
    assert math.isnan(krippendorff_alpha([[1, np.nan], [np.nan, 2]]))  # no unit graded twice
    assert exact_agreement([[1, 1, 1], [0, 1, 0]]) == 0.5


def test_bad_arguments_are_refused():
    with pytest.raises(RankhouseError, match="none, linear or quadratic"):
        cohen_kappa([1], [1], "cubic")
    with pytest.raises(RankhouseError, match="nominal, ordinal or interval"):
        krippendorff_alpha([[1], [1]], "ratio")
    with pytest.raises(RankhouseError, match="got 2 and 1"):
        cohen_kappa([1, 2], [1])
    with pytest.raises(RankhouseError, match="every unit graded by every rater"):
        fleiss_kappa([[1, np.nan]])


# --- system rankings ------------------------------------------------------------------------


def test_rankings_by_hand():
    """Means A 0.5, B 0.4, C 0.3 under the first set; B, A, C under the second. One of three
    pairs swaps: tau (2 - 1) / 3; tau_AP of (B, A, C) against (A, B, C): C(2) = 0 (B is
    not above A in the reference), C(3) = 2, so 2 / 2 * (0 / 1 + 2 / 2) - 1 = 0; rho:
    d = (1, 1, 0), 1 - 6 * 2 / (3 * 8)."""
    first = [[0.5], [0.4], [0.3]]
    second = [[0.45], [0.5], [0.1]]
    found = compare_rankings(["A", "B", "C"], first, second, options=RankingOptions(resamples=0))
    ranking = found["ranking"]
    assert ranking["kendall_tau"] == pytest.approx(1 / 3)
    assert ranking["tau_ap"] == pytest.approx(0.0)
    assert ranking["spearman_rho"] == pytest.approx(0.5)
    assert [(s["run"], s["other"]) for s in found["swaps"]] == [("A", "B")]
    assert [s["shift"] for s in found["shifts"]] == pytest.approx([-0.05, 0.1, -0.2])
    assert [s["rank_second"] for s in found["shifts"]] == [2, 1, 3]
    assert "kendall_tau_low" not in ranking


def test_a_smaller_is_better_measure_ranks_the_smallest_first():
    found = compare_rankings(["A", "B", "C"], [[1], [2], [3]], [[1], [3], [2]], sign=-1)
    assert [s["rank_first"] for s in found["shifts"]] == [1, 2, 3]


@pytest.mark.parametrize("seed", range(10))
def test_rankings_against_scipy_and_tau_ap(seed):
    rng = np.random.default_rng(seed)
    systems, queries = int(rng.integers(3, 12)), int(rng.integers(2, 30))
    first = rng.random((systems, queries))
    second = np.clip(first + rng.normal(0, 0.2, first.shape), 0, 1)
    names = [f"s{i:02d}" for i in range(systems)]
    options = RankingOptions(resamples=200, seed=seed)
    found = compare_rankings(names, first, second, options=options)
    ranking = found["ranking"]
    mean_first, mean_second = first.mean(axis=1), second.mean(axis=1)
    tau = scipy_stats.kendalltau(mean_first, mean_second).statistic
    rho = scipy_stats.spearmanr(mean_first, mean_second).statistic
    # the tau-ap package: the systems in the second set's order (the one judged), each with
    # its position there and in the first set's order (the reference)
    at_first = {system: k for k, system in enumerate(np.argsort(-mean_first))}
    order_second = np.argsort(-mean_second)
    expected_tau_ap = tau_ap_package(
        list(range(systems)), [at_first[system] for system in order_second]
    )
    assert ranking["kendall_tau"] == pytest.approx(tau, abs=TOLERANCE)
    assert ranking["spearman_rho"] == pytest.approx(rho, abs=TOLERANCE)
    assert ranking["tau_ap"] == pytest.approx(expected_tau_ap, abs=TOLERANCE)
    discordant = {
        (names[i], names[j])
        for i in range(systems)
        for j in range(i + 1, systems)
        if (mean_first[i] - mean_first[j]) * (mean_second[i] - mean_second[j]) < 0
    }
    assert {(s["run"], s["other"]) for s in found["swaps"]} == discordant
    for swap in found["swaps"]:
        i, j = names.index(swap["run"]), names.index(swap["other"])
        p_first = scipy_stats.ttest_rel(first[i], first[j]).pvalue
        assert swap["p_first"] == pytest.approx(p_first, abs=TOLERANCE, nan_ok=True)
    # the bootstrap: the same draws (numpy's generator, queries resampled), scipy's tau of
    # each draw's means, numpy's percentile (linear interpolation)
    draw = np.random.default_rng(seed)
    taus = []
    for _ in range(200):
        picked = draw.integers(0, queries, queries)
        taus.append(
            scipy_stats.kendalltau(
                first[:, picked].mean(axis=1), second[:, picked].mean(axis=1)
            ).statistic
        )
    assert ranking["kendall_tau_low"] == pytest.approx(np.percentile(taus, 2.5), abs=TOLERANCE)
    assert ranking["kendall_tau_high"] == pytest.approx(np.percentile(taus, 97.5), abs=TOLERANCE)
