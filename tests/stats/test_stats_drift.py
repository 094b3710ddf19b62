"""Order drift of a run's ranking from its baseline's: the four measures over the top k."""

from __future__ import annotations

import math

import pytest

from rankhouse.errors import RankhouseError
from rankhouse.stats import (
    DEFAULT_DEPTH,
    DEFAULT_PERSISTENCE,
    drift,
    kendall_tau,
    overlap,
    rank_biased_overlap,
    tau_ap,
)


def test_drift_gathers_the_measures_over_the_top_k():
    run = [f"d{i}" for i in range(150)]
    baseline = run[:3][::-1] + run[3:90] + [f"x{i}" for i in range(60)]
    got = drift(run, baseline)
    assert (got.k, got.p) == (DEFAULT_DEPTH, DEFAULT_PERSISTENCE) == (100, 0.9)
    assert got.rbo == rank_biased_overlap(run[:100], baseline[:100], 0.9)
    assert got.kendall_tau == kendall_tau(run, baseline, 100)
    assert got.tau_ap == tau_ap(run, baseline, 100)
    assert got.overlap == overlap(run, baseline, 100) == 0.9
    assert got.shared == 90


def test_by_hand():
    # top 5 of a b c d e f and b a c d x: RBO_ext 0.76878 (tests/stats/test_stats_rbo.py), tau 2/3,
    # tau_AP 1/3 (tests/stats/test_stats_rank_correlation.py), overlap 4/5, 4 shared.
    got = drift(list("abcdef"), list("bacdx"), k=5, p=0.9)
    assert math.isclose(got.rbo, 0.76878, rel_tol=1e-12)
    assert math.isclose(got.kendall_tau, 2 / 3) and math.isclose(got.tau_ap, 1 / 3)
    assert (got.overlap, got.shared) == (0.8, 4)


def test_a_rerun_that_keeps_its_documents_but_reorders_them():
    """The same ten documents, the top two swapped: overlap stays 1, the order measures drop."""
    run = list("abcdefghij")
    got = drift(list("bacdefghij"), run, k=10)
    assert got.overlap == 1.0
    assert got.rbo < 1.0 and got.kendall_tau < 1.0 and got.tau_ap < got.kendall_tau


def test_identical_rankings_do_not_drift():
    got = drift(list("abcdef"), list("abcdef"), k=3)
    assert (got.rbo, got.kendall_tau, got.tau_ap, got.overlap, got.shared) == (1, 1, 1, 1, 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be a whole number from 1"),
        ({"p": 1.5}, "p \\(the persistence\\) must lie strictly between 0 and 1"),
    ],
)
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(RankhouseError, match=message):
        drift(["a"], ["a"], **kwargs)
