"""rankhouse's Student's t quantile (plain Python) against scipy.special.stdtrit, and against
values printed in tables."""

from __future__ import annotations

import math

import pytest
from scipy.special import stdtrit

from rankhouse.stats.estimates import t_quantile

PROBABILITIES = [0.0005, 0.005, 0.025, 0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.95, 0.975]
PROBABILITIES += [0.995, 0.9995]


@pytest.mark.parametrize(
    ("degrees", "tolerance"),
    [(range(1, 51), 2e-14), (range(51, 301), 2e-13), ([499, 1000, 6979, 10_000, 100_000], 1e-11)],
    ids=["1-50", "51-300", "large"],
)
def test_equals_scipy_within_its_stated_tolerance(degrees, tolerance):
    for df in degrees:
        for p in PROBABILITIES:
            expected = float(stdtrit(df, p))
            assert t_quantile(df, p) == pytest.approx(expected, rel=tolerance, abs=1e-300), (df, p)


def test_known_table_values():
    # the closed forms at 1 and 2 degrees of freedom (tan(pi (p - 1/2)) and
    # (2p - 1) / sqrt(2 p (1 - p))), and a printed table's 2.228 at 10 and 2.018 at 42
    assert t_quantile(1, 0.975) == pytest.approx(math.tan(math.pi * 0.475), rel=1e-14)
    assert t_quantile(2, 0.975) == pytest.approx(0.95 / math.sqrt(2 * 0.975 * 0.025), rel=1e-14)
    assert t_quantile(10, 0.975) == pytest.approx(2.228, abs=5e-4)
    assert t_quantile(42, 0.025) == pytest.approx(-2.018, abs=5e-4)
    assert t_quantile(7, 0.5) == 0.0
