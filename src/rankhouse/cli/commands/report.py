"""``rankhouse report``: one self-contained HTML file of trends, comparisons and curves."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from .common import (
    ALPHA_OPTION,
    CORRECTION_OPTION,
    HIGHLIGHT_OPTION,
    TEST_OPTION,
    Highlight,
    Test,
    all_files,
    flag_option,
    open_warehouse,
    parse_round,
)


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)


def report_command(
    ctx: typer.Context,
    output: Path = typer.Option(..., "--output", "-o", help="The HTML file to write."),
    qrels: str = typer.Option(None, "--qrels", help="Only this qrels set (name, id or file)."),
    runs: list[str] = typer.Option(
        None, "--run", help="Only this run (name, id or file), repeatable."
    ),
    systems: list[str] = typer.Option(
        None, "--system", "-s", help="Only the runs of this system tag, repeatable."
    ),
    measures: list[str] = typer.Option(
        None, "--measure", "-m", help="Measure, repeatable (default: the stored ones)."
    ),
    baseline: str = typer.Option(
        None, "--baseline", "-b", help="Test every other run against this one."
    ),
    test: Test = TEST_OPTION,
    correction: str = CORRECTION_OPTION,
    alpha: float = ALPHA_OPTION,
    relevance_level: int = typer.Option(
        1, "--relevance-level", "--rel-level", "-l", help="Grade from which a document counts."
    ),
    round: list[str] = typer.Option(  # noqa: A002 (the option's name)
        None,
        "--round",
        help="Decimals shown in a table: N for all, or MEASURE=N (repeatable); 4 when not given.",
    ),
    highlight: Highlight = HIGHLIGHT_OPTION,
    last: int = typer.Option(
        None,
        "--last",
        min=1,
        help="Only the newest N runs of each system (the baseline stays), trends included.",
    ),
    brief: bool = flag_option(
        "--brief",
        help="A short page for a nightly job: the trends, and only the newest run against "
        "the baseline (runs table, comparison, per-query pictures, precision-recall).",
    ),
    margin: list[str] = typer.Option(
        None,
        "--margin",
        help="Practical margin of the comparison, as for compare: 0.01, 2%, or MEASURE=VALUE "
        "(repeatable); the table then shows the gate's word at that margin (non-inferior, "
        "regressed, not shown), as `rankhouse regress` says it.",
    ),
) -> None:
    """Write an HTML report: trends per system, the comparison table with per-query
    differences against --baseline, and precision-recall curves.

    With no selection it covers every stored run's latest evaluations per qrels set. The
    file holds everything (inline SVG, no script) and opens offline. The trends cover every
    selected run; the per-run sections the baseline and the newest runs (10 in all; with
    --brief the newest one).
    """
    from ...compare.options import margins_from_texts
    from ...outputs import check_output_path

    check_output_path(output, "the report", "report.html")  # before the warehouse is touched
    wh = open_warehouse(ctx, create=all_files(qrels, *(runs or [])))
    path = wh.report(
        output,
        qrels=qrels,
        runs=runs or None,
        systems=systems or None,
        measures=measures or None,
        baseline=baseline,
        test=test.value,
        correction=correction,
        alpha=alpha,
        relevance_level=relevance_level,
        round=_round_option(round),
        highlight=None if highlight == Highlight.none else highlight.value,
        last=last,
        brief=brief,
        margin=margins_from_texts(margin or []),
    )
    size = f" ({path.stat().st_size / 1024:.0f} KiB)" if path.is_file() else ""  # not /dev/null
    print(f"wrote {path}{size}", file=sys.stderr)


def _round_option(items: list[str] | None):
    """``--round`` as the report takes it: a number, or {measure: decimals} (None: the rest)."""
    found = parse_round(items)
    if set(found) <= {None}:
        return found.get(None, 4)
    return found
