"""``rankhouse report``: one self-contained HTML file of trends, comparisons and curves.

:func:`build_report` reads what the report shows from the warehouse (:mod:`.gather`) and puts
the document together here: a stylesheet, the tables (the package root's and :mod:`.panels`', the
ones the notebook shows), and inline SVG (:mod:`.trends` draws each system's series,
:mod:`.figures` the per-query pictures and the precision-recall curves). The file has no
script and references nothing outside itself, so it opens offline and makes no request.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import count
from ..lazy import pandas as pd
from ..outputs import check_output_path, write_text
from ..present import (
    DEFAULT_ROUND,
    cell,
    check_display,
    comparison_html,
    digits_for,
    measure_table,
    number,
    papers,
    signed,
    table,
)
from ..present.frames import EVERY_COLUMN
from ..present.panels import PANELS_STYLE, comparison_panels_html
from .figures import comparison_figure, precision_recall_figure, sorted_deltas
from .gather import QrelsSection, ReportData, gather
from .trends import DETAIL, MIN_FRACTION, MIN_SPAN, trend_figure

WORST_LISTED = 10

PAPER_SUMMARY = "the same table as Markdown and LaTeX, to copy (compare --format markdown|latex)"

OPEN_PAIRS = 3
"""The per-query sections (a run against the baseline) shown open and drawn: the newest
runs', listed first; the older ones are collapsed (``<details>``) and hold the tables of
the queries that lost most, no figure (a figure costs about 0.3 s and 85 KiB)."""

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
 color:#1f2328;margin:0;background:#f6f8fa}
main{max-width:1180px;margin:0 auto;padding:20px 28px 60px;background:#fff}
h1{font-size:24px;margin:4px 0 2px}h2{font-size:20px;border-bottom:2px solid #d0d7de;
 padding-bottom:4px;margin-top:34px}h3{font-size:17px;margin-top:26px}
h4{font-size:15px;margin:22px 0 6px}
.meta{color:#57606a;margin:0 0 12px}
code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f6f8fa;
 padding:1px 4px;border-radius:4px}
dl.settings{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:8px 0}
dl.settings dt{color:#57606a}dl.settings dd{margin:0}
nav ul{margin:4px 0;padding-left:20px}
.rh-table{border-collapse:collapse;margin:8px 0 14px;font-variant-numeric:tabular-nums}
.rh-table caption{text-align:left;color:#57606a;padding-bottom:4px}
.rh-table th,.rh-table td{border-bottom:1px solid #d8dee4;padding:3px 9px;text-align:right}
.rh-table th{background:#f6f8fa;font-weight:600}
.rh-table th.group{text-align:center;border-left:2px solid #d0d7de}
.rh-table .text{text-align:left;white-space:nowrap}
.rh-table .best-bold{font-weight:700}
.rh-table .best-color{background:#c8ecd0;font-weight:700}
.rh-table .fail,.fail{color:#c0182a;font-weight:700}
.rh-table .worse{color:#c0182a}.rh-table .better{color:#1a7f37}
.figure,.scroll{margin:6px 0 10px;overflow-x:auto}.figure svg{max-width:100%;height:auto}
.worst{display:flex;flex-wrap:wrap;gap:6px 26px}
.note{color:#57606a;font-style:italic}
.warning{color:#9a6700}
.legend-fail{color:#c0182a;font-weight:700}.legend-pass{color:#1a7f37;font-weight:700}
details{margin:6px 0}details>summary{cursor:pointer}details>summary h4{display:inline;margin:0}
pre{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f6f8fa;
 padding:8px;overflow-x:auto}
.rh-table.paper td sup{font-size:75%}
details.pair{border-top:1px solid #d8dee4;padding-top:6px;margin-top:14px}
"""
STYLE += PANELS_STYLE


