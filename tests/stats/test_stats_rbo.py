"""Extrapolated rank-biased overlap (Webber, Moffat & Zobel 2010, equation 32): the ``rbo``
package's ``rbo_ext``, ``ranked-overlap``, repro_eval's RBO, and hand computation.

The ``rbo`` package (0.1.3) requires numpy < 2, which the project's numpy rules out; its
values for the cases below were produced by ``rbo.RankingSimilarity(list(a),
list(b)).rbo_ext(p=p)`` in a separate environment and are written here. Where the package
is installed, the live test compares with it directly on generated rankings."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ranked_overlap import rbo as ranked_overlap_rbo

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # repro_eval imports scipy.stats.stats
    from repro_eval.measure.document_order import _rbo as repro_eval_rbo

from rankhouse.errors import RankhouseError
from rankhouse.stats import rank_biased_overlap

# (run, baseline, p, rbo 0.1.3's RankingSimilarity(list(run), list(baseline)).rbo_ext(p=p))
RBO_PACKAGE = [
    ("abcde", "bacdx", 0.9, 0.76878),
    ("ab", "bca", 0.5, 0.3333333333333333),
    ("abcdefghij", "abcdefghij", 0.9, 1.0),
    ("abcdefghij", "jihgfedcba", 0.9, 0.5116075656428573),
    ("abc", "xyz", 0.9, 0.0),
    ("a", "abcdef", 0.8, 1.0000000000000002),  # rbo lets rounding pass 1; here it is clipped
    ("abcdef", "a", 0.8, 1.0000000000000002),
    ("abcdefghijklmnop", "bdfhacegxyz", 0.95, 0.6734632801463718),
    ("kxcnarvmwyp", "abcdefghijklmnopqrstuvwxyz", 0.99, 0.52939174745252),
    ("abcdefghijklmnopqrst", "acegikmoqs", 0.9, 0.6442327474982261),
    ("abcd", "dcbaefgh", 0.98, 0.9539973333333334),
]


@pytest.mark.parametrize(("run", "baseline", "p", "expected"), RBO_PACKAGE)
def test_the_rbo_packages_rbo_ext(run, baseline, p, expected):
    got = rank_biased_overlap(list(run), list(baseline), p)
    assert math.isclose(got, min(expected, 1.0), rel_tol=1e-12, abs_tol=1e-15)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 60), unique=True, min_size=1, max_size=40),
    st.lists(st.integers(0, 60), unique=True, min_size=1, max_size=40),
    st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.98]),
)
def test_the_rbo_package_live_when_installed(run, baseline, p):
    rbo = pytest.importorskip("rbo", reason="rbo 0.1.3 needs numpy < 2; see RBO_PACKAGE")
    expected = rbo.RankingSimilarity(run, baseline).rbo_ext(p=p)
    got = rank_biased_overlap(run, baseline, p)
    assert math.isclose(got, min(expected, 1.0), rel_tol=1e-12, abs_tol=1e-15)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda k: st.tuples(
            st.lists(st.integers(0, 60), unique=True, min_size=k, max_size=k),
            st.lists(st.integers(0, 60), unique=True, min_size=k, max_size=k),
        )
    ),
    st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.98]),
)
def test_equal_lengths_are_ranked_overlaps_and_repro_evals(rankings, p):
    """On rankings of equal length k: ``ranked-overlap``'s rbo is RBO_ext; repro_eval's RBO
    (Clarke et al.'s) is the sum up to depth k normalised by its weights, so
    repro_eval * (1 - p^k) + X_k / k * p^k is RBO_ext."""
    run, baseline = rankings
    k = len(run)
    got = rank_biased_overlap(run, baseline, p)
    assert math.isclose(got, ranked_overlap_rbo(run, baseline, p), rel_tol=1e-12, abs_tol=1e-15)
    shared = len(set(run) & set(baseline))
    repro = repro_eval_rbo(run, baseline, p, k) * (1 - p**k) + shared / k * p**k
    assert math.isclose(got, min(repro, 1.0), rel_tol=1e-12, abs_tol=1e-15)


def test_unequal_lengths_differ_from_ranked_overlap_by_definition():
    """ranked-overlap keeps dividing by the depth past the end of the shorter ranking and
    extrapolates at the longer's depth; equation 32 lets the shorter ranking's unseen rest
    agree at its observed rate. For S = a, b and L = b, c, a (p = 0.5): here 1/3 (below),
    ranked-overlap (X_1, X_2, X_3 = 0, 1, 2; (1/2 * 1/4 + 2/3 * 1/8) * 1 + 2/3 * 1/8)
    0.2916..."""
    assert math.isclose(ranked_overlap_rbo("ab", "bca", 0.5), 0.125 + 1 / 12 + 1 / 12)
    assert math.isclose(rank_biased_overlap("ab", "bca", 0.5), 1 / 3)


def test_unequal_lengths_by_hand():
    # S = a, b (s = 2), L = b, c, a (l = 3), p = 0.5, (1 - p) / p = 1.
    # X_1 = |{a} & {b}| = 0, X_2 = |{a, b} & {b, c}| = 1, X_3 = |{a, b} & {b, c, a}| = 2.
    # seen: sum_d X_d / d p^d = 0 + 1/2 * 1/4 + 2/3 * 1/8 = 1/8 + 1/12 = 5/24;
    # unseen (d = 3): X_s (d - s) / (s d) p^d = 1 * 1 / 6 * 1/8 = 1/48;
    # extrapolated: ((X_l - X_s) / l + X_s / s) p^l = (1/3 + 1/2) * 1/8 = 5/48;
    # RBO_ext = 5/24 + 1/48 + 5/48 = 16/48 = 1/3.
    assert math.isclose(rank_biased_overlap(["a", "b"], ["b", "c", "a"], 0.5), 1 / 3)
    assert math.isclose(rank_biased_overlap(["b", "c", "a"], ["a", "b"], 0.5), 1 / 3)


def test_equal_lengths_by_hand():
    # a b c d e against b a c d x, p = 0.9: X = 0, 2, 3, 4, 4 at depths 1..5;
    # (1 - p) / p * sum X_d / d p^d = 1/9 * (0 + 0.81 + 0.729 + 0.6561 + 0.8 * 0.59049)
    # = 1/9 * 2.667492 = 0.296388; + X_5 / 5 * p^5 = 0.8 * 0.59049 = 0.472392; = 0.76878.
    assert math.isclose(rank_biased_overlap("abcde", "bacdx", 0.9), 0.76878, rel_tol=1e-12)


@pytest.mark.parametrize(
    ("run", "baseline", "expected"),
    [("", "", 1.0), ("", "ab", 0.0), ("ab", "", 0.0), ("abc", "abc", 1.0), ("abc", "def", 0.0)],
)
def test_edge_cases(run, baseline, expected):
    assert rank_biased_overlap(list(run), list(baseline)) == expected


def test_depth_compares_the_top_of_each_ranking():
    run, baseline = list("abcdefghij"), list("bacdefxyzw")
    assert rank_biased_overlap(run, baseline, depth=5) == rank_biased_overlap(run[:5], baseline[:5])


def test_ties_are_broken_by_the_caller_as_trec_eval_ranks():
    """Documents with equal scores are ordered by id descending before RBO sees them: the
    order the caller passes is the ranking."""
    scored = {"d1": 2.0, "d2": 1.0, "d3": 1.0, "d4": 0.5}
    ranked = sorted(scored, key=lambda d: (-scored[d], [-ord(c) for c in d]))
    assert ranked == ["d1", "d3", "d2", "d4"]
    assert rank_biased_overlap(ranked, ["d1", "d3", "d2", "d4"]) == 1.0
    assert rank_biased_overlap(ranked, ["d1", "d2", "d3", "d4"]) < 1.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rank_biased_overlap(["a", "b", "a"], ["a"]), "lists the document 'a' twice"),
        (lambda: rank_biased_overlap(["a"], ["a"], 1.0), "p \\(the persistence\\) must lie"),
        (lambda: rank_biased_overlap(["a"], ["a"], 0.0), "p \\(the persistence\\) must lie"),
        (lambda: rank_biased_overlap(["a"], ["a"], depth=0), "depth must be a whole number"),
    ],
)
def test_bad_input_is_refused(call, message):
    with pytest.raises(RankhouseError, match=message):
        call()
