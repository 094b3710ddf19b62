"""Non-inferiority (a gate's test): the one-sided t-test of "worse by the margin or more",
against scipy's one-sided t-test and its (1 - 2 alpha) interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from rankhouse.errors import RankhouseError
from rankhouse.stats import Summary, non_inferiority, paired_test


def _differences(n: int, shift: float, spread: float, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(shift, spread, n)


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
@pytest.mark.parametrize("margin", [0.0, 0.01, 0.05])
def test_higher_is_better_is_scipys_one_sided_test_against_minus_the_margin(alpha, margin):
    d = _differences(43, -0.01, 0.06)
    got = non_inferiority(d, margin, alpha=alpha)
    expected = scipy_stats.ttest_1samp(d, -margin, alternative="greater").pvalue
    assert math.isclose(got.p_value, expected, rel_tol=1e-12)
    interval = scipy_stats.ttest_1samp(d, 0).confidence_interval(confidence_level=1 - 2 * alpha)
    assert math.isclose(got.bound, interval.low, rel_tol=1e-12)
    assert got.passed == (interval.low >= -margin)


@pytest.mark.parametrize("margin", [0.0, 0.01, 0.05])
def test_lower_is_better_is_the_mirror(margin):
    d = _differences(43, 0.01, 0.06)
    got = non_inferiority(d, margin, direction=-1)
    expected = scipy_stats.ttest_1samp(d, margin, alternative="less").pvalue
    assert math.isclose(got.p_value, expected, rel_tol=1e-12)
    interval = scipy_stats.ttest_1samp(d, 0).confidence_interval(confidence_level=0.9)
    assert math.isclose(got.bound, interval.high, rel_tol=1e-12)
    mirrored = non_inferiority(-d, margin)
    assert (mirrored.passed, mirrored.p_value) == (got.passed, got.p_value)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(2, 80),
    shift=st.floats(-0.1, 0.1),
    spread=st.floats(0.001, 0.2),
    margin=st.floats(0, 0.1),
    alpha=st.sampled_from([0.01, 0.05, 0.1]),
    seed=st.integers(0, 1000),
)
def test_passing_is_the_one_sided_p_value_at_most_alpha(n, shift, spread, margin, alpha, seed):
    d = _differences(n, shift, spread, seed)
    got = non_inferiority(d, margin, alpha=alpha)
    assume(abs(got.p_value - alpha) > 1e-9)
    assert got.passed == (got.p_value <= alpha)


def test_a_real_drop_that_is_not_significant_fails_the_gate():
    """43 queries, a real drop of 0.03: the two-sided test misses it (today's gate passes),
    non-inferiority with a margin of 0.01 does not show that the loss is small, and fails."""
    rng = np.random.default_rng(12)
    baseline = rng.random(43)
    run = baseline - 0.03 + rng.normal(0, 0.15, 43)
    assert paired_test(run, baseline) > 0.05
    got = non_inferiority(run - baseline, 0.01)
    assert not got.passed
    assert got.bound < -0.01


def test_a_run_as_good_as_its_baseline_passes():
    d = _differences(200, 0.0, 0.02, seed=3)
    got = non_inferiority(d, 0.01)
    assert got.passed and got.p_value < 0.05


@pytest.mark.parametrize(
    ("differences", "margin", "passed", "bound", "p"),
    [
        ([0.0] * 5, 0.0, True, 0.0, 0.0),  # identical runs pass even a margin of 0
        ([-0.005] * 5, 0.01, True, -0.005, 0.0),
        ([-0.02] * 5, 0.01, False, -0.02, 1.0),
        ([0.1], 0.01, False, math.nan, math.nan),
        ([], 0.01, False, math.nan, math.nan),
    ],
    ids=["identical", "small constant loss", "large constant loss", "one pair", "none"],
)
def test_edge_cases(differences, margin, passed, bound, p):
    got = non_inferiority(differences, margin)
    assert got.passed is passed
    for value, expected in ((got.bound, bound), (got.p_value, p)):
        assert value == expected or (math.isnan(value) and math.isnan(expected))


def test_from_a_summary():
    # bound = -0.001 - t_{0.95, 99} * 0.05 / sqrt(100) = -0.001 - 1.6603911560169906 * 0.005
    # = -0.009301955780084953 >= -0.01: passes
    got = non_inferiority(Summary(n=100, mean=-0.001, sd=0.05), 0.01)
    assert math.isclose(got.bound, -0.001 - 1.6603911560169906 * 0.005, rel_tol=1e-12)
    assert got.passed and (got.margin, got.alpha, got.direction) == (0.01, 0.05, 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"margin": -0.1}, "margin must be a finite number at least 0"),
        ({"margin": math.inf}, "margin must be a finite number at least 0"),
        ({"margin": 0.1, "direction": 0}, "a measure that ranks nothing"),
        ({"margin": 0.1, "alpha": 0.0}, "alpha must lie strictly between 0 and 1"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(RankhouseError, match=message):
        non_inferiority([0.1, 0.2], **kwargs)