def build_report(
    wh,
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002 (PyTerrier's name)
    highlight: str | None = "bold",
    **selection: Any,
) -> str:
    """The report's HTML text.

    With no selection it covers what the warehouse holds: every qrels set with a stored
    evaluation, every run evaluated against it, and the measures stored for them (the first
    eight stored; the 11 precision-recall points have their own section). Missing values
    (typically the precision-recall points, or a measure one run lacks) are evaluated and
    stored, as :func:`rankhouse.compare.compare` does.

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        round: decimals shown, one number or a dict measure -> decimals.
        highlight: how the best mean per measure is marked: ``'bold'``, ``'color'`` or None.
        **selection: what to report and how to test it (:func:`.gather.gather`'s arguments):
            qrels: only this qrels set (name, id or file).
            runs: only these runs (names, ids or files), with ``systems``' runs.
            systems: only the runs of these system tags.
            measures: the measures shown (any spelling), in this order.
            baseline: the run the others are tested against (name, id or file); None: means only.
            test: the paired test, as for compare (``'t'``, ``'wilcoxon'``, ...).
            correction: the multiple-testing correction, as for compare.
            alpha: significance level.
            relevance_level: grade from which binary measures count a document as relevant.
            last: only the newest ``last`` runs of each system (the baseline and named
                runs stay), the trends included.
            brief: the per-run sections (runs table, comparison, per-query pictures,
                precision-recall) show only the newest run and the baseline; without it
                they show the baseline and the newest runs, 10 in all (``MAX_COMPARED``).
                The trends always cover every selected run.
            margin: the comparison's practical margin, as compare takes it (``0.01``,
                ``'2%'``, ``{'nDCG@10': 0.05}``): its verdicts use it, and the table shows
                the nightly gate's word at that margin (non-inferior, regressed, not shown).

    Raises:
        RankhouseError: nothing to report, or a bad option.
        NotFoundError: a named run, system or qrels set that is not stored.
    """
    check_display(round, highlight)
    data = gather(wh, **selection)
    return render(data, round=round, highlight=highlight)


def write_report(wh, path: str | os.PathLike[str], **options: Any) -> Path:
    """Write the report to ``path`` (UTF-8 HTML); the options are :func:`build_report`'s.

    ``path`` is checked before the report is made (:func:`rankhouse.outputs.check_output_path`):
    a folder, a missing folder or one without the right to write fails before anything is
    evaluated or stored. The file is written whole or not at all.

    Returns:
        The path written.

    Raises:
        OutputError: ``path`` cannot be written.
    """
    target = check_output_path(path, "the report", "report.html")
    text = build_report(wh, **options)
    return write_text(
        target,
        text,
        "the report",
        kept="the values it evaluated stay stored (the report made again reuses them)",
    )


def render(
    data: ReportData,
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002
    highlight: str | None = "bold",
) -> str:
    """The report's HTML document."""
    check_display(round, highlight)
    body = [_header(data)]
    for index, section in enumerate(data.sections):
        body.append(_section(section, f"s{index}", round=round, highlight=highlight))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>rankhouse report: {_qrels_names(data)}</title>"
        f"<style>{STYLE}</style></head><body><main>\n"
        + "\n".join(body)
        + "\n</main></body></html>\n"
    )


def _window(settings) -> list[tuple[str, str]]:
    """The header's line on ``--last`` and ``--brief``, when given."""
    said = []
    if settings.get("last"):
        said.append(f"the newest {count(settings['last'], 'run')} of each system (--last)")
    if settings.get("brief"):
        said.append("the newest run against the baseline (--brief)")
    return [("runs", "; ".join(said))] if said else []


def _qrels_names(data: ReportData) -> str:
    return html.escape(", ".join(s.qrels["name"] for s in data.sections))


def _header(data: ReportData) -> str:
    settings = data.settings
    baseline = settings["baseline"]
    items = [
        ("qrels", ", ".join(s.qrels["name"] for s in data.sections)),
        ("baseline", baseline or "none (means only; --baseline RUN adds the tests)"),
        (
            "test",
            f"{settings['test']}, correction {settings['correction']}, alpha {settings['alpha']:g}"
            if baseline
            else "none",
        ),
        ("relevance level", str(settings["relevance_level"])),
        *_window(settings),
        ("made by", f"rankhouse {data.version}"),
        ("at", data.created_at.strftime("%Y-%m-%d %H:%M:%S UTC")),
    ]
    rows = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in items)
    contents = "".join(
        f'<li><a href="#s{i}">{html.escape(s.qrels["name"])}</a>: '
        f'<a href="#s{i}-trends">trends</a>, <a href="#s{i}-comparison">comparison</a>, '
        f'<a href="#s{i}-pr">precision-recall</a></li>'
        for i, s in enumerate(data.sections)
    )
    return (
        "<header><h1>rankhouse evaluation report</h1>"
        f'<dl class="settings">{rows}</dl><nav><ul>{contents}</ul></nav></header>'
    )


