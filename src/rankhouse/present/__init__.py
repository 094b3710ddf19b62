"""How results look, for the terminal, the notebook and the page, from one description.

The package's map: this root writes the HTML tables that the notebook and the report share;
:mod:`.frames` gives a notebook its DataFrames (``ComparisonFrame``, ``HistoryFrame``,
``ExperimentFrame``) and PyTerrier's wide Experiment table; :mod:`.panels` draws compare's
compact panels, all pairs and order drift as text cells for the terminal and as HTML;
:mod:`.papers` writes the means as a paper's table, Markdown or LaTeX;
:mod:`.report` makes ``rankhouse report``'s self-contained page from what :mod:`.gather` reads
from the warehouse, each system's series (:mod:`.trends`) and the other pictures
(:mod:`.figures`). Only :mod:`.gather` and :mod:`.trends` read the warehouse.

The tables here: the cells and numbers every table is written with, then one table per
result: an evaluation's means with their intervals, a history, a comparison as PyTerrier's
Experiment table with intervals, and a regression check (``Warehouse.regress``'s result shown
as its verdicts: one row per measure, with the baseline's mean, the run's, the difference with
the interval of the paired difference, the non-inferiority bound, Hedges' g_z, the queries
paired, improved and degraded, the p-value and the corrected one, the verdict word and the
status; a regressed measure in red, under a caption that gives the verdict as ``rankhouse
regress`` prints it, ``PASS``/``FAIL`` with the measures that failed and why, and what its
margins mean).

One set of options serves them all: ``round`` (decimals, one number or a dict measure ->
decimals, PyTerrier's ``round``) and ``highlight`` (``"bold"``, ``"color"`` or ``None``: how
the best value of each measure is marked). Nothing here imports matplotlib, so a notebook
pays for tables only.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..columns import HISTORY_FIXED_COLUMNS
from ..errors import RankhouseError, noun
from ..lazy import pandas as pd

DEFAULT_ROUND = 4
HIGHLIGHTS = ("bold", "color", "colour", None)


@dataclass(frozen=True)
class HtmlTable:
    """A rendered table: ``str(table)`` is the HTML, and Jupyter displays it as such."""

    html: str

    def _repr_html_(self) -> str:
        return self.html

    def __str__(self) -> str:
        return self.html


def check_display(round: Any, highlight: Any) -> None:  # noqa: A002 (PyTerrier's name)
    """Raise RankhouseError for a ``round`` or ``highlight`` the tables cannot use."""
    if highlight not in HIGHLIGHTS:
        raise RankhouseError(
            f"highlight must be 'bold', 'color' ('colour') or None, not {highlight!r}"
        )
    digits = round.values() if isinstance(round, Mapping) else [round]
    for value in digits:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 15:
            raise RankhouseError(f"round must be a number of decimals from 0 to 15, not {value!r}")


def digits_for(round: int | Mapping[str, int], measure: str) -> int:  # noqa: A002
    """The decimals of ``measure`` under ``round``."""
    if isinstance(round, Mapping):  # a None key holds the decimals of the other measures
        return int(round.get(measure, round.get(None, DEFAULT_ROUND)))
    return int(round)


def number(value: Any, digits: int) -> str:
    """A value as table text: fixed decimals, ``NaN`` for trec_eval's ``-nan``, empty for none."""
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if math.isnan(value):
        return "NaN"
    return f"{value:.{digits}f}"


def p_value(value: Any) -> str:
    """A p-value with three significant digits (empty when there is none)."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    value = float(value)
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def signed(value: Any, digits: int) -> str:
    """A difference with its sign (none when it rounds to zero)."""
    text = number(value, digits)
    if not text or text == "NaN":
        return text
    if float(text) == 0:
        return text.lstrip("-")
    return text if text.startswith("-") else f"+{text}"


def cell(text: str, *, classes: Iterable[str] = (), title: str | None = None, tag="td") -> str:
    """One table cell, its text escaped."""
    attributes = ""
    names = " ".join(c for c in classes if c)
    if names:
        attributes += f' class="{names}"'
    if title:
        attributes += f' title="{html.escape(title)}"'
    return f"<{tag}{attributes}>{html.escape(text)}</{tag}>"


def normal_highlight(highlight: str | None) -> str | None:
    """``highlight`` with PyTerrier's British spelling read as ``'color'``."""
    return "color" if highlight == "colour" else highlight


