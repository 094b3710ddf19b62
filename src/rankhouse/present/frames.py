"""Notebook display: results that Jupyter shows as rankhouse's HTML tables, and PyTerrier's
Experiment tables.

``compare``, ``history`` and ``rankhouse.experiment(..., shape="pyterrier")`` return these
DataFrame subclasses; they behave as DataFrames in every way (anything derived from them is a
plain DataFrame) and add ``_repr_html_`` and ``styled()``, with the report's options:
``round`` (decimals, one number or per measure) and ``highlight`` (``'bold'``, ``'color'`` or
None: how the best value per measure is marked). Defaults can be stored in
``frame.attrs["display"]`` (a dict of those two options).

The classes subclass pandas' DataFrame, so they are made when first asked for
(``frames.ComparisonFrame``), with pandas: a command that prints plain rows never imports it.

PyTerrier's Experiment table: a comparison's long rows made wide, one row per run
(:func:`experiment_table`, :func:`experiment_rows`). PyTerrier's own ``pt.Experiment`` frame
(:class:`ExperimentFrame`) is highlighted as PyTerrier's Styler does: in each mean column and
``<m> +`` column the highest value, in each ``<m> -`` column the lowest, in bold
(``highlight="bold"``) or on a green background (``"color"``). rankhouse returns the frame
itself and marks the same cells when a notebook shows it (:func:`experiment_html`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from ..lazy import pandas as pd
from . import (
    DEFAULT_ROUND,
    HtmlTable,
    best_class,
    cell,
    comparison_html,
    digits_for,
    history_html,
    p_value,
    table,
)
from .panels import comparison_panels_html, drift_html, frame_rows
from .papers import comparison_table, render

_FRAMES = ("ComparisonFrame", "ExperimentFrame", "HistoryFrame")

DEFAULT_SETTINGS = {
    "level": 0.95,
    "interval": "t",
    "test": "t",
    "correction": "none",
    "alpha": 0.05,
}
"""compare's settings, for a frame that lost its ``attrs["comparison"]``."""

EVERY_COLUMN = (
    "every column: PyTerrier's Experiment table (p-values, queries improved and degraded)"
)
"""The summary of the wide table under the panels."""