def _section(
    section: QrelsSection,
    anchor: str,
    *,
    round,
    highlight,  # noqa: A002
) -> str:
    qrels = section.qrels
    parts = [
        f'<section id="{anchor}"><h2>qrels {html.escape(qrels["name"])}</h2>',
        '<dl class="settings">'
        f"<dt>content sha256</dt><dd><code>{html.escape(str(qrels['content_sha256']))}</code></dd>"
        f"<dt>queries</dt><dd>{count(qrels.get('num_queries') or 0, 'query')}, "
        f"{count(qrels.get('num_judgments') or 0, 'judgment')}, grades {qrels.get('min_grade')}"
        f"–{qrels.get('max_grade')}</dd>"
        f"<dt>measures</dt><dd>{html.escape(', '.join(section.measures))}</dd></dl>",
    ]
    parts += [f'<p class="note">{html.escape(n)}</p>' for n in section.notes]
    parts.append(_runs_table(section))
    parts.append(_trends(section, anchor, round=round, highlight=highlight))
    parts.append(_comparison(section, anchor, round=round, highlight=highlight))
    parts.append(f'<h3 id="{anchor}-pr">Precision-recall</h3>')
    parts.append(
        '<p class="meta">Mean interpolated precision at the 11 standard recall points '
        "(trec_eval's <code>iprec_at_recall</code>).</p>"
    )
    runs = [r.name for r in section.runs]
    parts.append(
        '<div class="figure">'
        + precision_recall_figure(section.precision_recall, runs, f"{anchor}pr")
        + "</div>"
    )
    parts.append("</section>")
    return "\n".join(parts)


def _runs_table(section: QrelsSection) -> str:
    """The compared runs (all of them in a report of up to MAX_COMPARED runs)."""
    keys = list(dict.fromkeys(k for r in section.runs for k in r.metadata))
    rows = []
    for run in section.runs:
        cells = [
            cell(run.name, classes=["text"]),
            cell(run.system, classes=["text"]),
            cell(str(run.ingested_at)[:19], classes=["text"]),
            cell(str(run.num_queries)),
        ]
        cells += [cell(_meta(run.metadata.get(k)), classes=["text"]) for k in keys]
        rows.append("".join(cells))
    header = "<tr>" + "".join(
        cell(h, tag="th", classes=["text"] if h != "queries" else [])
        for h in ["run", "system", "ingested (UTC)", "queries", *keys]
    )
    return "<h3>Runs</h3>" + table(header + "</tr>", rows)


def _meta(value) -> str:
    return "" if value is None else str(value)


def _trends(section: QrelsSection, anchor: str, *, round, highlight) -> str:  # noqa: A002
    parts = [f'<h3 id="{anchor}-trends">Trends</h3>']
    if not section.trends:
        parts.append(
            '<p class="note">No system has more than one run here: a trend needs a series '
            "of runs with the same system tag (one per night, say).</p>"
        )
        return "\n".join(parts)
    level = f"{section.settings.get('level', 0.95) * 100:g}%"
    parts.append(
        '<p class="meta">Each system\'s runs in ingest order, labelled by their date (the '
        "<code>night</code> metadata, else the ingest time) and commit; a point is the mean "
        f"over the queries, the band its {level} interval (Student's t over the per-query "
        "values, cut to the measure's range: [0, 1] for precision, recall, AP, RR, nDCG...). "
        f"A series of more than {DETAIL} runs is drawn twice: the whole span at the runs' "
        f"dates (the line, its band and the failed gates), and the newest {DETAIL} runs in "
        "detail. "
        "Each panel states its axis range; an axis spans at least "
        f"{MIN_SPAN:g} or {MIN_FRACTION:.0%} of the largest value shown, so that a small change "
        "does not fill the panel. A dashed rule marks a change of inputs: the line does not "
        'cross it. Regression gate of the run on that measure: <span class="legend-fail">'
        '● failed</span>, <span class="legend-pass">○ passed</span>. Hover a point for its '
        "run, interval and metadata.</p>"
    )
    for index, trend in enumerate(section.trends):
        parts.append(f"<h4>system {html.escape(trend.system)}</h4>")
        svg = trend_figure(trend, section.measures, index, f"{anchor}t{index}")
        parts.append(f'<div class="figure">{svg}</div>')
        parts.append(_trend_table(trend, section.measures, round=round, highlight=highlight))
    return "\n".join(parts)