def best_class(highlight: str | None) -> str:
    """The CSS class that marks a best value."""
    return {"bold": "best-bold", "color": "best-color"}.get(normal_highlight(highlight) or "", "")


def table(
    header: Sequence[str] | str,
    rows: Iterable[str],
    *,
    caption: str | None = None,
    css_class: str = "rh-table",
) -> str:
    """A ``<table>``: ``header`` is a list of column titles or ready ``<tr>`` markup."""
    if isinstance(header, str):
        head = header
    else:
        head = "<tr>" + "".join(cell(str(h), tag="th") for h in header) + "</tr>"
    parts = [f'<table class="{css_class}">']
    if caption:
        parts.append(f"<caption>{html.escape(caption)}</caption>")
    parts.append(f"<thead>{head}</thead><tbody>")
    parts.extend(f"<tr>{row}</tr>" for row in rows)
    parts.append("</tbody></table>")
    return "".join(parts)


# Inline styles for the notebook (the report's stylesheet defines the same classes).
NOTEBOOK_STYLE = (
    "<style>"
    ".rh-table td,.rh-table th{text-align:right;padding:2px 8px}"
    ".rh-table td.text,.rh-table th.text{text-align:left}"
    ".rh-table .best-bold{font-weight:bold}"
    ".rh-table .best-color{background:#c8ecd0;font-weight:bold}"
    ".rh-table .fail{color:#c0182a;font-weight:bold}"
    ".rh-table .worse{color:#c0182a}.rh-table .better{color:#1a7f37}"
    "</style>"
)


def measure_table(
    frame: pd.DataFrame,
    label_columns: Sequence[str],
    measures: Sequence[str],
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002
    highlight: str | None = "bold",
    groups: Sequence[Any] | None = None,
    caption: str | None = None,
    extra: Mapping[str, Any] | None = None,
    intervals: bool = False,
) -> str:
    """Rows of labels then one column per measure, the best value of each measure marked.

    Args:
        frame: one row per table row.
        label_columns: text columns shown first (run name, time, metadata...).
        measures: measure columns, shown rounded.
        round: decimals, one number or per measure.
        highlight: how the best value per measure is marked.
        groups: rows with different group values are not compared (history: per qrels set).
        caption: the table's caption.
        extra: column name -> function(value) -> (text, classes) for special columns that
            follow the measures (history's ``gate``).
        intervals: each measure's cell also shows the half-width of its interval
            (``0.1326 ±0.1335``), from the columns ``<measure> low`` and ``<measure> high``.
    """
    from ..measures.model import (
        best_positions,
    )  # a measure's direction: the measures load to mark the best

    check_display(round, highlight)
    groups = list(groups) if groups is not None else [None] * len(frame)
    best: dict[str, set[int]] = {m: set() for m in measures}
    for group in dict.fromkeys(groups):
        members = [i for i, g in enumerate(groups) if g == group]
        for measure in measures:
            column = frame[measure].tolist()
            found = best_positions([column[i] for i in members], measure)
            best[measure] |= {members[i] for i in found}
    extra = dict(extra or {})
    header = [*label_columns, *measures, *extra]
    head = "<tr>" + "".join(
        cell(str(h), tag="th", classes=["text"] if h in label_columns or h in extra else [])
        for h in header
    )
    head += "</tr>"
    mark = best_class(highlight)
    rows = []
    for i, record in enumerate(frame.to_dict("records")):
        parts = [cell(_text(record[c]), classes=["text"]) for c in label_columns]
        for measure in measures:
            digits = digits_for(round, measure)
            text = number(record[measure], digits)
            if intervals:
                text = _with_half_width(text, record, measure, digits)
            parts.append(cell(text, classes=[mark] if i in best[measure] else []))
        for name, render in extra.items():
            text, classes = render(record[name])
            parts.append(cell(text, classes=["text", *classes]))
        rows.append("".join(parts))
    return table(head, rows, caption=caption)


def _with_half_width(text: str, record: Mapping[str, Any], measure: str, digits: int) -> str:
    low, high = record.get(f"{measure} low"), record.get(f"{measure} high")
    if not text or _missing(low) or _missing(high):
        return text
    return f"{text} ±{(float(high) - float(low)) / 2:.{digits}f}"


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def interval_caption(level: float) -> str:
    """What a cell with a half-width holds."""
    return f"mean ±{level * 100:g}% CI (Student's t over the queries)"


