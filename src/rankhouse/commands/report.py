"""``rankhouse report``: one self-contained HTML file of trends, comparisons and curves."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path

import typer

from .common import all_files, open_warehouse
from .compare import ALPHA_OPTION, CORRECTION_OPTION, TEST_OPTION, Correction, Test


class Highlight(StrEnum):
    bold = "bold"
    color = "color"
    none = "none"


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
        None, "--measure", "-m", help="Measure, repeatable [default: the stored ones]."
    ),
    baseline: str = typer.Option(
        None, "--baseline", "-b", help="Test every other run against this one."
    ),
    test: Test = TEST_OPTION,
    correction: Correction = CORRECTION_OPTION,
    alpha: float = ALPHA_OPTION,
    relevance_level: int = typer.Option(
        1, "--relevance-level", "--rel-level", "-l", help="Grade from which a document counts."
    ),
    digits: int = typer.Option(4, "--round", help="Decimals shown.", min=0, max=15),
    highlight: Highlight = typer.Option(
        Highlight.bold, "--highlight", help="How the best mean per measure is marked."
    ),
) -> None:
    """Write an HTML report: trends per system, the comparison table with per-query
    differences against --baseline, and precision-recall curves.

    With no selection it covers every stored run's latest evaluations per qrels set. The
    file holds everything (inline SVG, no script) and opens offline.
    """
    wh = open_warehouse(ctx, create=all_files(qrels, *(runs or [])))
    path = wh.report(
        output,
        qrels=qrels,
        runs=runs or None,
        systems=systems or None,
        measures=measures or None,
        baseline=baseline,
        test=test.value,
        correction=correction.value,
        alpha=alpha,
        relevance_level=relevance_level,
        round=digits,
        highlight=None if highlight == Highlight.none else highlight.value,
    )
    size = path.stat().st_size
    print(f"wrote {path} ({size / 1024:.0f} KiB)", file=sys.stderr)