MAX_FAILED_LISTED = DETAIL
"""Of the runs before a long series' newest DETAIL, the table lists at most this many whose
gate failed (the newest ones): a year of failing nights stays a table a person reads."""


def _trend_table(trend, measures, *, round, highlight) -> str:  # noqa: A002
    """The series' runs as a table: all of a short series; of a longer one the newest
    DETAIL runs and the newest MAX_FAILED_LISTED earlier runs whose gate failed, with a line
    saying so."""
    gates = [_gate(trend, r.id, measures) for r in trend.runs]
    count_ = len(trend.runs)
    failed = [i for i in range(max(count_ - DETAIL, 0)) if _failed(gates[i])]
    listed = [*failed[-MAX_FAILED_LISTED:], *range(max(count_ - DETAIL, 0), count_)]
    runs = [trend.runs[i] for i in listed]
    keys = list(dict.fromkeys(k for r in runs for k in r.metadata))
    frame = pd.DataFrame(  # in one step: a column at a time fragments a wide frame
        {
            "#": [str(i + 1) for i in listed],
            "run": [r.name for r in runs],
            **{k: [_meta(r.metadata.get(k)) for r in runs] for k in keys},
            **{m: trend.means[m].to_numpy(dtype=float)[listed] for m in measures},
            "gate": [gates[i] for i in listed],
        }
    )
    note = ""
    if len(listed) < count_:
        earlier = len(listed) - min(DETAIL, count_)
        which = (
            f"the {count(earlier, 'earlier run')} whose gate failed"
            if earlier == len(failed)
            else f"the newest {earlier} of the {len(failed):,} earlier runs whose gate failed"
        )
        note = (
            f'<p class="meta">The newest {DETAIL} of the {count_} runs'
            + (f", and {which}" if earlier else "")
            + f" (<code>rankhouse history -s {html.escape(trend.system)} --limit 0</code>"
            " lists them all).</p>"
        )
    return note + measure_table(
        frame,
        ["#", "run", *keys],
        measures,
        round=round,
        highlight=highlight,
        extra={"gate": _gate_cell},
    )


def _gate(trend, run_id: int, measures) -> str:
    """The gate's words for one run: ``fail: nDCG@10`` (regressed), ``not shown: AP`` (the
    queries could not judge it), ``pass`` or ``first run``, with the baseline."""
    found = {m: trend.verdicts.get((run_id, m)) for m in measures}
    against = f"(vs {trend.baselines.get(run_id, '?')})"
    parts = [
        f"{word}: {', '.join(names)}"
        for word in ("fail", "not shown")
        if (names := [m for m, v in found.items() if v == word])
    ]
    if parts:
        return f"{'; '.join(parts)} {against}"
    if any(v == "pass" for v in found.values()):
        return f"pass {against}"
    return "first run" if run_id in trend.first_runs else ""


def _failed(gate: str) -> bool:
    return gate.startswith(("fail", "not shown"))


def _gate_cell(value) -> tuple[str, list[str]]:
    return value, ["fail"] if _failed(value) else []


