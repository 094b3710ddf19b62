"""The minimum detectable effect of a paired t-test, against statsmodels' power of the
t-test (the same noncentral t definition) and its solver."""

from __future__ import annotations

import math

import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.power import TTestPower

from rankhouse.errors import RankhouseError
from rankhouse.stats import detectable_effect_size, minimum_detectable_effect

SIZES = [2, 3, 5, 10, 43, 200, 6980]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("alpha", "power"), [(0.05, 0.8), (0.01, 0.8), (0.1, 0.9)])
def test_statsmodels_power_at_the_detectable_effect_is_the_power_asked_for(n, alpha, power):
    delta = detectable_effect_size(n, alpha=alpha, power=power)
    got = TTestPower().power(delta, n, alpha, alternative="two-sided")
    if math.isnan(got):
        # n = 2, power 0.9: scipy's noncentral t cannot compute the far tail (below 1e-15)
        # and statsmodels adds its NaN; the near tail alone is the power.
        critical = scipy_stats.t.isf(alpha / 2, n - 1)
        got = scipy_stats.nct.sf(critical, n - 1, delta * math.sqrt(n))
    assert math.isclose(got, power, abs_tol=1e-9)


@pytest.mark.parametrize("n", SIZES)
def test_statsmodels_solve_power_agrees_to_its_solvers_tolerance(n):
    """statsmodels' solve_power stops within about 1e-5 (relative) of the root: its power at
    its own answer is up to 2e-6 from 0.8 (n = 200); the bisection here is 1e-12."""
    expected = TTestPower().solve_power(
        effect_size=None, nobs=n, alpha=0.05, power=0.8, alternative="two-sided"
    )
    assert math.isclose(detectable_effect_size(n), expected, rel_tol=1e-5)


@pytest.mark.parametrize(("n", "error"), [(2, 0.14), (5, 0.012), (10, 0.0013), (43, 0.0003)])
def test_the_closed_form_with_t_quantiles_is_close_from_n_10(n, error):
    """(t_{1 - alpha / 2, n - 1} + t_{power, n - 1}) / sqrt(n), the textbook approximation."""
    approximate = (scipy_stats.t.ppf(0.975, n - 1) + scipy_stats.t.ppf(0.8, n - 1)) / math.sqrt(n)
    assert abs(approximate - detectable_effect_size(n)) / detectable_effect_size(n) < error


def test_the_minimum_detectable_effect_is_in_the_measures_units():
    assert minimum_detectable_effect(43, 0.08) == detectable_effect_size(43) * 0.08
    assert minimum_detectable_effect(43, 0.0) == 0.0
    assert math.isnan(minimum_detectable_effect(1, 0.08))
    assert math.isnan(minimum_detectable_effect(43, math.nan))


def test_more_queries_detect_smaller_effects():
    sizes = [detectable_effect_size(n) for n in SIZES]
    assert sizes == sorted(sizes, reverse=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"alpha": 0.0}, "alpha must lie strictly between 0 and 1"),
        ({"power": 0.04}, "power must lie between alpha"),
        ({"power": 1.0}, "power must lie between alpha"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(RankhouseError, match=message):
        detectable_effect_size(10, **kwargs)
