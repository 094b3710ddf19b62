"""Kendall's tau, tau_AP and overlap@k over the top k of two rankings: scipy's kendalltau,
the ``tau-ap`` package, hand computation, and where repro_eval's KTU differs by definition."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from tau_ap import tau_ap as tau_ap_package

from rankhouse.errors import RankhouseError
from rankhouse.stats import kendall_tau, overlap, tau_ap

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # repro_eval imports scipy.stats.stats
    from repro_eval.measure.document_order import _KTU as repro_eval_ktu

_rankings = st.tuples(
    st.lists(st.integers(0, 30), unique=True, max_size=25),
    st.lists(st.integers(0, 30), unique=True, max_size=25),
    st.one_of(st.none(), st.integers(1, 25)),
)


def _shared(run, baseline, k):
    """Positions of the documents in both top-k lists, in each ranking."""
    top_run, top_baseline = run[:k], baseline[:k]
    both = [d for d in top_run if d in top_baseline]
    return [top_run.index(d) for d in both], [top_baseline.index(d) for d in both]


@settings(max_examples=400, deadline=None)
@given(_rankings)
def test_kendall_tau_is_scipys_over_the_shared_documents(rankings):
    run, baseline, k = rankings
    in_run, in_baseline = _shared(run, baseline, k)
    got = kendall_tau(run, baseline, k)
    if len(in_run) < 2:
        assert math.isnan(got)
    else:
        expected = scipy_stats.kendalltau(in_run, in_baseline).statistic
        assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-15)


@settings(max_examples=400, deadline=None)
@given(_rankings)
def test_tau_ap_is_the_tau_ap_package_with_the_baseline_as_reference(rankings):
    """tau-ap's ``tau_ap(x, y)`` takes two score lists over the same items; items listed in
    the run's order, x their run positions and y their baseline positions."""
    run, baseline, k = rankings
    in_run, in_baseline = _shared(run, baseline, k)
    got = tau_ap(run, baseline, k)
    if len(in_run) < 2:
        assert math.isnan(got)
    else:
        expected = tau_ap_package(in_run, in_baseline)
        assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-15)


def test_by_hand_with_unequal_lengths():
    # top 5 of a b c d e f g and of b a c d x y: shared a, b, c, d (e and x are in one top 5
    # only, f, g, y are beyond it). Baseline positions in the run's order: 1, 0, 2, 3.
    # Pairs: (a, b) discordant, the other 5 concordant: tau = (5 - 1) / 6 = 2/3.
    # tau_AP: C(2) = 0 (a is above b in the run, not in the baseline), C(3) = 2, C(4) = 3;
    # 2 / 3 * (0 / 1 + 2 / 2 + 3 / 3) - 1 = 1/3. overlap@5 = 4 / 5.
    run, baseline = list("abcdefg"), list("bacdxy")
    assert math.isclose(kendall_tau(run, baseline, 5), 2 / 3)
    assert math.isclose(tau_ap(run, baseline, 5), 1 / 3)
    assert overlap(run, baseline, 5) == 0.8


def test_a_swap_at_the_top_costs_tau_ap_more_than_at_the_bottom():
    # Kendall's tau counts one discordant pair either way: (10 - 1) / 10 = 0.8 for 5 items.
    # tau_AP, top swap: C = 0, 2, 3, 4 -> 2/4 * (0 + 1 + 1 + 1) - 1 = 0.5;
    # bottom swap: C = 1, 2, 3, 3 -> 2/4 * (1 + 1 + 1 + 3/4) - 1 = 0.875.
    reference = list("abcde")
    top, bottom = list("bacde"), list("abced")
    assert kendall_tau(top, reference) == kendall_tau(bottom, reference) == 0.8
    assert math.isclose(tau_ap(top, reference), 0.5)
    assert math.isclose(tau_ap(bottom, reference), 0.875)


def test_tau_ap_is_not_symmetric():
    # run b, c, d, a against the baseline a, b, c, d: baseline positions 1, 2, 3, 0 give
    # C = 1, 2, 0 and tau_AP = 2/3 * (1/1 + 2/2 + 0/3) - 1 = 1/3 (the top is right, a fell).
    assert math.isclose(tau_ap(list("bcda"), list("abcd")), 1 / 3)
    # the other way round: a, b, c, d at positions 3, 0, 1, 2 of b, c, d, a give C = 0, 1, 2
    # and 2/3 * (0/1 + 1/2 + 2/3) - 1 = -2/9 (the top is wrong). Kendall's tau: 0 both ways.
    assert math.isclose(tau_ap(list("abcd"), list("bcda")), -2 / 9)
    assert kendall_tau(list("bcda"), list("abcd")) == kendall_tau(list("abcd"), list("bcda"))


def test_repro_evals_ktu_differs_by_definition():
    """repro_eval's KTU correlates, rank by rank, the documents' places in the sorted union of
    the two lists: it agrees with Kendall's tau when the original lists its documents in id
    order, not otherwise."""

    def ktu(orig, rep):
        result = dict(repro_eval_ktu({"q": dict.fromkeys(orig, 0)}, {"q": dict.fromkeys(rep, 0)}))
        return result["q"]

    assert math.isclose(ktu("abdc", "acdb"), 2 / 3)
    assert kendall_tau(list("acdb"), list("abdc")) == 0.0
    assert math.isclose(ktu("abcd", "bdac"), kendall_tau(list("bdac"), list("abcd")))


@pytest.mark.parametrize(
    ("run", "baseline", "tau", "ap"),
    [
        ("abcdef", "abcdef", 1.0, 1.0),
        ("abcdef", "fedcba", -1.0, -1.0),
        ("abc", "xyz", math.nan, math.nan),
        ("ab", "a", math.nan, math.nan),
        ("", "", math.nan, math.nan),
    ],
)
def test_edge_cases(run, baseline, tau, ap):
    for got, expected in (
        (kendall_tau(list(run), list(baseline)), tau),
        (tau_ap(list(run), list(baseline)), ap),
    ):
        assert got == expected or (math.isnan(got) and math.isnan(expected))


@pytest.mark.parametrize(
    ("run", "baseline", "k", "expected"),
    [
        ("abcde", "abcde", 5, 1.0),
        ("abcde", "edcba", 3, 1 / 3),  # top 3: a b c against e d c
        ("abc", "abc", 10, 0.3),  # short rankings count against k, as P@10 does
        ("abc", "xyz", 3, 0.0),
        ("", "abc", 2, 0.0),
    ],
)
def test_overlap(run, baseline, k, expected):
    assert math.isclose(overlap(list(run), list(baseline), k), expected)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: kendall_tau(["a", "a"], ["a"]), "lists the document 'a' twice"),
        (lambda: tau_ap(["a"], ["b", "b"]), "the baseline's ranking lists the document 'b' twice"),
        (lambda: kendall_tau(["a"], ["a"], 0), "k must be a whole number from 1"),
        (lambda: overlap(["a"], ["a"], None), "overlap@k needs k"),
        (lambda: overlap(["a"], ["a"], 2.5), "k must be a whole number from 1"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(RankhouseError, match=message):
        call()
