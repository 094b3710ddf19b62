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

Every pair of runs (``compare --all-pairs``, :func:`all_pairs_table`) is marked as ranx marks
it: each run gets a letter (a, b, c... in the table's order, in a ``#`` column before its
name), and a mean carries, as a superscript, the letters of the runs it is significantly
better than, by the measure's direction, after the pairs' correction (or by the randomised
Tukey HSD, which controls the family-wise error itself); the caption says so.

The tables are built from plain rows (:func:`evaluation_table`, :func:`comparison_table`,
:func:`all_pairs_table`) and written by :func:`render`, without pandas: the command line
prints them as it prints its other tables. :func:`html_table` draws the same cells as an HTML
``<table>`` (the report shows it above the text to copy).
"""

from __future__ import annotations

import html
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
    "tukey": "randomised Tukey HSD",
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
        letters: run -> its letter, when every pair was tested (empty: no ``#`` column).
        better: (run, measure) -> the letters of the runs it is significantly better than.
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
    letters: dict[str, str] = field(default_factory=dict)
    better: dict[tuple[str, str], str] = field(default_factory=dict)


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


def all_pairs_table(found: Any) -> PaperTable:
    """Every pair of runs (:class:`~rankhouse.compare.AllPairs`): one row per run with its
    letter, each mean with the letters of the runs it is significantly better than.

    The means and intervals are those over the queries every run has a value for, as the
    pairs were tested on (:class:`~rankhouse.compare.MeasurePairs`). Measures all pairs left
    out (counts, sums) are not in the table.

    Args:
        found: the analysis (its ``runs``, ``measures``, ``alpha`` and ``options``).
    """
    runs = list(found.runs)
    letters = {run: _letter(i) for i, run in enumerate(runs)}
    means, intervals, better, counts = {}, {}, {}, set()
    for measure in found.measures:
        pairs = measure.pairs
        position = {run: i for i, run in enumerate(pairs.systems)}
        for run in runs:
            i = position[run]
            means[run, measure.measure] = pairs.means[i]
            interval = measure.intervals[i]
            intervals[run, measure.measure] = (interval.low, interval.high)
            beaten = [
                other
                for other in runs
                if other != run
                and pairs.p_values[i][position[other]] <= found.alpha
                and measure.direction * pairs.differences[i][position[other]] > 0
            ]
            better[run, measure.measure] = "".join(letters[other] for other in beaten)
        counts.add(len(measure.queries))
    options = found.options
    settings = {"test": options.test, "permutations": options.permutations}
    if options.test == "tukey":
        how = f"{_test_words(settings)}, which controls the family-wise error over the pairs"
    else:
        pairs_count = len(runs) * (len(runs) - 1) // 2
        family = f"the {pairs_count} pairs per measure"
        how = f"{_test_words(settings)}, {_correction_over(options.correction, family)}"
    caption = [
        f"Means over {_queries(counts)}.",
        "A superscript lists the runs (by their letter) a mean is significantly better than "
        f"({how}, α = {found.alpha:g}).",
    ]
    return PaperTable(
        runs,
        [m.measure for m in found.measures],
        means,
        intervals,
        caption=caption,
        interval_note=_interval_note(options.level, options.interval),
        label="tab:all-pairs",
        letters=letters,
        better=better,
    )


def _letter(index: int) -> str:
    """a, b, ... z, then aa, ab, ... as spreadsheets name their columns."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(ord("a") + rest) + name
    return name


def _caption(table: PaperTable, best: Mapping[str, set[str]], intervals: bool) -> str:
    sentences = list(table.caption)
    if any(best.values()):
        sentences.append("The best mean of each measure is in bold.")
    if intervals:
        sentences.append(table.interval_note)
    return " ".join(sentences)


