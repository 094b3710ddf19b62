"""compare's panels: one small table per measure, described once as plain text cells (a
:class:`Panel`, no pandas) and drawn for the terminal, the notebook and the report's page.

* Against a baseline, per measure: each run's mean, its difference from the baseline with
  the interval of the paired difference (``+0.133 [0.081, 0.184]``; the difference alone
  when there is no interval), Hedges' g_z, and the verdict in words; the minimum detectable
  effect beside each inconclusive verdict. The baseline's row says ``baseline``.
* Without a baseline: each run's mean and its interval.
* The order drift of each run from the baseline, and the tables of all pairs: the ANOVA,
  the matrix of differences with their p-values, and the letter groups.

The command line prints the panels as they are, paper-like, each fitting 80 columns; numbers
are rounded to ``digits`` decimals (3 unless told: a paper's precision; effect sizes always
2), and a legend under the panels says what the columns and verdict words mean. The report
and the notebook draw the same panels as HTML (:func:`comparison_panels_html`), so the three
show the same numbers and the same verdict words. One panel per measure keeps each table
narrow: ten runs and five measures are five tables of five or six columns, side by side where
the page is wide enough and one under the other where it is not, instead of one table of fifty
columns. All pairs (:class:`rankhouse.compare.AllPairs`) and a comparison's drift table have
their HTML tables for notebooks too (:func:`all_pairs_html`, :func:`drift_html`).
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cells import is_missing
from ..lazy import pandas as pd
from . import DEFAULT_ROUND, best_class, cell, check_display, digits_for, table
from . import number as table_number
from . import signed as table_signed

COMPACT_DIGITS = 3
"""The decimals of the compact tables unless told otherwise."""

#: The gate's words as the tables print them (:data:`rankhouse.stats.GATE_WORDS`).
GATE_TEXT = {"non_inferior": "non-inferior", "regressed": "regressed", "not_shown": "not shown"}

#: What the legend says of each verdict word.
_VERDICT_WORDS = {
    "better": "significant after the correction{margin}, on the better side",
    "worse": "significant after the correction{margin}, on the worse side",
    "equivalent": "the {twice}% interval lies inside plus or minus the margin (two one-sided "
    "tests)",
    "inconclusive": "neither shown; MDE is the smallest true difference the t-test would find "
    "with 80% power at these queries",
}


@dataclass(frozen=True)
class Panel:
    """One table: its title (or None), headers, text cells, which columns are numbers, and
    the positions of the cells to emphasise per column (the best mean)."""

    title: str | None
    columns: list[str]
    rows: list[list[str]]
    numeric: list[bool]
    emphasis: dict[str, set[int]] = field(default_factory=dict)


def number(value: Any, digits: int) -> str:
    """A value with ``digits`` decimals; empty when missing."""
    if is_missing(value):
        return ""
    if isinstance(value, int):
        return str(value)
    return f"{float(value):.{digits}f}"


def signed(value: Any, digits: int) -> str:
    """A difference with its sign (none when it rounds to zero)."""
    text = number(value, digits)
    if not text:
        return text
    if float(text) == 0:
        return text.lstrip("-")
    return text if text.startswith("-") else f"+{text}"


def p_text(value: Any) -> str:
    """A p-value with three decimals, ``<0.001`` below that; empty when missing."""
    if is_missing(value):
        return ""
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def interval_text(low: Any, high: Any, digits: int) -> str:
    """``[low, high]``; empty when there is no interval."""
    if is_missing(low) or is_missing(high):
        return ""
    return f"[{number(low, digits)}, {number(high, digits)}]"


def level_text(level: float) -> str:
    """A confidence level as a percentage: ``95%``, ``97.5%``."""
    return f"{level * 100:g}%"


def comparison_panels(
    rows: Sequence[Mapping[str, Any]],
    settings: Mapping[str, Any],
    *,
    digits: int | Mapping[str, int] = COMPACT_DIGITS,
    highlight: bool = True,
) -> list[Panel]:
    """One panel per measure of :attr:`rankhouse.compare.Comparison.rows` (see the module)."""
    from ..measures.model import (
        best_positions,
    )  # a measure's direction: the measures load to mark the best

    measures = list(dict.fromkeys(row["measure"] for row in rows))
    tested = any(row["baseline"] is not None for row in rows)
    level = level_text(settings["level"])
    panels = []
    for number_of, measure in enumerate(measures):
        group = [row for row in rows if row["measure"] == measure]
        places = digits if isinstance(digits, int) else digits.get(measure, COMPACT_DIGITS)
        means = [number(row["mean"], places) for row in group]
        marked = best_positions([row["mean"] for row in group], measure) if highlight else set()
        if not tested:
            columns = [measure, "mean", f"{level} CI"]
            cells = [
                [row["run"], mean, interval_text(row["mean_low"], row["mean_high"], places)]
                for row, mean in zip(group, means, strict=True)
            ]
            numeric = [False, True, False]
        else:
            margin = next((r["margin"] for r in group if not is_missing(r["margin"])), None)
            verdict = "verdict" if margin is None else f"verdict ±{number(margin, places)}"
            columns = [measure, "mean", f"difference [{level} CI]", "g_z", verdict]
            cells = [
                [row["run"], mean, *_tested_cells(row, places)]
                for row, mean in zip(group, means, strict=True)
            ]
            numeric = [False, True, True, True, False]
            if margin is not None:  # the nightly gate's word at the same margin
                columns.append("gate")
                numeric.append(False)
                for row, line in zip(group, cells, strict=True):
                    line.append(GATE_TEXT.get(row.get("gate"), ""))
            if any(row["verdict"] == "inconclusive" for row in group):
                columns.append("MDE")
                numeric.append(True)
                for row, line in zip(group, cells, strict=True):
                    shown = row["verdict"] == "inconclusive"
                    line.append(number(row["mde"], places) if shown else "")
        title = _title(rows, settings) if number_of == 0 else None
        panels.append(Panel(title, columns, cells, numeric, {"mean": marked}))
    return panels


def _tested_cells(row: Mapping[str, Any], digits: int) -> list[str]:
    if row["run"] == row["baseline"]:
        return ["baseline", "", ""]
    difference = signed(row["delta"], digits)
    bounds = interval_text(row["delta_low"], row["delta_high"], digits)
    cell = f"{difference} {bounds}" if bounds else difference
    effect = "" if is_missing(row["hedges_gz"]) else signed(row["hedges_gz"], 2)
    return [cell, effect, row["verdict"] or ""]


def _title(rows: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]) -> str:
    baseline = next((row["baseline"] for row in rows if row["baseline"] is not None), None)
    if baseline is None:
        return "compare"
    test, correction = settings["test"], settings["correction"]
    corrected = "no correction" if correction == "none" else correction
    paired = sorted({row["num_paired"] for row in rows if row["num_paired"] is not None})
    if paired:
        counts = str(paired[0]) if len(paired) == 1 else f"{paired[0]}-{paired[-1]}"
        counted = f", {counts} queries paired"
    else:
        counted = ""
    alpha = f"alpha {settings['alpha']:g}"
    return f"compare against {baseline}: {test} test, {corrected}, {alpha}{counted}"


def comparison_legend(
    rows: Sequence[Mapping[str, Any]], settings: Mapping[str, Any], width: int = 80
) -> str:
    """What the compact tables' columns and verdict words mean (wrapped to ``width``)."""
    baseline = next((row["baseline"] for row in rows if row["baseline"] is not None), None)
    level = level_text(settings["level"])
    method = "t" if settings["interval"] == "t" else "percentile bootstrap"
    if baseline is None:
        text = f"CI: the {level} {method} interval of the mean over the queries."
        return textwrap.fill(text, width) + "\n"
    margins = any(not is_missing(row["margin"]) for row in rows)
    given = {row["verdict"] for row in rows if row["verdict"]}
    shown = [word for word in _VERDICT_WORDS if word in given]
    twice = f"{(1 - 2 * settings['alpha']) * 100:g}"
    words = "; ".join(
        f"{word}: "
        + _VERDICT_WORDS[word].format(
            margin=", and the interval beyond the margin" if margins else "", twice=twice
        )
        for word in shown
    )
    text = (
        f"difference: run minus {baseline}, with the {level} {method} interval of the paired "
        f"differences; g_z: Hedges' g_z of the paired differences."
    )
    if words:
        text += f" {words}."
    if margins:
        text += (
            f" gate: what `rankhouse regress` says at this margin: non-inferior (the lower limit "
            f"of the {twice}% interval is at least -margin), regressed (it is not, and that "
            "interval lies below zero: a drop is shown), not shown (neither)."
        )
    alpha = settings["alpha"]
    shown_is_the_tests = (
        settings["interval"] == "t" and abs(settings["level"] - (1 - alpha)) < 1e-12
    )
    if shown and margins and not shown_is_the_tests:
        text += (
            f" The verdicts read the t-test's own intervals ({(1 - alpha) * 100:g}%, and "
            f"{twice}% for equivalence), not the ones shown."
        )
    return textwrap.fill(text, width) + "\n"


