"""The two-way analysis of variance of several systems over the same queries: system x query,
no interaction, one observation per cell (a randomized complete block design with the
queries as blocks: Montgomery, *Design and Analysis of Experiments*, chapter 4; the model of
Carterette, TOIS 30(1), 2012, for IR evaluation).

With x_ij the score of system i (of m) on query j (of n), row means x_i., column means
x_.j and grand mean x_..:

    SS_system   = n * sum_i (x_i. - x_..)^2,              df = m - 1
    SS_query    = m * sum_j (x_.j - x_..)^2,              df = n - 1
    SS_residual = sum_ij (x_ij - x_i. - x_.j + x_..)^2,   df = (m - 1)(n - 1)
    MS = SS / df,  F = MS / MS_residual,  p = P(F_{df, df_residual} >= F)

The p-value comes from :func:`scipy.special.fdtrc`. The table equals statsmodels'
``anova_lm(ols('score ~ C(system) + C(query)', data))`` (type I; with one observation per
cell the design is balanced and types I, II and III agree). When the residual sum of
squares is 0 (scores exactly additive), F is infinite (p = 0) for a source with a non-zero
sum of squares and NaN for one without.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..lazy import numpy as np
from ..lazy import scipy_special
from .checks import score_matrix


@dataclass(frozen=True)
class AnovaRow:
    """One source of variation: sum of squares, degrees of freedom, mean square, F and its
    p-value (NaN for the residual)."""

    source: str
    sum_of_squares: float
    df: int
    mean_square: float
    f: float
    p_value: float


@dataclass(frozen=True)
class AnovaTable:
    """The two-way ANOVA table: the ``system``, ``query`` and ``residual`` rows."""

    system: AnovaRow
    query: AnovaRow
    residual: AnovaRow

    @property
    def rows(self) -> tuple[AnovaRow, AnovaRow, AnovaRow]:
        return (self.system, self.query, self.residual)


def two_way_anova(scores: Sequence[Sequence[float]]) -> AnovaTable:
    """The system x query ANOVA table of ``scores`` (systems x queries, finite numbers).

    Raises:
        RankhouseError: fewer than two systems or two queries, or a value that is not a
            finite number.
    """
    matrix = score_matrix(scores, [str(i) for i in range(len(scores))])
    m, n = matrix.shape
    grand = matrix.mean()
    system_means = matrix.mean(axis=1)
    query_means = matrix.mean(axis=0)
    residuals = matrix - system_means[:, None] - query_means[None, :] + grand
    residual_ss = float(np.sum(residuals**2))
    residual_df = (m - 1) * (n - 1)
    residual_ms = residual_ss / residual_df

    def row(source: str, ss: float, df: int) -> AnovaRow:
        ms = ss / df
        f = _ratio(ms, residual_ms)
        p = float(scipy_special.fdtrc(np.float64(df), np.float64(residual_df), np.float64(f)))
        return AnovaRow(source, ss, df, ms, f, 0.0 if f == math.inf else p)

    return AnovaTable(
        system=row("system", float(n * np.sum((system_means - grand) ** 2)), m - 1),
        query=row("query", float(m * np.sum((query_means - grand) ** 2)), n - 1),
        residual=AnovaRow("residual", residual_ss, residual_df, residual_ms, math.nan, math.nan),
    )


def _ratio(mean_square: float, residual_mean_square: float) -> float:
    if residual_mean_square > 0:
        return mean_square / residual_mean_square
    return math.inf if mean_square > 0 else math.nan
