"""Tables a paper prints: an evaluation's or a comparison's means as Markdown or LaTeX.

Rows are the systems (runs), columns the measures, as papers print them. Each mean has a fixed
number of decimals (``round``: one number, or per measure, 4 by default as trec_eval prints);
the best mean of each measure is in bold, the best by the direction the measure registry
declares (larger or smaller is better; a measure that ranks nothing, a count, has none); all
tied best values are bold. Against a baseline, a run whose difference from it is significant
after the correction for multiple testing carries a dagger (``†``), and the caption says which
test, which correction, over how many runs, at which alpha, all read from the comparison's own
settings. ``intervals=True`` adds each mean's confidence interval in brackets (the level and
method, Student's t or the percentile bootstrap, in the caption).

LaTeX: a ``table`` float with ``\\caption`` and ``\\label`` over a booktabs ``tabular``
(``\\toprule``, ``\\midrule``, ``\\bottomrule``; the preamble needs ``\\usepackage{booktabs}``),
names escaped (``_ % & # $ { } ~ ^ \\``), the dagger as ``$^{\\dagger}$``. Markdown: a GitHub
(GFM) pipe table with its alignment row, bold as ``**...**``, the dagger as ``<sup>†</sup>``
and names backslash-escaped where Markdown would read them (``| * _ [ ] < > ` ~ & \\``); the
caption follows after a blank line as ``Table: ...``, which pandoc reads as the table's
caption and GitHub shows as a line under it.

The tables are built from plain rows (:func:`evaluation_table`, :func:`comparison_table`) and
written by :func:`render`, without pandas: the command line prints them as it prints its
other tables.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cells import is_missing
from ..errors import RankhouseError
from ..stats.paired import correction_method
from . import DEFAULT_ROUND, check_display, digits_for

FORMATS = ("markdown", "latex")
"""The formats :func:`render` writes."""

TEST_NAMES = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomization": "paired randomization test",
    "bootstrap": "paired bootstrap test",
}
"""How a caption names compare's tests (another test, a function, by its own name)."""

CORRECTION_NAMES = {
    "bonferroni": "Bonferroni",
    "sidak": "Šidák",
    "holm": "Holm",
    "holm-sidak": "Holm-Šidák",
    "simes-hochberg": "Simes-Hochberg",
    "hommel": "Hommel",
    "fdr_bh": "Benjamini-Hochberg",
    "fdr_by": "Benjamini-Yekutieli",
    "fdr_tsbh": "two-stage Benjamini-Hochberg",
    "fdr_tsbky": "two-stage Benjamini-Krieger-Yekutieli",
    "fdr_gbs": "Gavrilov-Benjamini-Sarkar",
}
"""How a caption names the corrections, by statsmodels' method names
(:data:`rankhouse.stats.CORRECTION_NAMES` maps the aliases to them)."""

DAGGER = "†"


@dataclass
class PaperTable:
    """A table before it is written: one row per run, one column per measure.

    Attributes:
        runs: the row names, in order.
        measures: the column names (measure labels), in order.
        means: (run, measure) -> the mean (None or NaN: none).
        intervals: (run, measure) -> (low, high) of the mean's interval, where there is one.
        significant: the (run, measure) cells significantly different from the baseline.
        caption: the caption's sentences, as plain text.
        interval_note: the sentence that says what the intervals are (in the caption when
            they are shown).
        label: the LaTeX label.
    """

    runs: list[str]
    measures: list[str]
    means: dict[tuple[str, str], Any]
    intervals: dict[tuple[str, str], tuple[Any, Any]] = field(default_factory=dict)
    significant: set[tuple[str, str]] = field(default_factory=set)
    caption: list[str] = field(default_factory=list)
    interval_note: str = ""
    label: str = "tab:results"