def _text(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def gate_cell(value: Any) -> tuple[str, list[str]]:
    """History's gate column: a failed gate in red."""
    text = _text(value)
    return text, ["fail"] if text == "fail" else []


def evaluation_html(
    result,
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002
    highlight: str | None = "bold",
) -> str:
    """An :class:`~rankhouse.results.EvaluationResult` as a table of means per run, each
    with the half-width of its interval, and the number of queries."""
    frame = result.intervals
    measures = [result.labels.get(m, m) for m in result.measures]
    caption = f"qrels {result.qrels}" if result.qrels else None
    if caption and result.query_counts:
        counts = sorted({c.evaluated for c in result.query_counts.values()})
        caption += f"; {'/'.join(map(str, counts))} {noun(max(counts), 'query')} evaluated"
    caption = "; ".join(filter(None, [caption, interval_caption(result.level)]))
    return measure_table(
        frame,
        ["run", "num_q"],
        measures,
        round=round,
        highlight=highlight,
        caption=caption,
        intervals=True,
    )


def history_html(
    frame: pd.DataFrame,
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002
    highlight: str | None = "bold",
    measures: Sequence[str] | None = None,
    caption: str | None = None,
    level: float | None = None,
) -> str:
    """:func:`rankhouse.history.history`'s frame: the best value per measure and qrels set
    marked, each mean with the half-width of its interval (``level``, as the frame was
    made), failed gates in red."""
    if measures is None:
        measures = [
            c for c in frame.columns if c not in HISTORY_FIXED_COLUMNS and _is_measure(frame[c])
        ]
        measures = [m for m in measures if m != "gate" and not _is_bound(m, frame.columns)]
    bounds = {f"{m} {side}" for m in measures for side in ("low", "high")}
    labels = [c for c in frame.columns if c not in measures and c not in bounds and c != "gate"]
    extra = {"gate": gate_cell} if "gate" in frame.columns else None
    with_bounds = bool(measures) and all(b in frame.columns for b in bounds)
    if with_bounds and caption is None:
        caption = interval_caption(0.95 if level is None else level)
    return measure_table(
        frame,
        labels,
        list(measures),
        round=round,
        highlight=highlight,
        groups=frame["qrels"].tolist() if "qrels" in frame.columns else None,
        caption=caption,
        extra=extra,
        intervals=with_bounds,
    )


def _is_measure(column: pd.Series) -> bool:
    return column.dtype.kind == "f"


def _is_bound(name: str, columns: Iterable[str]) -> bool:
    """``AP low`` or ``AP high`` beside an ``AP`` column."""
    return any(name.endswith(s) and name[: -len(s)] in columns for s in (" low", " high"))


def comparison_html(
    frame: pd.DataFrame,
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002
    highlight: str | None = "bold",
    caption: str | None = None,
    settings: Mapping[str, Any] | None = None,
) -> str:
    """:func:`rankhouse.compare.compare`'s frame as an Experiment table with intervals.

    One row per run; per measure its mean with the interval of the mean and, against a
    baseline, the difference with the interval of the paired difference, Hedges' g_z, the
    queries improved (+) and degraded (-), the p-value and the corrected p-value, and the
    verdict in words (coloured: green better, red worse; an inconclusive verdict gives its
    minimum detectable effect). The best mean per measure is marked as ``highlight`` says.
    ``settings`` (the frame's ``attrs["comparison"]``) names the level in the headers.
    """
    from ..measures.model import (
        best_positions,
    )  # a measure's direction: the measures load to mark the best

    check_display(round, highlight)
    level = f"{(settings or {}).get('level', 0.95) * 100:g}%"
    runs = list(dict.fromkeys(frame["run"]))
    measures = list(dict.fromkeys(frame["measure"]))
    indexed = frame.set_index(["run", "measure"])
    tested = bool(frame["baseline"].notna().any())
    gated = tested and "gate" in frame and bool(frame["gate"].notna().any())
    sub = ["mean", f"{level} CI"]
    if tested:
        sub += ["delta", f"{level} CI", "g_z", "+", "-", "p", "p corr", "verdict"]
    if gated:  # a margin was given: the gate's word at that margin (rankhouse regress)
        sub += ["gate"]
    head = '<tr><th class="text" rowspan="2">run</th>'
    head += "".join(
        f'<th colspan="{len(sub)}" class="group">{html.escape(m)}</th>' for m in measures
    )
    head += "</tr><tr>" + "".join(cell(s, tag="th") for _ in measures for s in sub) + "</tr>"
    mark = best_class(highlight)
    best = {m: best_positions([indexed.at[(r, m), "mean"] for r in runs], m) for m in measures}
    baseline = frame["baseline"].dropna().iloc[0] if tested else None
    rows = []
    for i, run in enumerate(runs):
        label = f"{run} (baseline)" if run == baseline else run
        parts = [cell(label, classes=["text"])]
        for measure in measures:
            row = indexed.loc[(run, measure)]
            digits = digits_for(round, measure)
            parts.append(
                cell(number(row["mean"], digits), classes=[mark] if i in best[measure] else [])
            )
            parts.append(cell(_bounds(row["mean_low"], row["mean_high"], digits)))
            if not tested:
                continue
            if run == baseline:
                parts.extend(cell("") for _ in sub[2:])
                continue
            word = row["verdict"] if isinstance(row["verdict"], str) else ""
            tone = word if word in ("better", "worse") else ""
            shown = word
            if word == "inconclusive" and not pd.isna(row["mde"]):
                shown = f"inconclusive (MDE {number(row['mde'], digits)})"
            parts += [
                cell(signed(row["delta"], digits)),
                cell(_bounds(row["delta_low"], row["delta_high"], digits)),
                cell(signed(row["hedges_gz"], 2)),
                cell(number(_int(row["improved"]), digits)),
                cell(number(_int(row["degraded"]), digits)),
                cell(p_value(row["p_value"])),
                cell(p_value(row["p_corrected"])),
                cell(shown, classes=["text", tone]),
            ]
            if gated:
                gate = row["gate"] if isinstance(row["gate"], str) else ""
                tone = "worse" if gate in ("regressed", "not_shown") else ""
                parts.append(cell(gate.replace("_", " "), classes=["text", tone]))
        rows.append("".join(parts))
    return table(head, rows, caption=caption)


def _bounds(low: Any, high: Any, digits: int) -> str:
    if pd.isna(low) or pd.isna(high):
        return ""
    return f"[{number(low, digits)}, {number(high, digits)}]"


def _int(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


_HEADER = (
    "measure",
    "baseline",
    "run",
    "delta",
    "interval",
    "bound",
    "g_z",
    "n",
    "+",
    "-",
    "p",
    "p corr",
    "verdict",
    "status",
)
_TEXT = {"measure", "verdict", "status"}


def verdicts_html(
    result: Any,
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002 (PyTerrier's name)
) -> str:
    """:class:`~rankhouse.regress.RegressResult` as an HTML table (its verdict as caption)."""
    check_display(round, None)
    caption = " ".join([result.headline, *result.meaning])
    rows = []
    for row in result.verdict_rows:
        digits = digits_for(round, str(row["measure"]))
        tone = ["fail"] if row["fails"] else []
        rows.append(
            "".join(
                [
                    cell(str(row["measure"]), classes=["text"]),
                    cell(number(row["baseline_value"], digits)),
                    cell(number(row["run_value"], digits)),
                    cell(signed(row["delta"], digits), classes=tone),
                    cell(_interval(row, digits)),
                    cell(signed(_shown(row.get("bound")), digits)),
                    cell(signed(_shown(row.get("hedges_gz")), 2)),
                    cell(number(row.get("num_q"), digits)),
                    cell(number(row["improved"], digits)),
                    cell(number(row["degraded"], digits)),
                    cell(p_value(row["p_value"])),
                    cell(p_value(row["p_corrected"])),
                    cell(str(row.get("verdict") or ""), classes=["text"]),
                    cell(str(row["status"]), classes=["text", *tone]),
                ]
            )
        )
    header = "<tr>" + "".join(
        cell(h, tag="th", classes=["text"] if h in _TEXT else []) for h in _HEADER
    )
    return table(header + "</tr>", rows, caption=caption)


def _interval(row: Mapping[str, Any], digits: int) -> str:
    """``[low, high]`` of the paired difference, empty when it has none."""
    low, high = row.get("delta_low"), row.get("delta_high")
    if low is None or high is None or low != low or high != high:  # None or NaN
        return ""
    return f"[{signed(low, digits)}, {signed(high, digits)}]"


def _shown(value: Any) -> Any:
    """None for a value the check has not (NaN: the significance mode has no bound)."""
    return None if value is None or value != value else value
