"""Paired significance tests and corrections: the numbers scipy and statsmodels give."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from rankhouse.errors import RankhouseError
from rankhouse.stats import CORRECTION_NAMES, CORRECTIONS, TESTS, correct, paired_test


def _pair(n: int = 25, shift: float = 0.03, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    baseline = rng.random(n)
    run = np.clip(baseline + rng.normal(shift, 0.1, n), 0, 1)
    return run, baseline


def _same_float(got: float, expected: float) -> bool:
    return got == expected or (math.isnan(got) and math.isnan(expected))


def test_t_test_is_scipys_paired_t_test():
    run, baseline = _pair()
    assert paired_test(run, baseline, "t") == scipy_stats.ttest_rel(run, baseline).pvalue


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(
    "case",
    [
        "two pairs",
        "constant difference",
        "nearly constant",
        "one query differs",
        "large",
        "mixed magnitudes",
        "tiny differences",
    ],
)
def test_t_test_equals_scipy_to_the_bit(case):
    """The t-test is computed without scipy.stats (its import costs most of a compare): the
    p-value must be scipy's own, not merely close, also where t is infinite or the variance
    loses precision."""
    rng = np.random.default_rng(11)
    baseline = rng.random(10_000 if case == "large" else 40)
    run = {
        "two pairs": baseline[:2] + [0.25, 0.5],
        "constant difference": baseline + 0.125,
        "nearly constant": baseline + 0.1 + rng.normal(0, 1e-15, len(baseline)),
        "one query differs": np.where(np.arange(len(baseline)) == 3, baseline + 0.5, baseline),
        "large": np.clip(baseline + rng.normal(0.01, 0.2, len(baseline)), 0, 1),
        "mixed magnitudes": baseline * 10.0 ** rng.integers(-12, 3, len(baseline)),
        "tiny differences": baseline * 0 + rng.normal(0, 1e-160, len(baseline)),
    }[case]
    baseline = baseline[: len(run)] * (0 if case == "tiny differences" else 1)
    assert (run - baseline).any()
    expected = scipy_stats.ttest_rel(run, baseline).pvalue
    assert _same_float(paired_test(run, baseline, "t"), float(expected)), case


def test_wilcoxon_is_scipys_signed_rank_test():
    run, baseline = _pair()
    assert paired_test(run, baseline, "wilcoxon") == pytest.approx(
        scipy_stats.wilcoxon(run, baseline).pvalue, rel=1e-12
    )


def test_randomization_is_scipys_paired_permutation_test_with_the_seed():
    run, baseline = _pair()
    expected = scipy_stats.permutation_test(
        (run, baseline),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=2000,
        rng=np.random.default_rng(3),
    ).pvalue
    assert paired_test(run, baseline, "randomization", permutations=2000, seed=3) == expected


def test_randomization_is_exact_for_few_queries():
    # 2**6 sign flips <= permutations: scipy enumerates them all. Count by hand.
    run = np.array([0.5, 0.4, 0.9, 0.3, 0.8, 0.6])
    baseline = np.array([0.2, 0.5, 0.4, 0.1, 0.3, 0.6])
    differences = run - baseline
    observed = abs(differences.mean())
    flips = [
        abs(np.mean(differences * np.array(signs)))
        for signs in itertools.product([1, -1], repeat=len(differences))
    ]
    expected = sum(value >= observed - 1e-12 for value in flips) / len(flips)
    assert paired_test(run, baseline, "randomization") == pytest.approx(expected)


def test_bootstrap_is_the_shift_method_with_the_seed():
    run, baseline = _pair()
    differences = run - baseline
    centred = differences - differences.mean()
    null = np.random.default_rng(11).choice(centred, size=(3000, len(run))).mean(axis=1)
    observed = differences.mean()
    less = (np.sum(null <= observed) + 1) / 3001
    greater = (np.sum(null >= observed) + 1) / 3001
    expected = min(1.0, 2 * min(less, greater))
    assert paired_test(run, baseline, "bootstrap", permutations=3000, seed=11) == pytest.approx(
        expected
    )


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_resampling_tests_are_reproducible_and_depend_on_the_seed(test):
    run, baseline = _pair(n=40, shift=0.02)
    first = paired_test(run, baseline, test, permutations=500, seed=1)
    assert paired_test(run, baseline, test, permutations=500, seed=1) == first
    assert paired_test(run, baseline, test, permutations=500, seed=2) != first


@pytest.mark.parametrize("test", TESTS)
def test_a_clear_difference_is_significant(test):
    run, baseline = _pair(n=50, shift=0.2)
    assert paired_test(run, baseline, test, permutations=2000) < 0.01


@pytest.mark.parametrize("test", TESTS)
def test_identical_values_give_p_one(test):
    values = [0.1, 0.5, 0.7, 0.2]
    assert paired_test(values, list(values), test) == 1.0


@pytest.mark.parametrize("test", TESTS)
def test_fewer_than_two_pairs_give_nan(test):
    assert math.isnan(paired_test([0.5], [0.2], test))
    assert math.isnan(paired_test([], [], test))


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([0.1, 0.2], [0.1, 0.3], "z"), {}, "unknown test 'z'"),
        (([0.1, 0.2], [0.1]), {}, "equally long"),
        (([0.1, math.nan], [0.1, 0.2]), {}, "NaN"),
        (([0.1, 0.2], [0.1, 0.3], "randomization"), {"permutations": 0}, "permutations"),
    ],
)
def test_bad_arguments_raise(args, kwargs, match):
    with pytest.raises(RankhouseError, match=match):
        paired_test(*args, **kwargs)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1), st.floats(0, 1)),
        min_size=3,
        max_size=20,
    )
)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_t_and_wilcoxon_match_scipy_on_any_values(pairs):
    run = np.array([p[0] for p in pairs])
    baseline = np.array([p[1] for p in pairs])
    if not (run - baseline).any():
        return
    got_t = paired_test(run, baseline, "t")
    expected_t = scipy_stats.ttest_rel(run, baseline).pvalue
    assert _same_float(got_t, float(expected_t))
    got_w = paired_test(run, baseline, "wilcoxon")
    expected_w = scipy_stats.wilcoxon(run, baseline).pvalue
    assert got_w == pytest.approx(expected_w, nan_ok=True)


PVALUES = [0.001, 0.012, 0.03, 0.04, 0.2, 0.049]


@pytest.mark.parametrize(
    ("method", "statsmodels_name"),
    [("bonferroni", "bonferroni"), ("holm", "holm"), ("bh", "fdr_bh")],
)
def test_corrections_are_statsmodels(method, statsmodels_name):
    reject, adjusted, _, _ = multipletests(PVALUES, alpha=0.05, method=statsmodels_name)
    corrected, significant = correct(PVALUES, method, alpha=0.05)
    assert corrected == pytest.approx(list(adjusted))
    assert significant == list(reject)


def test_no_correction_keeps_p_values_and_compares_with_alpha():
    corrected, significant = correct(PVALUES, "none", alpha=0.04)
    assert corrected == PVALUES
    assert significant == [True, True, True, True, False, False]


def test_nan_p_values_stay_out_of_the_family():
    corrected, significant = correct([0.01, math.nan, 0.02], "bonferroni", alpha=0.05)
    assert corrected[0] == pytest.approx(0.02)
    assert math.isnan(corrected[1])
    assert corrected[2] == pytest.approx(0.04)
    assert significant == [True, False, True]


ALIASES = [alias for aliases in CORRECTION_NAMES.values() for alias in aliases]


@pytest.mark.parametrize("alias", [a for a in ALIASES if a not in ("none", "bh")])
def test_every_statsmodels_name_is_statsmodels_itself(alias):
    """PyTerrier passes its correction name to statsmodels: any name statsmodels takes works
    here and gives statsmodels' numbers (in any case)."""
    reject, adjusted, _, _ = multipletests(PVALUES, alpha=0.1, method=alias)
    corrected, significant = correct(PVALUES, alias.upper(), alpha=0.1)
    assert corrected == pytest.approx(list(adjusted), rel=1e-12)
    assert significant == list(reject)


