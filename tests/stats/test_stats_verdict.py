"""Verdict words: better / worse / equivalent / inconclusive, with the numbers behind them.

Superiority beyond a margin is checked against scipy's one-sided t-test, equivalence against
statsmodels' two one-sided tests (``ttost_paired``), the intervals against scipy's, the
minimum detectable effect against statsmodels' power of the t-test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.power import TTestPower
from statsmodels.stats.weightstats import ttost_paired

from rankhouse.errors import RankhouseError
from rankhouse.stats import VERDICTS, Summary, paired_test, verdict


def _runs(n: int, shift: float, spread: float, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    baseline = rng.random(n)
    return baseline + rng.normal(shift, spread, n), baseline


def _verdict(run, baseline, **kwargs):
    return verdict(run - baseline, paired_test(run, baseline), **kwargs)


def test_a_significant_gain_is_better_and_a_significant_loss_worse():
    run, baseline = _runs(43, 0.05, 0.05)
    assert _verdict(run, baseline).word == "better"
    assert _verdict(baseline, run).word == "worse"
    # when lower is better, the same gain is worse
    assert _verdict(run, baseline, direction=-1).word == "worse"
    assert _verdict(baseline, run, direction=-1).word == "better"


def test_noise_is_inconclusive_and_says_which_way_the_mean_moved():
    """A gain of 0.002 at p = 0.89 must not read as an improvement."""
    run, baseline = _runs(43, 0.0, 0.1, seed=2)
    got = _verdict(run, baseline)
    assert got.p_value > 0.5
    assert got.word == "inconclusive"
    assert got.change == ("higher" if got.mean_difference > 0 else "lower")
    assert got.reason == "not significant, and no margin to show equivalence"


def test_inconclusive_states_the_minimum_detectable_effect():
    run, baseline = _runs(43, 0.0, 0.1, seed=2)
    got = _verdict(run, baseline)
    d = run - baseline
    delta = TTestPower().solve_power(
        effect_size=None, nobs=43, alpha=0.05, power=0.8, alternative="two-sided"
    )
    assert math.isclose(got.minimum_detectable_effect, delta * np.std(d, ddof=1), rel_tol=1e-5)
    assert got.power == 0.8


def test_the_numbers_behind_the_verdict_are_scipys():
    run, baseline = _runs(30, 0.02, 0.08)
    got = _verdict(run, baseline, alpha=0.1, margin=0.01)
    result = scipy_stats.ttest_rel(run, baseline)
    for interval, level in ((got.interval, 0.9), (got.equivalence_interval, 0.8)):
        expected = result.confidence_interval(confidence_level=level)
        assert math.isclose(interval.low, expected.low, rel_tol=1e-12)
        assert math.isclose(interval.high, expected.high, rel_tol=1e-12)
        assert interval.level == level
    assert got.n == 30
    assert math.isclose(got.mean_difference, np.mean(run - baseline), rel_tol=1e-12)
    assert math.isclose(got.sd, np.std(run - baseline, ddof=1), rel_tol=1e-12)
    assert got.p_value == result.pvalue
    assert math.isclose(got.hedges_gz, result.statistic / math.sqrt(30) * (1 - 3 / 115))


def test_a_margin_needs_the_interval_beyond_it():
    run, baseline = _runs(43, 0.05, 0.05)
    low = _verdict(run, baseline).interval.low
    assert _verdict(run, baseline, margin=low * 0.99).word == "better"
    beyond = _verdict(run, baseline, margin=low * 1.01)
    assert (beyond.word, beyond.reason) == (
        "inconclusive",
        "significant, but the interval reaches inside the margin",
    )


def test_a_tiny_difference_on_many_queries_is_significant_and_equivalent():
    """MS MARCO dev's 6,980 queries make a 0.002 gain significant; with a margin of 0.01 it
    does not matter."""
    run, baseline = _runs(6980, 0.002, 0.05, seed=2)
    assert _verdict(run, baseline).word == "better"
    got = _verdict(run, baseline, margin=0.01)
    assert got.word == "equivalent"
    assert ttost_paired(run, baseline, -0.01, 0.01)[0] <= 0.05


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(2, 60),
    shift=st.floats(-0.1, 0.1),
    spread=st.floats(0.001, 0.2),
    margin=st.one_of(st.none(), st.floats(0, 0.1)),
    alpha=st.sampled_from([0.01, 0.05, 0.1]),
    direction=st.sampled_from([1, -1]),
    seed=st.integers(0, 1000),
)
def test_the_words_follow_the_one_sided_tests(n, shift, spread, margin, alpha, direction, seed):
    run, baseline = _runs(n, shift, spread, seed)
    d = run - baseline
    p = scipy_stats.ttest_rel(run, baseline).pvalue
    # keep clear of the boundaries, where the last bits decide
    assume(abs(p - alpha) > 1e-9)
    got = verdict(d, p, alpha=alpha, margin=margin, direction=direction)
    assert got.word in VERDICTS
    better_side = direction * np.mean(d) > 0
    significant = p <= alpha
    if margin is None:
        beyond = True
        equivalent = False
    else:
        # beyond the margin: the one-sided test of "no more than the margin" at alpha / 2
        if better_side == (direction > 0):
            one_sided = scipy_stats.ttest_1samp(d, margin, alternative="greater").pvalue
        else:
            one_sided = scipy_stats.ttest_1samp(d, -margin, alternative="less").pvalue
        assume(abs(one_sided - alpha / 2) > 1e-9)
        beyond = one_sided <= alpha / 2
        tost = ttost_paired(run, baseline, -margin, margin)[0]
        assume(abs(tost - alpha) > 1e-9)
        equivalent = tost <= alpha
    if significant and beyond:
        expected = "better" if better_side else "worse"
    elif equivalent:
        expected = "equivalent"
    else:
        expected = "inconclusive"
    assert got.word == expected


def test_fewer_than_two_pairs_are_inconclusive():
    got = verdict([0.3], math.nan, margin=0.01)
    assert (got.word, got.reason) == ("inconclusive", "fewer than two pairs: no test is possible")
    assert math.isnan(got.interval.low) and math.isnan(got.minimum_detectable_effect)
    assert verdict([], math.nan).change == "unknown"


def test_a_nan_p_value_is_never_significant():
    assert verdict([0.1, 0.2, 0.3], math.nan).word == "inconclusive"


def test_identical_runs_are_equivalent_within_any_margin_and_unchanged():
    got = verdict([0.0] * 10, 1.0, margin=0.0)
    assert (got.word, got.change, got.minimum_detectable_effect) == ("equivalent", "unchanged", 0)


def test_a_constant_gain_is_better_with_a_zero_width_interval():
    got = verdict([0.02] * 10, 0.0, margin=0.01)
    assert (got.word, got.interval.low, got.interval.high) == ("better", 0.02, 0.02)
    assert got.hedges_gz == math.inf


def test_from_a_summary():
    got = verdict(Summary(n=43, mean=-0.03, sd=0.05), 0.001, margin=0.01)
    assert (got.word, got.change) == ("worse", "lower")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"direction": 0}, "a measure that ranks nothing"),
        ({"margin": -0.01}, "margin must be a finite number at least 0"),
        ({"alpha": 1.5}, "alpha must lie strictly between 0 and 1"),
        ({"power": 0.01}, "power must lie between alpha"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(RankhouseError, match=message):
        verdict([0.1, 0.2], 0.5, **kwargs)