def drift_panel(rows: Sequence[Mapping[str, Any]], digits: int = COMPACT_DIGITS) -> Panel:
    """The order drift of each run from the baseline, one row per run."""
    first = rows[0]
    k, p = first["k"], first["p"]
    title = f"order drift from {first['baseline']}: top {k}, RBO persistence {p:g}"
    columns = ["run", "RBO", "tau", "tau_AP", f"overlap@{k}", "queries"]
    cells = [
        [
            row["run"],
            number(row["rbo"], digits),
            number(row["kendall_tau"], digits),
            number(row["tau_ap"], digits),
            number(row["overlap"], digits),
            str(row["num_q"]),
        ]
        for row in rows
    ]
    return Panel(title, columns, cells, [False, True, True, True, True, True])


def method_text(pairs) -> str:
    """How an all-pairs analysis tested the pairs, in words."""
    method = pairs.method
    if method == "randomised tukey hsd":
        if pairs.exact:
            return f"randomised Tukey HSD, exact over all {pairs.permutations:,} arrangements"
        return f"randomised Tukey HSD, {pairs.permutations:,} permutations, seed {pairs.seed}"
    test, _, correction = method.partition(", ")
    text = f"paired {test} tests, {correction} correction"
    if pairs.permutations is not None:
        text += f", {pairs.permutations:,} resamples, seed {pairs.seed}"
    return text


