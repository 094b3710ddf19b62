"""The columns of what the verbs return, where both the verbs and the presentation read them,
and :class:`Rows`, a plain result: column names and rows of Python values, as the database
returns them.

A result's columns are fixed whatever was asked for (STYLE 6): these tuples are their order.

The catalogue and history build :class:`Rows` first. The Python API turns them into
DataFrames; the CLI prints them as they are, so that listing what a warehouse holds never
imports pandas (a third of a second, most of such a command's run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pandas as pd

AGGREGATE_COLUMNS = [
    "run",
    "run_id",
    "measure",
    "value",
    "mean_low",
    "mean_high",
    "num_q",
    "evaluation_id",
    "reused",
    "label",
]
"""Columns of :attr:`~rankhouse.results.EvaluationResult.aggregates`, in order.

``mean_low``/``mean_high`` bound the t interval of the mean (compare's names and meaning; NaN
for a measure not averaged over the queries, or over fewer than two)."""

INTERVAL_SUFFIXES = (" low", " high")
"""A wide table's interval columns: ``AP low`` and ``AP high`` beside ``AP`` (compare's
``--wide`` names), in eval's and history's CSV and JSON."""

COMPARE_COLUMNS = (
    "run",
    "measure",
    "mean",
    "mean_low",
    "mean_high",
    "num_q",
    "baseline",
    "delta",
    "delta_low",
    "delta_high",
    "hedges_gz",
    "verdict",
    "margin",
    "gate",
    "mde",
    "num_paired",
    "improved",
    "degraded",
    "tied",
    "p_value",
    "p_corrected",
    "significant",
)
"""Columns of :func:`rankhouse.compare.compare`'s result, one row per run and measure.