def _checked(table: PaperTable, round: Any) -> dict[str, set[str]]:  # noqa: A002
    """The best runs of each measure, once ``round`` is known to be good."""
    check_display(round if not isinstance(round, Mapping) else dict(round), None)
    return {m: _best(table, m) for m in table.measures}


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
        table: what it shows (:func:`evaluation_table`, :func:`comparison_table`,
            :func:`all_pairs_table`).
        format: ``'markdown'`` or ``'latex'``.
        round: decimals, one number or a dict measure -> decimals (a ``None`` key: the
            others'), 4 by default.
        intervals: show each mean's interval in brackets after it.
        caption: the caption instead of the one made from the table's settings (plain text:
            it is escaped).
        label: the LaTeX label (default ``tab:evaluation``, ``tab:comparison`` or
            ``tab:all-pairs``).

    Raises:
        RankhouseError: an unknown format, or a ``round`` outside 0 to 15.
    """
    if format not in FORMATS:
        raise RankhouseError(f"a paper table is {' or '.join(FORMATS)}, not {format!r}")
    best = _checked(table, round)
    text = caption if caption is not None else _caption(table, best, intervals)
    writer = _latex if format == "latex" else _markdown
    return writer(table, best, round, intervals, text, label or table.label)


def html_table(
    table: PaperTable,
    *,
    round: int | Mapping[str | None, int] = DEFAULT_ROUND,  # noqa: A002 (PyTerrier's name)
    intervals: bool = False,
) -> str:
    """The table drawn as HTML: the cells :func:`render` writes as Markdown, in a
    ``<table class="rh-table paper">`` with the caption as its ``<caption>``, bold as
    ``<strong>``, the dagger and the letters as ``<sup>``, names escaped.

    Raises:
        RankhouseError: a ``round`` outside 0 to 15.
    """
    best = _checked(table, round)
    head = "".join(f'<th class="text">{h}</th>' for h in _first_headers(table))
    head += "".join(f"<th>{html.escape(m)}</th>" for m in table.measures)
    rows, names = [], len(_first_headers(table))
    for cells in _body(table, best, round, intervals, _HTML):
        first = "".join(f'<td class="text">{c}</td>' for c in cells[:names])
        rows.append("<tr>" + first + "".join(f"<td>{c}</td>" for c in cells[names:]) + "</tr>")
    return (
        f'<table class="rh-table paper"><caption>'
        f"{html.escape(_caption(table, best, intervals))}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _first_headers(table: PaperTable) -> list[str]:
    """The columns before the measures': the letter's (all pairs) and the run's."""
    return ["#", "Run"] if table.letters else ["Run"]


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
    """How a format writes a name, a bold mean, the dagger, an interval, no value and a
    superscript (all pairs' letters)."""

    escape: Callable[[str], str]
    bold: str
    dagger: str
    interval: str
    missing: str
    superscript: str


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
        if table.letters:
            cells.insert(0, table.letters[run])
        for measure in table.measures:
            digits = digits_for(round, measure)
            mean = _number(table.means.get((run, measure)), digits)
            if mean is None:
                cells.append(markup.missing)
                continue
            text = markup.bold.format(mean) if run in best[measure] else mean
            if (run, measure) in table.significant:
                text += markup.dagger
            if table.better.get((run, measure)):
                text += markup.superscript.format(table.better[run, measure])
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


_MARKDOWN = _Markup(markdown_escape, "**{}**", f"<sup>{DAGGER}</sup>", " {}", "–", "<sup>{}</sup>")


def _markdown(table, best, round, intervals, caption, label) -> str:  # noqa: A002
    lines = [
        "| "
        + " | ".join([*_first_headers(table), *(markdown_escape(m) for m in table.measures)])
        + " |",
        "|" + " :-- |" * len(_first_headers(table)) + " --: |" * len(table.measures),
    ]
    rows = _body(table, best, round, intervals, _MARKDOWN)
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    # the blank line ends the table: a line right under it would be read as one more row
    return "\n".join(lines) + f"\n\nTable: {markdown_escape(caption)}\n"


_HTML = _Markup(
    html.escape, "<strong>{}</strong>", f"<sup>{DAGGER}</sup>", " {}", "–", "<sup>{}</sup>"
)
"""The report's drawn table: the Markdown's cells as HTML renders them."""


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


_LATEX = _Markup(
    latex_escape, r"\textbf{{{}}}", r"$^{\dagger}$", r" {{\scriptsize {}}}", "--", r"$^{{{}}}$"
)


def _latex(table, best, round, intervals, caption, label) -> str:  # noqa: A002
    lines = [
        r"\begin{table}",
        r"\centering",
        rf"\caption{{{latex_escape(caption)}}}",
        rf"\label{{{label}}}",
        r"\begin{tabular}{" + "l" * len(_first_headers(table)) + "r" * len(table.measures) + "}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in [*_first_headers(table), *table.measures]) + r" \\",
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
    if test in ("randomization", "bootstrap", "tukey") and settings.get("permutations"):
        words += f", {settings['permutations']:,} resamples"
    return words


def _correction_words(settings: Mapping[str, Any], others: int) -> str:
    runs = f"{others} {'run' if others == 1 else 'runs'}"
    return _correction_over(settings.get("correction"), f"the {runs} tested per measure")


def _correction_over(correction: str | None, family: str) -> str:
    """The correction's name and the family it corrects over (``family``, in words)."""
    method = correction_method(correction or "none")
    if method is None:
        return "no correction for multiple testing"
    return f"{CORRECTION_NAMES.get(method, method)} correction over {family}"