def all_pairs_panels(found, digits: int = COMPACT_DIGITS) -> list[Panel]:
    """The tables of :class:`rankhouse.compare.AllPairs`: per measure the ANOVA, the matrix
    of differences with their p-values, and the letter groups."""
    panels = []
    level = level_text(found.options.level)
    for m in found.measures:
        ranked = list(m.letters)  # best first
        at = {run: i for i, run in enumerate(m.pairs.systems)}
        panels.append(
            Panel(
                f"{m.measure}: {len(ranked)} runs x {len(m.queries)} queries, two-way ANOVA",
                ["source", "sum of squares", "df", "mean square", "F", "p"],
                [
                    [
                        row.source,
                        number(row.sum_of_squares, 4),
                        str(row.df),
                        number(row.mean_square, 4),
                        number(row.f, 2),
                        p_text(row.p_value),
                    ]
                    for row in m.anova.rows
                ],
                [False, True, True, True, True, True],
            )
        )
        matrix = []
        for i, run in enumerate(ranked[:-1]):
            line = [run]
            for j, other in enumerate(ranked[1:], start=1):
                if j <= i:
                    line.append("")
                    continue
                a, b = at[run], at[other]
                difference = signed(m.pairs.differences[a][b], digits)
                line.append(f"{difference} ({p_text(m.pairs.p_values[a][b])})")
            matrix.append(line)
        panels.append(
            Panel(
                f"row minus column (p: {method_text(m.pairs)})",
                ["", *ranked[1:]],
                matrix,
                [False, *[True] * (len(ranked) - 1)],
            )
        )
        panels.append(
            Panel(
                f"groups at alpha {found.alpha:g}: runs sharing a letter cannot be told apart",
                ["run", "mean", f"{level} CI", "group"],
                [
                    [
                        run,
                        number(m.pairs.means[at[run]], digits),
                        interval_text(m.intervals[at[run]].low, m.intervals[at[run]].high, digits),
                        letters,
                    ]
                    for run, letters in m.letters.items()
                ],
                [False, True, False, False],
            )
        )
    return panels


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
    """One :class:`Panel` as a table: its first column's header (the measure) as the
    caption's lead, numbers right-aligned, verdict words coloured."""
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