def evaluation_table(result: Any) -> PaperTable:
    """An :class:`~rankhouse.results.EvaluationResult`'s means, one row per run.

    Args:
        result: the evaluation (its ``rows``, ``measures``, ``labels``, ``qrels``, ``level``).
    """
    measures = [result.labels.get(m, m) for m in result.measures]
    label_of = dict(zip(result.measures, measures, strict=True))
    means, intervals, counts = {}, {}, set()
    for row in result.rows:
        key = (row["run"], label_of[row["measure"]])
        means[key] = row["value"]
        intervals[key] = (row.get("mean_low"), row.get("mean_high"))
        counts.add(row["num_q"])
    runs = list(dict.fromkeys(row["run"] for row in result.rows))
    over = _queries(counts)
    caption = [f"Means over {over} of qrels set {result.qrels}."]
    return PaperTable(
        runs,
        measures,
        means,
        intervals,
        caption=caption,
        interval_note=_interval_note(result.level, "t"),
        label="tab:evaluation",
    )


def comparison_table(rows: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]) -> PaperTable:
    """A comparison's means, one row per run, and its significance against the baseline.

    Args:
        rows: compare's rows (:attr:`rankhouse.compare.Comparison.rows`, or
            :func:`rankhouse.present.panels.frame_rows` of its frame).
        settings: the settings it was made with (``attrs["comparison"]`` of its frame:
            level, interval, test, correction, alpha, permutations).
    """
    runs = list(dict.fromkeys(row["run"] for row in rows))
    measures = list(dict.fromkeys(row["measure"] for row in rows))
    means = {(row["run"], row["measure"]): row["mean"] for row in rows}
    intervals = {(row["run"], row["measure"]): (row["mean_low"], row["mean_high"]) for row in rows}
    significant = {(row["run"], row["measure"]) for row in rows if row.get("significant") is True}
    baseline = next((row["baseline"] for row in rows if row.get("baseline")), None)
    caption = [f"Means over {_queries({row['num_q'] for row in rows})}."]
    if baseline is not None:
        others = len(runs) - 1
        caption.append(
            f"{DAGGER} marks a significant difference from the baseline, {baseline} "
            f"({_test_words(settings)}, {_correction_words(settings, others)}, "
            f"α = {settings['alpha']:g})."
        )
    return PaperTable(
        runs,
        measures,
        means,
        intervals,
        significant,
        caption,
        _interval_note(settings["level"], settings["interval"]),
        label="tab:comparison",
    )


def render(
    table: PaperTable,
    format: str,  # noqa: A002 (the option's name)
    *,
    round: int | Mapping[str | None, int] = DEFAULT_ROUND,  # noqa: A002 (PyTerrier's name)
    intervals: bool = False,
    caption: str | None = None,
    label: str | None = None,
) -> str:
    """The table as Markdown or LaTeX text.

    Args:
        table: what it shows (:func:`evaluation_table`, :func:`comparison_table`).
        format: ``'markdown'`` or ``'latex'``.
        round: decimals, one number or a dict measure -> decimals (a ``None`` key: the
            others'), 4 by default.
        intervals: show each mean's interval in brackets after it.
        caption: the caption instead of the one made from the table's settings (plain text:
            it is escaped).
        label: the LaTeX label (default ``tab:evaluation`` or ``tab:comparison``).

    Raises:
        RankhouseError: an unknown format, or a ``round`` outside 0 to 15.
    """
    if format not in FORMATS:
        raise RankhouseError(f"a paper table is {' or '.join(FORMATS)}, not {format!r}")
    check_display(round if not isinstance(round, Mapping) else dict(round), None)
    best = {m: _best(table, m) for m in table.measures}
    sentences = list(table.caption)
    if any(best.values()):
        sentences.append("The best mean of each measure is in bold.")
    if intervals:
        sentences.append(table.interval_note)
    text = caption if caption is not None else " ".join(sentences)
    writer = _latex if format == "latex" else _markdown
    return writer(table, best, round, intervals, text, label or table.label)


def _best(table: PaperTable, measure: str) -> set[str]:
    from ..measures.model import best_positions  # the registry's directions, when one is drawn

    values = [table.means.get((run, measure)) for run in table.runs]
    return {table.runs[i] for i in best_positions(values, measure)}


def _number(value: Any, digits: int) -> str | None:
    """Fixed decimals; ``NaN`` for trec_eval's ``-nan``; None for no value."""
    if value is None or type(value).__name__ == "NAType":
        return None
    number = float(value)
    return "NaN" if math.isnan(number) else f"{number:.{digits}f}"


@dataclass(frozen=True)
class _Markup:
    """How a format writes a name, a bold mean, the dagger, an interval and no value."""

    escape: Callable[[str], str]
    bold: str
    dagger: str
    interval: str
    missing: str


