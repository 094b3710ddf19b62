"""Effect sizes of a paired difference: Cohen's d_z and Hedges' g_z, against pingouin,
scipy's t statistic and hand computation; where pingouin's paired 'cohen' and 'hedges'
differ by definition, the test says how."""

from __future__ import annotations

import math

import numpy as np
import pingouin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from rankhouse.errors import RankhouseError
from rankhouse.stats import Summary, effect_size, hedges_correction


def _pair(n: int = 30, seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    baseline = rng.random(n)
    return np.clip(baseline + rng.normal(0.03, 0.15, n), 0, 1), baseline


def test_cohen_dz_is_pingouins_cohen_dz():
    run, baseline = _pair()
    expected = pingouin.compute_effsize(run, baseline, paired=True, eftype="cohen_dz")
    assert math.isclose(effect_size(run - baseline).cohen_dz, expected, rel_tol=1e-12)


def test_hedges_gz_is_pingouins_one_sample_hedges_of_the_differences():
    """pingouin's one-sample Hedges g of x against 0 is d * (1 - 3 / (4 (n + 1) - 9)) =
    d * (1 - 3 / (4 (n - 1) - 1)): Hedges & Olkin's J with df = n - 1, as here."""
    run, baseline = _pair()
    expected = pingouin.compute_effsize(run - baseline, 0, eftype="hedges")
    assert math.isclose(effect_size(run - baseline).hedges_gz, expected, rel_tol=1e-12)


def test_pingouins_paired_cohen_is_d_av_not_d_z():
    """By definition pingouin's paired 'cohen' divides by sqrt((s_x^2 + s_y^2) / 2) (d_av,
    Cumming 2012), and its paired 'hedges' multiplies that by 1 - 3 / (4 (n_x + n_y) - 9);
    neither is rankhouse's d_z / g_z, which divide by the differences' own sd."""
    run, baseline = _pair()
    n = len(run)
    d_av = (run.mean() - baseline.mean()) / math.sqrt((run.var(ddof=1) + baseline.var(ddof=1)) / 2)
    cohen = pingouin.compute_effsize(run, baseline, paired=True, eftype="cohen")
    hedges = pingouin.compute_effsize(run, baseline, paired=True, eftype="hedges")
    assert math.isclose(cohen, d_av, rel_tol=1e-12)
    assert math.isclose(hedges, d_av * (1 - 3 / (4 * 2 * n - 9)), rel_tol=1e-12)
    ours = effect_size(run - baseline)
    assert not math.isclose(ours.cohen_dz, cohen, rel_tol=1e-3)
    assert not math.isclose(ours.hedges_gz, hedges, rel_tol=1e-3)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=2, max_size=60).filter(
        lambda pairs: np.ptp([a - b for a, b in pairs]) > 1e-9
    )
)
def test_cohen_dz_is_the_paired_t_statistic_over_root_n(pairs):
    run, baseline = (np.array(v) for v in zip(*pairs, strict=True))
    t = scipy_stats.ttest_rel(run, baseline).statistic
    assert math.isclose(effect_size(run - baseline).cohen_dz, t / math.sqrt(len(run)), rel_tol=1e-9)


def test_by_hand():
    # differences 1, 2, 3, 4: mean 2.5, sd sqrt(5 / 3) = 1.2909944487358056;
    # d_z = 2.5 / 1.2909944... = 1.9364916731037085; df = 3, J = 1 - 3 / 11 = 8 / 11;
    # g_z = 1.9364916... * 8 / 11 = 1.4083575804390607.
    got = effect_size([1.0, 2.0, 3.0, 4.0])
    assert (got.n, got.mean_difference) == (4, 2.5)
    assert math.isclose(got.sd, math.sqrt(5 / 3), rel_tol=1e-15)
    assert math.isclose(got.cohen_dz, 2.5 / math.sqrt(5 / 3), rel_tol=1e-15)
    assert math.isclose(got.hedges_gz, 2.5 / math.sqrt(5 / 3) * 8 / 11, rel_tol=1e-15)


def test_from_a_summary():
    got = effect_size(Summary(n=21, mean=0.02, sd=0.08))
    # d_z = 0.25; J(20) = 1 - 3 / 79
    assert got.cohen_dz == 0.25
    assert math.isclose(got.hedges_gz, 0.25 * (1 - 3 / 79), rel_tol=1e-15)


@pytest.mark.parametrize("df", [9, 10, 20, 50, 100, 1000])
def test_the_correction_is_within_a_tenth_of_a_percent_of_hedges_exact_one_from_n_10(df):
    exact = math.exp(math.lgamma(df / 2) - math.lgamma((df - 1) / 2)) / math.sqrt(df / 2)
    assert abs(hedges_correction(df) - exact) / exact < 1e-3


@pytest.mark.parametrize(
    ("differences", "d", "g"),
    [
        ([], math.nan, math.nan),
        ([0.2], math.nan, math.nan),
        ([0.0, 0.0, 0.0], 0.0, 0.0),
        ([0.1, 0.1, 0.1], math.inf, math.inf),
        ([-0.1, -0.1, -0.1, -0.1], -math.inf, -math.inf),
        ([0.1, 0.1], math.inf, math.nan),  # J(1) = 0 and infinity * 0
        ([0.1, 0.3], 0.2 / math.sqrt(0.02), 0.0),  # J(1) = 0
    ],
    ids=["none", "one", "all zero", "constant up", "constant down", "two equal", "two"],
)
def test_edge_cases(differences, d, g):
    got = effect_size(differences)
    for value, expected in ((got.cohen_dz, d), (got.hedges_gz, g)):
        assert (math.isnan(value) and math.isnan(expected)) or math.isclose(
            value, expected, rel_tol=1e-12
        )


def test_nan_is_refused():
    with pytest.raises(RankhouseError, match="finite numbers"):
        effect_size([0.1, math.nan])
