"""compare's compact panels as HTML: the report's comparison and the notebook's.

The panels are :func:`rankhouse.display.compact.comparison_panels`' (the command line's
``compare`` prints the same ones), so the report, the notebook and the terminal show the
same numbers and the same verdict words: per measure, one small table of each run's mean,
its difference from the baseline with the interval of the paired difference, Hedges' g_z
and the verdict (better, worse, equivalent, inconclusive, with the minimum detectable
effect); without a baseline, each run's mean and its interval. One panel per measure keeps
each table narrow: ten runs and five measures are five tables of five or six columns, side
by side where the page is wide enough and one under the other where it is not, instead of one
table of fifty columns.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from ..cells import is_missing
from ..lazy import pandas as pd
from .compact import COMPACT_DIGITS, Panel, comparison_legend, comparison_panels
from .tables import DEFAULT_ROUND, best_class, cell, check_display, digits_for, table

#: The verdict words coloured as compare colours them.
_TONES = {"better": "better", "worse": "worse"}

PANELS_STYLE = (
    ".rh-panels{display:flex;flex-wrap:wrap;gap:4px 22px;align-items:flex-start}"
    ".rh-panels .rh-table{margin:6px 0}"
    ".rh-legend{color:#57606a;font-size:12.5px;max-width:78em}"
)
"""What the panels need beyond the tables' classes (the report and the notebook add it)."""


def frame_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """compare's frame as the plain rows the panels read (pandas' NA as None)."""
    rows = frame.to_dict("records")
    return [
        {key: None if is_missing(v) and key != "mean" else v for key, v in r.items()} for r in rows
    ]


def comparison_panels_html(
    rows: Sequence[Mapping[str, Any]],
    settings: Mapping[str, Any],
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002 (PyTerrier's name)
    highlight: str | None = "bold",
    legend: bool = True,
    style: bool = True,
) -> str:
    """One table per measure (``<div class="rh-panels">``), then the legend.

    Args:
        rows: compare's rows (:attr:`rankhouse.compare.Comparison.rows`, or
            :func:`frame_rows` of its frame).
        settings: compare's settings (``attrs["comparison"]`` of its frame: level, interval,
            test, correction, alpha).
        round: decimals, one number or per measure.
        highlight: how the best mean is marked (``'bold'``, ``'color'`` or None).
        legend: add what the columns and verdict words mean.
        style: begin with the panels' stylesheet (a page that has it leaves it out).
    """
    check_display(round, highlight)
    measures = list(dict.fromkeys(row["measure"] for row in rows))
    places = {m: digits_for(round, m) for m in measures}
    panels = comparison_panels(rows, settings, digits=places, highlight=highlight is not None)
    parts = [f"<style>{PANELS_STYLE}</style>"] if style else []
    parts.append('<div class="rh-panels">')
    parts += [panel_html(panel, best_class(highlight)) for panel in panels]
    parts.append("</div>")
    if legend:
        words = html.escape(comparison_legend(rows, settings, width=10_000).strip())
        parts.append(f'<p class="rh-legend">{words}</p>')
    return "".join(parts)


def panel_html(panel: Panel, mark: str = "best-bold") -> str:
    """One :class:`~rankhouse.display.compact.Panel` as a table: its first column's header
    (the measure) as the caption's lead, numbers right-aligned, verdict words coloured."""
    title = panel.title
    head = "<tr>" + "".join(
        cell(name, tag="th", classes=[] if numeric else ["text"])
        for name, numeric in zip(panel.columns, panel.numeric, strict=True)
    )
    rows = []
    for position, line in enumerate(panel.rows):
        cells = []
        for name, text, numeric in zip(panel.columns, line, panel.numeric, strict=True):
            classes = [] if numeric else ["text"]
            if position in panel.emphasis.get(name, ()):
                classes.append(mark)
            if name.startswith("verdict") and text in _TONES:
                classes.append(_TONES[text])
            cells.append(cell(text, classes=classes))
        rows.append("".join(cells))
    return table(head + "</tr>", rows, caption=title)


__all__ = ["COMPACT_DIGITS", "comparison_panels_html", "frame_rows", "panel_html"]