def _body(
    table: PaperTable,
    best: Mapping[str, set[str]],
    round: Any,  # noqa: A002
    intervals: bool,
    markup: _Markup,
) -> list[list[str]]:
    """The cells of each run's row, its name first, written in ``markup``."""
    rows = []
    for run in table.runs:
        cells = [markup.escape(run)]
        for measure in table.measures:
            digits = digits_for(round, measure)
            mean = _number(table.means.get((run, measure)), digits)
            if mean is None:
                cells.append(markup.missing)
                continue
            text = markup.bold.format(mean) if run in best[measure] else mean
            if (run, measure) in table.significant:
                text += markup.dagger
            low, high = table.intervals.get((run, measure), (None, None))
            if intervals and not is_missing(low) and not is_missing(high):
                bounds = f"[{_number(low, digits)}, {_number(high, digits)}]"
                text += markup.interval.format(markup.escape(bounds))
            cells.append(text)
        rows.append(cells)
    return rows


# --- Markdown ---------------------------------------------------------------------------------

_MARKDOWN_SPECIAL = set("\\`*_[]<>|~&")


def markdown_escape(text: str) -> str:
    """``text`` as Markdown inline text: the characters Markdown would read backslash-escaped
    (CommonMark escapes any ASCII punctuation so)."""
    return "".join(f"\\{c}" if c in _MARKDOWN_SPECIAL else c for c in str(text))


_MARKDOWN = _Markup(markdown_escape, "**{}**", f"<sup>{DAGGER}</sup>", " {}", "–")


def _markdown(table, best, round, intervals, caption, label) -> str:  # noqa: A002
    lines = [
        "| " + " | ".join(["Run", *(markdown_escape(m) for m in table.measures)]) + " |",
        "| :-- |" + " --: |" * len(table.measures),
    ]
    rows = _body(table, best, round, intervals, _MARKDOWN)
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    # the blank line ends the table: a line right under it would be read as one more row
    return "\n".join(lines) + f"\n\nTable: {markdown_escape(caption)}\n"


# --- LaTeX ------------------------------------------------------------------------------------

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    DAGGER: r"$^{\dagger}$",
    "α": r"$\alpha$",
}


def latex_escape(text: str) -> str:
    """``text`` as LaTeX text: its special characters written as commands."""
    return "".join(_LATEX_SPECIAL.get(c, c) for c in str(text))


_LATEX = _Markup(latex_escape, r"\textbf{{{}}}", r"$^{\dagger}$", r" {{\scriptsize {}}}", "--")


def _latex(table, best, round, intervals, caption, label) -> str:  # noqa: A002
    lines = [
        r"\begin{table}",
        r"\centering",
        rf"\caption{{{latex_escape(caption)}}}",
        rf"\label{{{label}}}",
        r"\begin{tabular}{l" + "r" * len(table.measures) + "}",
        r"\toprule",
        " & ".join(["Run", *(latex_escape(m) for m in table.measures)]) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(cells) + r" \\" for cells in _body(table, best, round, intervals, _LATEX)]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


# --- captions ---------------------------------------------------------------------------------


def _queries(counts: set[int]) -> str:
    if len(counts) == 1:
        (only,) = counts
        return f"{only} {'query' if only == 1 else 'queries'}"
    return f"{min(counts)} to {max(counts)} queries"


def _interval_note(level: float, method: str) -> str:
    how = "Student's t" if method == "t" else "percentile bootstrap"
    return f"In brackets, the {level * 100:g}% confidence interval of the mean ({how})."


def _test_words(settings: Mapping[str, Any]) -> str:
    test = str(settings["test"])
    words = TEST_NAMES.get(test, f"test {test}")
    if test in ("randomization", "bootstrap") and settings.get("permutations"):
        words += f", {settings['permutations']:,} resamples"
    return words


def _correction_words(settings: Mapping[str, Any], others: int) -> str:
    method = correction_method(settings.get("correction") or "none")
    if method is None:
        return "no correction for multiple testing"
    name = CORRECTION_NAMES.get(method, method)
    runs = f"{others} {'run' if others == 1 else 'runs'}"
    return f"{name} correction over the {runs} tested per measure"
