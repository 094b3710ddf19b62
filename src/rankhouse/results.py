"""What an evaluation gives back: per-query values, query counts, and the result object.

The verbs build these (:mod:`rankhouse.evaluation`, :mod:`rankhouse.compare`) and the
presentation shows them (:mod:`rankhouse.present`); neither imports the other for them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .columns import AGGREGATE_COLUMNS, INTERVAL_SUFFIXES
from .errors import RankhouseError
from .lazy import pandas as pd


@dataclass
class QueryCounts:
    """How the query sets of one run and the qrels set met."""

    evaluated: int
    """Queries averaged over (all qrels queries, or run ∩ qrels with ``missing_queries='skip'``)."""
    missing_from_run: int
    """Qrels queries the run did not answer (scored as an empty ranking under ``'zero'``)."""
    ignored: int
    """Run queries without any judgment (not evaluated)."""
    tied_pairs: int
    """Adjacent pairs of documents with equal scores, ordered by doc id descending (trec_eval)."""


@dataclass
class PerQueryValues:
    """Per-query values as plain columns, ordered by run (request order), query id (byte
    order) and measure (request order)."""

    run: list[str] = field(default_factory=list)
    query: list[str] = field(default_factory=list)
    measure: list[str] = field(default_factory=list)
    value: list[float] = field(default_factory=list)

    def frame(
        self, runs: list[str], measures: list[str], labels: dict[str, str] | None = None
    ) -> pd.DataFrame:
        """The long DataFrame ``run, query, measure, value`` (the first three categorical);
        ``labels`` names the measures (canonical name -> label)."""
        queries = sorted(set(self.query), key=lambda q: q.encode("utf-8", "surrogatepass"))
        measure = pd.Categorical(self.measure, categories=measures)
        if labels:
            measure = measure.rename_categories([labels.get(m, m) for m in measures])
        return pd.DataFrame(
            {
                "run": pd.Categorical(self.run, categories=runs),
                "query": pd.Categorical(self.query, categories=queries),
                "measure": measure,
                "value": pd.Series(self.value, dtype="float64"),
            }
        )


class EvaluationResult:
    """What :func:`evaluate` returns. DataFrames have fixed columns whatever was asked; they
    are built when first read (the command line prints the plain :attr:`rows`).

    Attributes:
        rows: one dict per run and measure with the :data:`AGGREGATE_COLUMNS` as keys, in
            run then measure request order.
        per_query_values: the per-query values as plain columns; None when the evaluation
            was asked ``with_per_query=False`` (then :attr:`per_query` raises).
        measures: canonical measure names in request order.
        query_counts: per run name, the :class:`QueryCounts`.
        qrels: the name of the qrels set evaluated against.
        labels: per canonical measure name, its label: the name with the settings it was
            computed under (``AP`` with ``relevance_level=2`` is ``AP(rel=2)``; see
            :mod:`rankhouse.labels`). ``aggregates`` has it as column ``label``.
        level: the confidence level of the intervals of the means (``mean_low``,
            ``mean_high`` in each row: Student's t over the per-query values,
            :mod:`rankhouse.evaluation.stored`).
    """

    def __init__(
        self,
        rows: list[dict[str, Any]],
        per_query_values: PerQueryValues | None,
        measures: list[str],
        query_counts: dict[str, QueryCounts] | None = None,
        qrels: str = "",
        labels: dict[str, str] | None = None,
        level: float = 0.95,
    ) -> None:
        self.rows = rows
        self.level = level
        self.per_query_values = per_query_values
        self.measures = measures
        self.query_counts = query_counts or {}
        self.qrels = qrels
        self.labels = labels or {}

    @property
    def runs(self) -> list[str]:
        """Run names in request order."""
        return list(dict.fromkeys(row["run"] for row in self.rows))

    @cached_property
    def per_query(self) -> pd.DataFrame:
        """Long form, columns ``run, query, measure, value`` (the first three categorical),
        ordered by run, query id (byte order) and measure (request order); ``measure`` holds
        the labels (``AP(rel=2)`` for ``AP`` at level 2), as the command line prints them."""
        return self._loaded_per_query().frame(self.runs, self.measures, self.labels)

    def _loaded_per_query(self) -> PerQueryValues:
        if self.per_query_values is None:
            raise RankhouseError(
                "this result was evaluated with with_per_query=False: evaluate again "
                "without it for per-query values"
            )
        return self.per_query_values

    @cached_property
    def aggregates(self) -> pd.DataFrame:
        """Columns ``run, run_id, measure, value, mean_low, mean_high, num_q, evaluation_id,
        reused, label``: ``mean_low`` and ``mean_high`` bound the :attr:`level` interval of
        the mean (NaN for a measure not averaged over the queries)."""
        return pd.DataFrame(
            [{name: row.get(name, math.nan) for name in AGGREGATE_COLUMNS} for row in self.rows],
            columns=AGGREGATE_COLUMNS,
        )

    @cached_property
    def intervals(self) -> pd.DataFrame:
        """Wide form with the intervals: ``run``, ``num_q`` (the queries the means are over),
        then per measure its label, ``<label> low`` and ``<label> high`` (the bounds of the
        :attr:`level` interval of the mean), as ``rankhouse eval --format csv`` prints them."""
        columns, rows = self.interval_rows()
        frame = pd.DataFrame(rows, columns=columns)
        numbers = [c for c in columns if c not in ("run", "num_q")]
        return frame.astype({name: "float64" for name in numbers})

    def interval_rows(self) -> tuple[list[str], list[list[Any]]]:
        """:attr:`intervals` as plain rows: (the columns, one row per run)."""
        labels = [self.labels.get(m, m) for m in self.measures]
        columns = ["run", "num_q"]
        for name in labels:
            columns += [name, *(name + suffix for suffix in INTERVAL_SUFFIXES)]
        found = {(row["run"], row["measure"]): row for row in self.rows}
        table = []
        for run in self.runs:
            mine = [found.get((run, measure)) for measure in self.measures]
            counts = [row["num_q"] for row in mine if row is not None]
            line: list[Any] = [run, max(counts) if counts else None]
            for row in mine:
                if row is None:
                    line += [None, None, None]
                else:
                    line += [row["value"], row.get("mean_low"), row.get("mean_high")]
            table.append(line)
        return columns, table

    @cached_property
    def summary(self) -> pd.DataFrame:
        """Wide form: column ``run``, then one column per measure in request order, named by
        its label (``AP(rel=2)`` for ``AP`` evaluated with ``relevance_level=2``, as the
        command line and ``compare`` name it; the plain name at the default settings)."""
        columns = [self.labels.get(m, m) for m in self.measures]
        return pd.DataFrame(self.summary_rows(), columns=["run", *columns]).astype(
            {name: "float64" for name in columns}
        )

    def summary_rows(self) -> list[list[Any]]:
        """The wide form as plain rows: run name, then one value per measure (None: absent)."""
        found = {(row["run"], row["measure"]): row["value"] for row in self.rows}
        return [
            [run, *(found.get((run, measure)) for measure in self.measures)] for run in self.runs
        ]

    def per_query_rows(self) -> list[list[Any]]:
        """The per-query values wide, as plain rows: run, query, then one value per measure
        (None where a measure has none), in :attr:`per_query`'s order."""
        position = {measure: i for i, measure in enumerate(self.measures)}
        rows: list[list[Any]] = []
        index: dict[tuple[str, str], list[Any]] = {}
        values = self._loaded_per_query()
        for run, query, measure, value in zip(
            values.run, values.query, values.measure, values.value, strict=True
        ):
            row = index.get((run, query))
            if row is None:
                row = index[(run, query)] = [run, query, *([None] * len(self.measures))]
                rows.append(row)
            row[2 + position[measure]] = value
        return rows

    def styled(
        self,
        round: int | dict[str, int] = 4,  # noqa: A002 (PyTerrier's name)
        highlight: str | None = "bold",
    ) -> Any:
        """The means per run as an HTML table (Jupyter shows it as such).

        Args:
            round: decimals, one number or a dict measure -> decimals.
            highlight: how the best mean per measure is marked: ``'bold'``, ``'color'`` or
                None.

        Returns:
            A :class:`~rankhouse.present.HtmlTable` (``str()`` of it is the HTML).
        """
        from .present import HtmlTable, evaluation_html

        return HtmlTable(evaluation_html(self, round=round, highlight=highlight))

    def _repr_html_(self) -> str:
        return self.styled().html

    def paper_table(
        self,
        format: str = "latex",  # noqa: A002 (the command line's --format)
        *,
        round: int | dict[str, int] = 4,  # noqa: A002 (PyTerrier's name)
        intervals: bool = False,
        caption: str | None = None,
        label: str | None = None,
    ) -> str:
        """The means as a table for a paper: one row per run, one column per measure, the
        best mean of each measure in bold (``rankhouse eval --format latex|markdown``).

        Args:
            format: ``'latex'`` (booktabs, with a caption and a label) or ``'markdown'``
                (a GitHub pipe table, its caption in a line under it).
            round: decimals, one number or a dict measure -> decimals.
            intervals: show each mean's confidence interval (:attr:`level`) in brackets.
            caption: the caption instead of the one that says what the table shows.
            label: the LaTeX label instead of ``tab:evaluation``.

        Returns:
            The table's text (:mod:`rankhouse.present.papers`).

        Raises:
            RankhouseError: an unknown format, or ``round`` outside 0 to 15.
        """
        from .present.papers import evaluation_table, render

        return render(
            evaluation_table(self),
            format,
            round=round,
            intervals=intervals,
            caption=caption,
            label=label,
        )

    @property
    def num_reused(self) -> int:
        """Number of (run, measure) aggregates taken from storage rather than computed."""
        return sum(1 for row in self.rows if row["reused"])

    def __repr__(self) -> str:
        return f"EvaluationResult(qrels={self.qrels!r}, runs={self.runs}, measures={self.measures})"