def __getattr__(name: str) -> type:
    if name in _FRAMES:
        return _frame_classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _frame_classes() -> dict[str, type]:
    class _DisplayFrame(pd.DataFrame):
        @property
        def _constructor(self):
            # Frames derived by selection or arithmetic are plain DataFrames: the table layout
            # only fits the whole result.
            return pd.DataFrame

        def _display_options(self, round: Any, highlight: Any) -> dict[str, Any]:  # noqa: A002
            stored = self.attrs.get("display", {})
            return {
                "round": stored.get("round", DEFAULT_ROUND) if round is None else round,
                "highlight": stored.get("highlight", "bold")
                if highlight == "default"
                else highlight,
            }

        def _render(self, **options: Any) -> str:
            raise NotImplementedError

        def styled(
            self,
            round: int | Mapping[str, int] | None = None,  # noqa: A002 (PyTerrier's name)
            highlight: str | None = "default",
        ) -> HtmlTable:
            """The HTML table with these display options (Jupyter shows it as a table).

            Args:
                round: decimals, one number or a dict measure -> decimals (default 4).
                highlight: ``'bold'`` (default), ``'color'`` or None.
            """
            return HtmlTable(self._render(**self._display_options(round, highlight)))

        def _repr_html_(self) -> str:
            return self.styled().html

    class ComparisonFrame(_DisplayFrame):
        """:func:`rankhouse.compare.compare`'s result: shown as compare's compact panels (one
        table per measure: mean, difference with its interval, g_z, verdict), PyTerrier's
        Experiment table with every column folded under them, and the order drift when
        asked for."""

        _metadata = ["_drift"]

        @property
        def drift(self) -> pd.DataFrame | None:
            """The order drift of each run from the baseline (``compare(..., drift=True)``;
            :data:`~rankhouse.columns.DRIFT_COLUMNS`), or None when not asked for."""
            return getattr(self, "_drift", None)

        def _render(self, **options: Any) -> str:
            settings = {**DEFAULT_SETTINGS, **self.attrs.get("comparison", {})}
            frame = pd.DataFrame(self)
            found = comparison_panels_html(frame_rows(frame), settings, **options)
            wide = comparison_html(frame, settings=settings, **options)
            found += f"<details><summary>{EVERY_COLUMN}</summary>{wide}</details>"
            if self.drift is not None:
                digits = options["round"] if isinstance(options["round"], int) else 4
                found += drift_html(self.drift, round=digits)
            return found

        def experiment_table(self) -> pd.DataFrame:
            """The wide table, one row per run (:func:`experiment_table`)."""
            return experiment_table(self)

        def paper_table(
            self,
            format: str = "latex",  # noqa: A002 (the command line's --format)
            *,
            round: int | Mapping[str, int] | None = None,  # noqa: A002 (PyTerrier's name)
            intervals: bool = False,
            caption: str | None = None,
            label: str | None = None,
        ) -> str:
            """The means as a table for a paper: one row per run, one column per measure,
            the best mean of each measure in bold and, against a baseline, a dagger on the
            means significantly different from it, with the test and the correction named
            in the caption (``rankhouse compare --format latex|markdown``).

            Args:
                format: ``'latex'`` (booktabs, with a caption and a label) or
                    ``'markdown'`` (a GitHub pipe table, its caption in a line under it).
                round: decimals, one number or a dict measure -> decimals (default: the
                    frame's ``round``, else 4).
                intervals: show each mean's confidence interval in brackets.
                caption: the caption instead of the one made from the settings.
                label: the LaTeX label instead of ``tab:comparison``.

            Returns:
                The table's text (:mod:`rankhouse.present.papers`).

            Raises:
                RankhouseError: an unknown format, or ``round`` outside 0 to 15.
            """
            settings = {**DEFAULT_SETTINGS, **self.attrs.get("comparison", {})}
            table = comparison_table(frame_rows(pd.DataFrame(self)), settings)
            digits = self._display_options(round, None)["round"]
            return render(
                table, format, round=digits, intervals=intervals, caption=caption, label=label
            )

    class HistoryFrame(_DisplayFrame):
        """:func:`rankhouse.history.history`'s result: the best value per measure and qrels
        set marked, failed gates in red."""

        def _render(self, **options: Any) -> str:
            level = self.attrs.get("history", {}).get("level")
            return history_html(pd.DataFrame(self), level=level, **options)

    class ExperimentFrame(_DisplayFrame):
        """PyTerrier's ``pt.Experiment`` frame (``rankhouse.experiment(...,
        shape="pyterrier")``): shown with the best values marked, as PyTerrier's Styler."""

        def _render(self, **options: Any) -> str:
            return experiment_html(pd.DataFrame(self), **options)

    made = {
        "ComparisonFrame": ComparisonFrame,
        "ExperimentFrame": ExperimentFrame,
        "HistoryFrame": HistoryFrame,
    }
    for name, frame_class in made.items():  # found again by name (pickle, documentation)
        frame_class.__module__ = __name__
        frame_class.__qualname__ = name
    return made


#: The columns :func:`experiment_rows` gives each measure: (suffix of the column name, the
#: comparison's column shown, a number or not); the interval of the mean always, the tests'
#: when a baseline was given.
_MEAN_CELLS = (("", "mean", True), (" low", "mean_low", True), (" high", "mean_high", True))
_TEST_CELLS = (
    (" delta", "delta", True),
    (" delta low", "delta_low", True),
    (" delta high", "delta_high", True),
    (" g_z", "hedges_gz", True),
    (" +", "improved", True),
    (" -", "degraded", True),
    (" p", "p_value", True),
    (" p corr", "p_corrected", True),
    (" verdict", "verdict", False),
    (" mde", "mde", True),
)


def experiment_rows(
    rows: Sequence[Mapping[str, Any]],
) -> tuple[list[str], list[list[Any]], list[bool]]:
    """:func:`experiment_table` of :attr:`rankhouse.compare.Comparison.rows`, as plain values:
    (the columns, one row per run, which columns hold numbers). A missing cell is None or
    NaN."""
    runs = list(dict.fromkeys(row["run"] for row in rows))
    measures = list(dict.fromkeys(row["measure"] for row in rows))
    found = {(row["run"], row["measure"]): row for row in rows}
    cells = list(_MEAN_CELLS)
    if any(row["baseline"] is not None for row in rows):
        cells += _TEST_CELLS
    columns, numeric = ["run"], [False]
    table: list[list[Any]] = [[run] for run in runs]
    for measure in measures:
        for suffix, key, is_number in cells:
            columns.append(measure + suffix)
            numeric.append(is_number)
            for run, line in zip(runs, table, strict=True):
                row = found.get((run, measure))
                line.append(None if row is None else row[key])
    return columns, table, numeric


