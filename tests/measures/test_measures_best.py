"""Which value of a measure is the best: declared in the registry (``better``), read from any
label the tables show."""

from __future__ import annotations

import math

import pytest

from rankhouse.measures import REGISTRY
from rankhouse.measures.model import BETTER, best_positions, direction

# What the measures mean, not what the registry says: counts rank nothing, and the shares of
# unjudged documents (Unj, RBP's residual) are better small.
NOT_A_QUALITY = {"NumQ", "NumRet", "NumRel", "NumRelRet", "NumNonRelJudgedRet"}
LOWER_IS_BETTER = {"Unj", "RBP_resid"}


@pytest.mark.parametrize("definition", list(REGISTRY), ids=lambda d: d.name)
def test_every_measure_declares_which_value_is_best(definition):
    assert definition.better in BETTER
    if definition.name in NOT_A_QUALITY:
        assert definition.better == "none"
    elif definition.name in LOWER_IS_BETTER:
        assert definition.better == "lower"
    else:
        assert definition.better == "higher"


@pytest.mark.parametrize(
    ("label", "sign"),
    [
        ("AP", 1),
        ("AP(rel=2)", 1),
        ("nDCG@10", 1),
        ("P(rel=2)@5 [max_rank=100]", 1),
        ("MAP", 1),  # an alias
        ("Unj@5", -1),
        ("RBP_resid(p=0.9)", -1),
        ("NumRet", 0),
        ("NumRel(rel=2)", 0),
        ("NumRelRet [missing_queries=skip]", 0),
        ("not_a_measure@3", 1),
    ],
)
def test_direction_of_a_label(label, sign):
    assert direction(label) == sign


@pytest.mark.parametrize(
    ("values", "label", "best"),
    [
        ([0.2, 0.5, 0.5, None], "nDCG@10", {1, 2}),
        ([0.2, 0.5, math.nan], "Unj@10", {0}),
        ([10, 20], "NumRet", set()),
        ([0.3], "AP", set()),  # one value is not a comparison
        ([None, 0.3], "AP", set()),
    ],
)
def test_best_positions(values, label, best):
    assert best_positions(values, label) == best
