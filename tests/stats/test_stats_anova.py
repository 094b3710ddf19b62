"""The two-way system x query ANOVA table, against statsmodels' ols + anova_lm and by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm

from rankhouse.errors import RankhouseError
from rankhouse.stats import two_way_anova


def _statsmodels(scores: np.ndarray) -> pd.DataFrame:
    frame = pd.DataFrame(
        [
            (f"s{i}", f"q{j:04d}", float(scores[i, j]))
            for i in range(scores.shape[0])
            for j in range(scores.shape[1])
        ],
        columns=["system", "query", "score"],
    )
    table = anova_lm(ols("score ~ C(system) + C(query)", frame).fit())
    return table.rename(index={"C(system)": "system", "C(query)": "query", "Residual": "residual"})


def _assert_table(scores: np.ndarray, tolerance: float = 1e-9) -> None:
    expected = _statsmodels(scores)
    got = two_way_anova(scores)
    for row in got.rows:
        reference = expected.loc[row.source]
        assert row.df == reference["df"]
        # a sum of squares that is 0 exactly here is rounding noise (1e-32) in statsmodels
        assert math.isclose(
            row.sum_of_squares, reference["sum_sq"], rel_tol=tolerance, abs_tol=1e-12
        )
        assert math.isclose(row.mean_square, reference["mean_sq"], rel_tol=tolerance, abs_tol=1e-12)
        if row.source == "residual":
            assert math.isnan(row.f) and math.isnan(row.p_value)
        else:
            assert math.isclose(row.f, reference["F"], rel_tol=tolerance, abs_tol=1e-9)
            assert math.isclose(row.p_value, reference["PR(>F)"], rel_tol=tolerance, abs_tol=1e-300)


@pytest.mark.parametrize(
    ("systems", "queries", "effect"),
    [(2, 2, 0.0), (4, 43, 0.05), (10, 50, 0.02), (3, 200, 0.0), (5, 8, 0.3)],
)
def test_the_table_is_statsmodels_anova_lm(systems, queries, effect):
    rng = np.random.default_rng(systems * queries)
    difficulty = rng.random(queries)
    scores = np.clip(
        difficulty[None, :]
        + effect * np.arange(systems)[:, None]
        + rng.normal(0, 0.1, (systems, queries)),
        0,
        1,
    )
    _assert_table(scores)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 6).flatmap(
        lambda m: st.lists(
            st.lists(st.floats(0, 1), min_size=m, max_size=m), min_size=2, max_size=12
        )
    )
)
def test_generated_tables_are_statsmodels(columns):
    scores = np.array(columns).T
    residual = scores - scores.mean(1, keepdims=True) - scores.mean(0) + scores.mean()
    if np.sum(residual**2) < 1e-12:
        return  # statsmodels divides by a residual of rounding noise; see the additive case
    _assert_table(scores, tolerance=1e-7)


def test_by_hand():
    # scores [[1, 2], [3, 6]]: grand mean 3, system means 1.5 and 4.5, query means 2 and 4;
    # SS_system = 2 * (1.5^2 + 1.5^2) = 9, SS_query = 2 * (1^2 + 1^2) = 4, residuals
    # [[0.5, -0.5], [-0.5, 0.5]] so SS_residual = 1; every df is 1, so F = 9 and 4. F with
    # (1, 1) df is the square of a Cauchy (t with 1 df): P(F >= f) = 1 - 2 / pi * atan(sqrt f).
    got = two_way_anova([[1.0, 2.0], [3.0, 6.0]])
    assert (got.system.sum_of_squares, got.query.sum_of_squares) == (9.0, 4.0)
    assert (got.residual.sum_of_squares, got.residual.df) == (1.0, 1)
    assert (got.system.f, got.query.f) == (9.0, 4.0)
    assert math.isclose(got.system.p_value, 1 - 2 / math.pi * math.atan(3), rel_tol=1e-12)
    assert math.isclose(got.query.p_value, 1 - 2 / math.pi * math.atan(2), rel_tol=1e-12)


def test_exactly_additive_scores_give_an_infinite_f():
    # x_ij = a_i + b_j exactly (halves are exact in binary): the residual is 0.
    got = two_way_anova([[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]])
    assert got.residual.sum_of_squares == 0.0
    assert (got.system.f, got.system.p_value) == (math.inf, 0.0)
    assert got.query.f == math.inf


def test_identical_systems_have_nan_f_when_nothing_varies():
    got = two_way_anova([[0.5, 0.5], [0.5, 0.5]])
    assert math.isnan(got.system.f) and math.isnan(got.system.p_value)


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([[0.1, 0.2]], "at least two systems and two queries"),
        ([[0.1], [0.2]], "at least two systems and two queries"),
        ([[0.1, math.nan], [0.2, 0.3]], "finite numbers"),
        ([0.1, 0.2], "a table of systems x queries"),
    ],
)
def test_bad_scores_are_refused(scores, message):
    with pytest.raises(RankhouseError, match=message):
        two_way_anova(scores)