def experiment_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The wide view of :func:`rankhouse.compare.compare`'s result, one row per run:
    PyTerrier's Experiment.

    Columns: ``run``, then per measure its mean with ``<m> low`` and ``<m> high`` (the
    bounds of its interval), and when a baseline was given ``<m> delta`` (run mean -
    baseline mean), ``<m> delta low`` and ``<m> delta high`` (the interval of the paired
    difference), ``<m> g_z`` (Hedges' g_z), ``<m> +`` (queries improved), ``<m> -`` (queries
    degraded), ``<m> p`` (p-value), ``<m> p corr`` (corrected p-value), ``<m> verdict``
    (better, worse, equivalent, inconclusive) and ``<m> mde`` (the minimum detectable
    effect). The baseline's own test cells are empty. PyTerrier calls the p-values ``<m>
    p-value`` and ``<m> p-value corrected``; its ``<m> reject`` is the long form's
    ``significant``.

    Args:
        frame: :func:`rankhouse.compare.compare`'s long result (or any frame with
            :data:`~rankhouse.columns.COMPARE_COLUMNS`).

    Returns:
        A plain DataFrame, one row per run in the order of ``frame``.
    """
    runs = list(dict.fromkeys(frame["run"]))
    measures = list(dict.fromkeys(frame["measure"]))
    indexed = pd.DataFrame(frame).set_index(["run", "measure"])
    has_baseline = frame["baseline"].notna().any()
    columns: dict[str, Any] = {"run": runs}
    for measure in measures:
        part = indexed.xs(measure, level="measure").reindex(runs)
        cells = _MEAN_CELLS + (_TEST_CELLS if has_baseline else ())
        for suffix, key, is_number in cells:
            if key in ("improved", "degraded"):
                columns[measure + suffix] = pd.array(part[key], dtype="Int64")
            elif is_number:
                columns[measure + suffix] = part[key].to_numpy(dtype=float)
            else:
                columns[measure + suffix] = part[key].astype(object).to_numpy()
    # built in one step: a column at a time fragments a frame of many measures
    return pd.DataFrame(columns)


_TESTS = (" +", " -", " p-value", " reject", " p-value corrected")


def experiment_html(
    frame: pd.DataFrame,
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002 (PyTerrier's name)
    highlight: str | None = "bold",
) -> str:
    """The frame of :func:`rankhouse.compare.pyterrier.pyterrier_experiment` as a table."""
    columns = list(frame.columns)
    tests = {f"{c}{suffix}" for c in columns for suffix in _TESTS}
    means = [c for c in columns[1:] if c not in tests]
    mark = best_class(highlight)
    best: dict[str, set[int]] = {}
    for column in columns[1:]:
        wanted = max if column in means or column.endswith(" +") else None
        wanted = min if column.endswith(" -") and column not in means else wanted
        values = [v for v in frame[column] if _number(v)]
        if wanted is None or not values or not mark:
            continue
        target = wanted(values)
        best[column] = {i for i, v in enumerate(frame[column]) if _number(v) and v == target}
    rows = []
    for i, record in enumerate(frame.itertuples(index=False)):
        parts = [cell(str(record[0]), classes=["text"])]
        for position, column in enumerate(columns[1:], start=1):
            value = record[position]
            classes = [mark] if i in best.get(column, ()) else []
            parts.append(cell(_text(value, column, means, round), classes=classes))
        rows.append("".join(parts))
    header = "<tr>" + "".join(
        cell(str(c), tag="th", classes=["text"] if i == 0 else []) for i, c in enumerate(columns)
    )
    return table(header + "</tr>", rows)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value)


def _text(value: Any, column: str, means: list[str], round: Any) -> str:  # noqa: A002
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool) or column.endswith(" reject"):
        return str(bool(value))
    if column.endswith((" p-value", " p-value corrected")):
        return p_value(value)
    if column in means:
        return f"{float(value):.{digits_for(round, column)}f}"
    return str(int(value))  # the counts of queries improved and degraded
