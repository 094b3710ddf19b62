"""Confidence intervals of a mean and of a paired difference: scipy's t interval and scipy's
seeded percentile bootstrap, and hand computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from rankhouse.errors import RankhouseError
from rankhouse.stats import (
    INTERVAL_METHODS,
    Summary,
    difference_interval,
    mean_interval,
    summarize,
    t_interval,
)

LEVELS = [0.5, 0.8, 0.9, 0.95, 0.99, 0.999]


def _pair(n: int = 43, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    baseline = rng.random(n)
    return np.clip(baseline + rng.normal(0.02, 0.1, n), 0, 1), baseline


def _close(got: float, expected: float, tolerance: float = 1e-12) -> bool:
    return math.isclose(got, expected, rel_tol=tolerance, abs_tol=tolerance)


@pytest.mark.parametrize("level", LEVELS)
def test_t_interval_of_a_difference_is_scipys_ttest_rel_interval(level):
    run, baseline = _pair()
    expected = scipy_stats.ttest_rel(run, baseline).confidence_interval(confidence_level=level)
    got = difference_interval(run, baseline, level)
    assert _close(got.low, expected.low) and _close(got.high, expected.high)
    assert (got.level, got.method) == (level, "t")


@pytest.mark.parametrize("level", LEVELS)
def test_t_interval_of_a_mean_is_scipys_t_interval(level):
    values = _pair()[0]
    low, high = scipy_stats.t.interval(
        level, len(values) - 1, loc=np.mean(values), scale=scipy_stats.sem(values)
    )
    got = mean_interval(values, level)
    assert _close(got.low, low) and _close(got.high, high)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=80).filter(
        lambda pairs: np.ptp([a - b for a, b in pairs]) > 1e-9
    ),
    st.sampled_from(LEVELS),
)
def test_t_interval_equals_scipy_on_generated_pairs(pairs, level):
    run, baseline = (np.array(v) for v in zip(*pairs, strict=True))
    expected = scipy_stats.ttest_rel(run, baseline).confidence_interval(confidence_level=level)
    got = difference_interval(run, baseline, level)
    assert math.isclose(got.low, expected.low, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(got.high, expected.high, rel_tol=1e-9, abs_tol=1e-12)


def test_t_interval_by_hand():
    # values 1, 2, 3, 4: mean 2.5; squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5,
    # sd = sqrt(5 / 3) = 1.2909944487358056, standard error sd / 2 = 0.6454972243679028;
    # t_{0.975, 3} = 3.182446305284263 (tables: 3.182), half-width 2.0542603...;
    # the interval is 2.5 -+ 2.054260..., [0.44573967..., 4.55426032...].
    half = 3.182446305284263 * math.sqrt(5 / 3) / 2
    got = mean_interval([1.0, 2.0, 3.0, 4.0], 0.95)
    assert _close(got.low, 2.5 - half) and _close(got.high, 2.5 + half)
    assert _close(got.width, 2 * half)
    assert got.contains(2.5) and not got.contains(0.4)


def test_t_interval_from_a_summary_alone():
    run, baseline = _pair()
    d = run - baseline
    summary = Summary(len(d), float(np.mean(d)), float(np.std(d, ddof=1)))
    expected = scipy_stats.ttest_rel(run, baseline).confidence_interval(confidence_level=0.9)
    got = t_interval(summary, 0.9)
    assert _close(got.low, expected.low) and _close(got.high, expected.high)


@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
@pytest.mark.parametrize("seed", [0, 42, 2024])
def test_bootstrap_interval_is_scipys_percentile_bootstrap_with_the_same_seed(level, seed):
    d = np.subtract(*_pair())
    expected = scipy_stats.bootstrap(
        (d,),
        np.mean,
        confidence_level=level,
        n_resamples=2000,
        method="percentile",
        rng=np.random.default_rng(seed),
    ).confidence_interval
    got = mean_interval(d, level, method="bootstrap", resamples=2000, seed=seed)
    assert (got.low, got.high) == (expected.low, expected.high)
    assert (got.level, got.method) == (level, "bootstrap")


def test_bootstrap_of_a_difference_resamples_query_pairs_as_scipys_paired_bootstrap():
    run, baseline = _pair()

    def mean_difference(x, y, axis=-1):
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    expected = scipy_stats.bootstrap(
        (run, baseline),
        mean_difference,
        paired=True,
        n_resamples=3000,
        method="percentile",
        rng=np.random.default_rng(7),
    ).confidence_interval
    got = difference_interval(run, baseline, method="bootstrap", resamples=3000, seed=7)
    # scipy averages each side then subtracts; here the differences are averaged.
    assert _close(got.low, expected.low) and _close(got.high, expected.high)


def test_bootstrap_in_batches_draws_what_one_draw_would():
    """Large inputs are resampled in batches (bounded memory): the same draws as scipy's one
    batch."""
    d = np.random.default_rng(5).normal(0.01, 0.2, 7000)
    expected = scipy_stats.bootstrap(
        (d,), np.mean, n_resamples=1500, method="percentile", rng=np.random.default_rng(1)
    ).confidence_interval
    got = mean_interval(d, method="bootstrap", resamples=1500, seed=1)
    assert (got.low, got.high) == (expected.low, expected.high)


def test_bootstrap_by_hand_draws_and_quantiles():
    d = np.subtract(*_pair(n=12))
    rng = np.random.default_rng(42)
    means = d[rng.integers(0, 12, (999, 12))].mean(axis=1)
    low, high = np.percentile(means, [5, 95])
    got = mean_interval(d, 0.9, method="bootstrap", resamples=999, seed=42)
    assert _close(got.low, low) and _close(got.high, high)


def test_same_seed_same_interval_other_seed_other_interval():
    d = np.subtract(*_pair())
    first = mean_interval(d, method="bootstrap", seed=1, resamples=500)
    assert mean_interval(d, method="bootstrap", seed=1, resamples=500) == first
    assert mean_interval(d, method="bootstrap", seed=2, resamples=500) != first


@pytest.mark.parametrize("method", INTERVAL_METHODS)
@pytest.mark.parametrize("values", [[], [0.3]], ids=["no values", "one value"])
def test_fewer_than_two_values_give_a_nan_interval(method, values):
    got = mean_interval(values, method=method)
    assert math.isnan(got.low) and math.isnan(got.high)
    assert not got.contains(0.3)


@pytest.mark.parametrize("method", INTERVAL_METHODS)
@pytest.mark.parametrize("value", [0.0, 0.125, -0.3])
def test_equal_values_give_an_interval_of_width_zero(method, value):
    got = mean_interval([value] * 9, method=method)
    assert (got.low, got.high, got.width) == (value, value, 0.0)


def test_the_default_is_t_at_95_percent():
    got = mean_interval([0.1, 0.4, 0.2])
    assert (got.level, got.method) == (0.95, "t")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mean_interval([0.1, math.nan, 0.2]), "finite numbers"),
        (lambda: mean_interval([0.1, 0.2], method="bca"), "unknown interval method 'bca'"),
        (lambda: mean_interval([0.1, 0.2], 1.0), "level must lie strictly between 0 and 1"),
        (lambda: mean_interval([0.1, 0.2], 0.0), "level must lie strictly between 0 and 1"),
        (
            lambda: mean_interval([0.1, 0.2], method="bootstrap", resamples=0),
            "resamples must lie between 1 and 1,000,000",
        ),
        (lambda: difference_interval([0.1, 0.2], [0.1]), "equally long"),
        (lambda: mean_interval([[0.1, 0.2]]), "one list of numbers"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(RankhouseError, match=message):
        call()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=False, allow_infinity=False, width=64),
            st.sampled_from([0.0, 0.25, 1.0]),
            st.floats(0, 1),
        ),
        max_size=700,
    )
)
def test_a_list_of_floats_is_summarized_without_numpy_to_the_bit(values):
    """Stored values (Python floats) are summed in plain Python in numpy's pairwise order, so
    that history loads no numpy: the same n, mean and standard deviation as from an array."""
    plain, array = summarize(values), summarize(np.asarray(values, dtype=float))
    assert plain.n == array.n
    for got, expected in [(plain.mean, array.mean), (plain.sd, array.sd)]:
        assert type(got) is float
        assert got == expected or (math.isnan(got) and math.isnan(expected))