def _comparison(section: QrelsSection, anchor: str, *, round, highlight) -> str:  # noqa: A002
    parts = [f'<h3 id="{anchor}-comparison">Comparison</h3>']
    if section.baseline is None:
        parts.append(
            '<p class="note">Means only: name a baseline (--baseline RUN) for the differences, '
            "verdicts and per-query pictures.</p>"
        )
    else:
        parts.append(
            '<p class="meta">Against the baseline, as <code>rankhouse compare</code> prints it: '
            "per measure, each run's mean, its difference from the baseline with the interval "
            "of the paired difference, Hedges' g_z and the verdict. The best mean of each "
            "measure is marked.</p>"
        )
    # the rule of rankhouse.judgments.holes, as compare warns of it
    parts += [f'<p class="warning">Warning: {html.escape(line)}</p>' for line in section.holes]
    parts.append(
        comparison_panels_html(
            section.rows, section.settings, round=round, highlight=highlight, style=False
        )
    )
    parts.append(_drift_table(section, round=round))
    experiment = comparison_html(
        section.comparison, round=round, highlight=highlight, settings=section.settings
    )
    parts.append(
        f'<details class="wide"><summary>{html.escape(EVERY_COLUMN)}</summary>'
        f'<div class="scroll">{experiment}</div></details>'
    )
    parts.append(_paper_tables(section, round=round))
    # newest first: the runs a nightly reader asks about are at the top, open and drawn
    for index, (run, pairs) in enumerate(reversed(section.pairs.items())):
        title = f"{html.escape(run)} vs {html.escape(section.baseline)}"
        opened = " open" if index < OPEN_PAIRS else ""
        parts.append(f'<details class="pair"{opened}><summary><h4>{title}</h4></summary>')
        if index < OPEN_PAIRS:
            svg = comparison_figure(run, section.baseline, pairs, index + 1, f"{anchor}c{index}")
            parts.append(f'<div class="figure">{svg}</div>')
        parts.append(_worst_tables(run, section.baseline, pairs, round=round))
        parts.append("</details>")
    if len(section.pairs) > OPEN_PAIRS:
        parts.append(
            f'<p class="note">The newest {OPEN_PAIRS} runs against the baseline are open and '
            "drawn; the older ones list the queries that lost most (click a title to open "
            "it).</p>"
        )
    return "\n".join(parts)


def _paper_tables(section: QrelsSection, *, round) -> str:  # noqa: A002
    """The means as a paper prints them (``compare --format markdown|latex``): drawn, and
    as the text to copy."""
    table = papers.comparison_table(section.rows, section.settings)
    parts = [
        "<h4>For a paper</h4>",
        papers.html_table(table, round=round),
        f'<details class="paper"><summary>{PAPER_SUMMARY}</summary>',
    ]
    for form in papers.FORMATS:
        text = papers.render(table, form, round=round)
        parts.append(f'<pre class="paper-{form}">{html.escape(text)}</pre>')
    parts.append("</details>")
    return "".join(parts)


def _drift_table(section: QrelsSection, *, round) -> str:  # noqa: A002
    """Each run's order drift from the baseline, as ``compare --drift`` gives it."""
    if not section.drift:
        return ""
    first = section.drift[0]
    digits = round if isinstance(round, int) else 4

    def cell(value) -> str:
        return "" if value is None or pd.isna(value) else f"{value:.{digits}f}"

    rows = "".join(
        f"<tr><td>{html.escape(row['run'])}</td><td>{cell(row['rbo'])}</td>"
        f"<td>{cell(row['kendall_tau'])}</td><td>{cell(row['tau_ap'])}</td>"
        f"<td>{cell(row['overlap'])}</td><td>{row['num_q']}</td></tr>"
        for row in section.drift
    )
    return (
        f'<h4>Order drift from {html.escape(section.baseline)}</h4><p class="meta">How far each '
        f"run's rankings moved from the baseline's, over the top {first['k']} of each query: "
        f"rank-biased overlap (persistence {first['p']:g}, extrapolated), Kendall's tau and "
        "tau_AP of the documents both lists hold, and their overlap (docs/compare.md).</p>"
        '<table class="drift"><thead><tr><th>run</th><th>RBO</th><th>Kendall tau</th>'
        f"<th>tau_AP</th><th>overlap@{first['k']}</th><th>queries</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _worst_tables(run: str, baseline: str, pairs, *, round) -> str:  # noqa: A002
    blocks = []
    for measure, frame in pairs.items():
        data = sorted_deltas(frame)
        worse = data[data["delta"] < 0].head(WORST_LISTED)
        digits = digits_for(round, measure)
        caption = (
            f"{measure}: the query that lost most"
            if len(worse) == 1
            else f"{measure}: the {len(worse)} queries that lost most"
        )
        if worse.empty:
            blocks.append(f'<p class="note">{html.escape(measure)}: no query got worse.</p>')
            continue
        rows = [
            cell(str(r.query_id), classes=["text"])
            + cell(number(r.baseline_value, digits))
            + cell(number(r.run_value, digits))
            + cell(signed(r.delta, digits), classes=["worse"])
            for r in worse.itertuples()
        ]
        header = "<tr>" + "".join(
            cell(h, tag="th", classes=["text"] if h == "query" else [])
            for h in ("query", baseline, run, "difference")
        )
        blocks.append(table(header + "</tr>", rows, caption=caption))
    return f'<div class="worst">{"".join(blocks)}</div>'