def all_pairs_html(found: Any, *, round: int = 4) -> str:  # noqa: A002 (PyTerrier's name)
    """The tables of an :class:`~rankhouse.compare.AllPairs`, measure after measure."""
    parts = []
    level = level_text(found.options.level)
    for m in found.measures:
        ranked = list(m.letters)  # best first
        at = {run: i for i, run in enumerate(m.pairs.systems)}
        anova = [
            cell(row.source, classes=["text"])
            + cell(table_number(row.sum_of_squares, round))
            + cell(str(row.df))
            + cell(table_number(row.mean_square, round))
            + cell(table_number(row.f, 2))
            + cell(p_text(row.p_value))
            for row in m.anova.rows
        ]
        parts.append(
            table(
                ["source", "sum of squares", "df", "mean square", "F", "p"],
                anova,
                caption=f"{m.measure}: {len(ranked)} runs x {len(m.queries)} queries, "
                "two-way ANOVA",
            )
        )
        matrix = []
        for i, run in enumerate(ranked[:-1]):
            line = cell(run, classes=["text"])
            for j, other in enumerate(ranked[1:], start=1):
                if j <= i:
                    line += cell("")
                    continue
                a, b = at[run], at[other]
                p = m.pairs.p_values[a][b]
                text = f"{table_signed(m.pairs.differences[a][b], round)} ({p_text(p)})"
                line += cell(text, classes=["better" if p <= found.alpha else ""])
            matrix.append(line)
        parts.append(
            table(
                ["", *ranked[1:]],
                matrix,
                caption=f"{m.measure}: row minus column (p: {method_text(m.pairs)})",
            )
        )
        groups = [
            cell(run, classes=["text"])
            + cell(table_number(m.pairs.means[at[run]], round))
            + cell(_bounds(m.intervals[at[run]].low, m.intervals[at[run]].high, round))
            + cell(letters, classes=["text"])
            for run, letters in m.letters.items()
        ]
        parts.append(
            table(
                ["run", "mean", f"{level} CI", "group"],
                groups,
                caption=f"{m.measure}: groups at alpha {found.alpha:g} (runs sharing a letter "
                "cannot be told apart)",
            )
        )
    return "".join(parts)


def drift_html(frame: pd.DataFrame, *, round: int = 4) -> str:  # noqa: A002
    """A comparison's drift table (:data:`~rankhouse.columns.DRIFT_COLUMNS`)."""
    if frame.empty:
        return ""
    first = frame.iloc[0]
    k = int(first["k"])
    rows = [
        cell(str(row["run"]), classes=["text"])
        + "".join(
            cell(table_number(row[name], round))
            for name in ("rbo", "kendall_tau", "tau_ap", "overlap")
        )
        + cell(str(int(row["num_q"])))
        for row in frame.to_dict("records")
    ]
    return table(
        ["run", "RBO", "tau", "tau_AP", f"overlap@{k}", "queries"],
        rows,
        caption=f"order drift from {first['baseline']}: top {k}, RBO persistence "
        f"{float(first['p']):g}",
    )


def _bounds(low: float, high: float, digits: int) -> str:
    if pd.isna(low) or pd.isna(high):
        return ""
    return f"[{table_number(low, digits)}, {table_number(high, digits)}]"