``mean_low``/``mean_high`` bound the interval of the mean, ``delta_low``/``delta_high`` the
interval of the paired difference (run minus baseline), ``hedges_gz`` is its standardized
effect size, ``verdict`` one of :data:`rankhouse.stats.VERDICTS`, ``margin`` the absolute
practical margin the verdict used, ``gate`` what the nightly gate says at that margin
(:data:`rankhouse.stats.GATE_WORDS`: ``non_inferior``, ``regressed``, ``not_shown``; None
without a margin) and ``mde`` the minimum detectable effect at the pairs' number and spread
(docs/compare.md)."""

COMPARE_NUMBERS = frozenset(COMPARE_COLUMNS) - {
    "run",
    "measure",
    "baseline",
    "significant",
    "verdict",
    "gate",
}
"""The columns of :data:`COMPARE_COLUMNS` that hold numbers (the others hold names and flags)."""

ANOVA_COLUMNS = ("measure", "source", "sum_of_squares", "df", "mean_square", "f", "p_value")
"""Columns of :attr:`rankhouse.compare.AllPairs.anova`: the two-way (system x query) table."""

PAIR_COLUMNS = (
    "measure",
    "run",
    "other",
    "difference",
    "p_value",
    "significant",
    "method",
    "num_q",
    "permutations",
    "seed",
)
"""Columns of :attr:`rankhouse.compare.AllPairs.pairs`: every pair of runs once (``run``'s mean
minus ``other``'s, the family-wise p-value)."""

GROUP_COLUMNS = ("measure", "run", "mean", "mean_low", "mean_high", "num_q", "group")
"""Columns of :attr:`rankhouse.compare.AllPairs.groups`: each run's mean over the queries every
run has, its interval and its compact letters, best first."""

DRIFT_COLUMNS = (
    "run",
    "baseline",
    "k",
    "p",
    "num_q",
    "rbo",
    "kendall_tau",
    "tau_ap",
    "overlap",
    "num_tau",
)
"""Columns of the order drift of runs against a baseline (:func:`rankhouse.compare.drift`),
one row per run: means over the queries (``num_tau``: those where both tau are defined)."""

QUERY_DRIFT_COLUMNS = (
    "run",
    "baseline",
    "query",
    "rbo",
    "kendall_tau",
    "tau_ap",
    "overlap",
    "shared",
)
"""Columns of the per-query order drift: one row per run and query."""

PER_QUERY_COLUMNS = ("run", "query", "measure", "value")
"""Columns of the per-query values ``compare(..., perquery=True)`` returns."""

HISTORY_FIXED_COLUMNS = ("ingested_at", "run", "system", "qrels")
"""The leading columns of :func:`rankhouse.history.history`; metadata columns, measures,
``inputs``, ``new_inputs`` and ``gate`` follow."""

HIDDEN_METADATA = frozenset({"source", "content_sha256"})
"""Metadata keys every run has; left out of history's and the report's columns (they are in
``run_catalog``)."""

VERDICT_COLUMNS = (
    "measure",
    "baseline_value",
    "run_value",
    "delta",
    "delta_low",
    "delta_high",
    "drop",
    "tolerance",
    "margin",
    "bound",
    "hedges_gz",
    "num_q",
    "improved",
    "degraded",
    "p_value",
    "p_corrected",
    "significant",
    "verdict",
    "status",
    "regressed",
    "fails",
    "margin_source",
    "spread",
    "spread_nights",
    "false_alarm",
    "detectable_drop",
    "run_evaluation_id",
    "baseline_evaluation_id",
)
"""Columns of a :class:`~rankhouse.regress.RegressResult`'s verdicts, one row per measure.

``delta_low``/``delta_high`` bound the interval of the paired difference (run minus
baseline) at the check's level; ``drop`` is how much worse the run is (in the measure's
direction), in the unit of ``tolerance`` (the margin as given: absolute, or a share of the
reference's mean; NaN when calibrated); ``margin`` is the margin in the measure's units;
``bound`` the non-inferiority bound (the lower limit of the (1 - 2 alpha) interval, the upper
one when lower is better; NaN in the significance mode); ``hedges_gz`` the standardized effect
size; ``num_q`` the queries paired; ``improved``/``degraded`` the queries better and worse in
the measure's direction; ``verdict`` the word of :data:`rankhouse.stats.VERDICTS`; ``status``
what the gate made of it (``non_inferior``, ``regressed``, ``not_shown``; in the significance
mode ``regressed``, ``not_significant``, ``within_tolerance``, ``unchanged``, ``improved``);
``regressed`` the status is ``regressed``; ``fails`` the measure fails the gate;
``margin_source`` where the margin came from (``given``, ``calibrated``, ``tonight``);
``spread`` the standard deviation of per-query nightly differences behind the figures,
``spread_nights`` the nightly differences it pooled (0: tonight's queries); ``false_alarm``
the expected share of unchanged nights the measure fails; ``detectable_drop`` the drop it
fails on the first night with probability 0.8 (:mod:`rankhouse.regress.verdicts`)."""

VERDICT_NUMBERS = tuple(
    name
    for name in VERDICT_COLUMNS
    if name not in ("measure", "significant", "verdict", "status", "regressed", "fails")
    and name != "margin_source"
)
"""The verdict columns that hold numbers."""


# --- a plain result ---------------------------------------------------------------------------


class Rows(NamedTuple):
    """A result: ``columns`` (names) and ``rows`` (tuples, one value per column)."""

    columns: list[str]
    rows: list[tuple[Any, ...]]

    def column(self, name: str) -> list[Any]:
        """The values of one column, in row order."""
        index = self.columns.index(name)
        return [row[index] for row in self.rows]

    def frame(self) -> pd.DataFrame:
        """The rows as a DataFrame (pandas chooses each column's dtype)."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=self.columns)


def fetched(result) -> Rows:
    """The :class:`Rows` of a SQLAlchemy-style result (``keys()`` and ``fetchall()``)."""
    return Rows(list(result.keys()), [tuple(row) for row in result.fetchall()])
