"""The report as one HTML document: a stylesheet, tables and inline SVG; no script.

Everything the page needs is in the file, so it opens offline and makes no request.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

from ..display import tables
from ..display.frames import EVERY_COLUMN
from ..display.panels import PANELS_STYLE, comparison_panels_html
from ..lazy import pandas as pd
from ..words import count
from .figures import comparison_figure, precision_recall_figure, sorted_deltas
from .gather import QrelsSection, ReportData
from .trend_figure import DETAIL, MIN_FRACTION, MIN_SPAN, trend_figure

WORST_LISTED = 10

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
.legend-fail{color:#c0182a;font-weight:700}.legend-pass{color:#1a7f37;font-weight:700}
details{margin:6px 0}details>summary{cursor:pointer}details>summary h4{display:inline;margin:0}
details.pair{border-top:1px solid #d8dee4;padding-top:6px;margin-top:14px}
"""
STYLE += PANELS_STYLE


def render(
    data: ReportData,
    *,
    round: int | Mapping[str, int] = tables.DEFAULT_ROUND,  # noqa: A002
    highlight: str | None = "bold",
) -> str:
    """The report's HTML document."""
    tables.check_display(round, highlight)
    body = [_header(data)]
    for number, section in enumerate(data.sections):
        body.append(_section(section, f"s{number}", round=round, highlight=highlight))
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
            tables.cell(run.name, classes=["text"]),
            tables.cell(run.system, classes=["text"]),
            tables.cell(str(run.ingested_at)[:19], classes=["text"]),
            tables.cell(str(run.num_queries)),
        ]
        cells += [tables.cell(_meta(run.metadata.get(k)), classes=["text"]) for k in keys]
        rows.append("".join(cells))
    header = "<tr>" + "".join(
        tables.cell(h, tag="th", classes=["text"] if h != "queries" else [])
        for h in ["run", "system", "ingested (UTC)", "queries", *keys]
    )
    return "<h3>Runs</h3>" + tables.table(header + "</tr>", rows)


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


def _trend_table(trend, measures, *, round, highlight) -> str:  # noqa: A002
    """The series' runs as a table: all of a short series; of a longer one the newest
    DETAIL runs and the earlier runs whose gate failed, with a line saying so."""
    gates = [_gate(trend, r.id, measures) for r in trend.runs]
    count_ = len(trend.runs)
    listed = [i for i in range(count_) if i >= count_ - DETAIL or _failed(gates[i])]
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
        note = (
            f'<p class="meta">The newest {DETAIL} of the {count_} runs'
            + (f", and the {count(earlier, 'earlier run')} whose gate failed" if earlier else "")
            + " (<code>rankhouse history</code> lists them all).</p>"
        )
    return note + tables.measure_table(
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
    parts.append(
        comparison_panels_html(
            section.rows, section.settings, round=round, highlight=highlight, style=False
        )
    )
    parts.append(_drift_table(section, round=round))
    experiment = tables.comparison_html(
        section.comparison, round=round, highlight=highlight, settings=section.settings
    )
    parts.append(
        f'<details class="wide"><summary>{html.escape(EVERY_COLUMN)}</summary>'
        f'<div class="scroll">{experiment}</div></details>'
    )
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
        digits = tables.digits_for(round, measure)
        caption = (
            f"{measure}: the query that lost most"
            if len(worse) == 1
            else f"{measure}: the {len(worse)} queries that lost most"
        )
        if worse.empty:
            blocks.append(f'<p class="note">{html.escape(measure)}: no query got worse.</p>')
            continue
        rows = [
            tables.cell(str(r.query_id), classes=["text"])
            + tables.cell(tables.number(r.baseline_value, digits))
            + tables.cell(tables.number(r.run_value, digits))
            + tables.cell(tables.signed(r.delta, digits), classes=["worse"])
            for r in worse.itertuples()
        ]
        header = "<tr>" + "".join(
            tables.cell(h, tag="th", classes=["text"] if h == "query" else [])
            for h in ("query", baseline, run, "difference")
        )
        blocks.append(tables.table(header + "</tr>", rows, caption=caption))
    return f'<div class="worst">{"".join(blocks)}</div>'