def test_the_names_are_statsmodels_aliases():
    """Every alias statsmodels lists selects the method statsmodels gives it (lfdr aside: it
    is no correction of a family of p-values)."""
    from statsmodels.stats import multitest

    long_names = {"b": "bonferroni", "s": "sidak", "h": "holm", "hs": "holm-sidak"}
    long_names |= {"sh": "simes-hochberg", "ho": "hommel"}
    theirs = {
        alias: long_names.get(group[0], group[0])
        for group in multitest._alias_list
        if group[0] != "lfdr"
        for alias in group
    }
    ours = {alias: method for method, aliases in CORRECTION_NAMES.items() for alias in aliases}
    assert {alias: ours.get(alias) for alias in theirs} == theirs


def test_no_correction_by_name_or_none():
    assert correct(PVALUES, None, alpha=0.04) == correct(PVALUES, "none", alpha=0.04)


def test_a_callable_test_gets_run_then_baseline_and_gives_its_second_item():
    run, baseline = _pair()
    calls = []

    def sign_test(x, y):
        calls.append((x.copy(), y.copy()))
        return scipy_stats.binomtest(int((x > y).sum()), int((x != y).sum()))

    expected = scipy_stats.binomtest(int((run > baseline).sum()), len(run)).pvalue
    assert paired_test(run, baseline, sign_test) == expected
    assert np.array_equal(calls[0][0], run) and np.array_equal(calls[0][1], baseline)
    assert paired_test(run, baseline, scipy_stats.ttest_rel) == paired_test(run, baseline, "t")
    assert paired_test(run, baseline, lambda x, y: (0.0, 0.25)) == 0.25
    assert math.isnan(paired_test(run[:1], baseline[:1], lambda x, y: (0.0, 0.25)))
    with pytest.raises(RankhouseError, match="returns \\(statistic, p-value\\)"):
        paired_test(run, baseline, lambda x, y: 0.5)


@pytest.mark.parametrize("method", CORRECTIONS)
def test_empty_family(method):
    assert correct([], method) == ([], [])


@pytest.mark.parametrize(
    ("method", "alpha", "match"),
    [
        ("sidak2", 0.05, "unknown correction 'sidak2'"),
        ("none", 0.0, "alpha"),
        ("holm", 1.5, "alpha"),
    ],
)
def test_bad_correction_arguments_raise(method, alpha, match):
    with pytest.raises(RankhouseError, match=match):
        correct([0.1], method, alpha=alpha)
