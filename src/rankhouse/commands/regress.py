"""``rankhouse regress``: the regression gate for CI (exit 0 pass, 1 regression, 2 bad input)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..errors import RankhouseError
from .common import FORMAT_OPTION, OutputFormat, all_files, open_warehouse, print_frame
from .compare import (
    ALPHA_OPTION,
    CORRECTION_OPTION,
    PERMUTATIONS_OPTION,
    SEED_OPTION,
    TEST_OPTION,
    Correction,
    Test,
)

EXIT_PASSED = 0
EXIT_REGRESSED = 1
EXIT_BAD_INPUT = 2


def register(app: typer.Typer) -> None:
    app.command("regress")(regress_command)


def regress_command(
    ctx: typer.Context,
    run: str = typer.Argument(..., help="The run under test: a stored name or id, or a file."),
    baseline: str = typer.Option(
        ...,
        "--baseline",
        "-b",
        help="A run name or id, or 'previous': the latest earlier run of the same system tag.",
    ),
    qrels: str = typer.Option(..., "--qrels", help="Qrels: a stored name or id, or a file."),
    measures: list[str] = typer.Option(..., "--measure", "-m", help="Measure, repeatable."),
    max_drop: float = typer.Option(
        0.01, "--max-drop", help="Tolerated drop of a mean (absolute unless --relative).", min=0.0
    ),
    relative: bool = typer.Option(
        False, "--relative", help="Read --max-drop as a fraction of the baseline's mean."
    ),
    alpha: float = ALPHA_OPTION,
    test: Test = TEST_OPTION,
    correction: Correction = CORRECTION_OPTION,
    permutations: int = PERMUTATIONS_OPTION,
    seed: int = SEED_OPTION,
    relevance_level: int = typer.Option(1, "--relevance-level", "-l"),
    allow_missing_baseline: bool = typer.Option(
        False,
        "--allow-missing-baseline",
        help="With --baseline previous: pass (exit 0) when the run is the first of its system.",
    ),
    markdown: Path = typer.Option(None, "--markdown", help="Also write a Markdown report here."),
    json_file: Path = typer.Option(None, "--json", help="Also write a JSON report here."),
    junit: Path = typer.Option(None, "--junit", help="Also write a JUnit XML report here."),
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Gate RUN against a baseline: exit 1 when a measure dropped, 0 when none did.

    A measure regresses when its mean drops by more than --max-drop and the drop is
    significant. Improvements never fail. Bad input exits 2.

    Every check is stored; `rankhouse history` shows its verdict in the gate column.
    """
    from ..regress import NoBaselineError, regress
    from ..reports import write_json, write_junit, write_markdown

    try:
        wh = open_warehouse(ctx, create=all_files(run, qrels))
        result = regress(
            wh,
            run,
            baseline=baseline,
            qrels=qrels,
            measures=measures,
            max_drop=max_drop,
            relative=relative,
            alpha=alpha,
            test=test.value,
            correction=correction.value,
            permutations=permutations,
            seed=seed,
            relevance_level=relevance_level,
        )
    except NoBaselineError as exc:
        if allow_missing_baseline:
            print(f"No baseline: {exc}. Passing the first run of the series.", file=sys.stderr)
            raise typer.Exit(EXIT_PASSED) from None
        print(f"Error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except RankhouseError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT) from None

    for path, write in ((markdown, write_markdown), (json_file, write_json), (junit, write_junit)):
        if path is not None:
            write(result, path)
    table = result.verdicts[
        [
            "measure",
            "baseline_value",
            "run_value",
            "delta",
            "improved",
            "degraded",
            "p_value",
            "p_corrected",
            "status",
        ]
    ].rename(
        columns={
            "baseline_value": "baseline",
            "run_value": "run",
            "improved": "+",
            "degraded": "-",
            "p_value": "p",
            "p_corrected": "p corr",
        }
    )
    print_frame(table, fmt, title=f"regress {result.run} vs {result.baseline}")
    if result.passed:
        print(
            f"PASS: no measure of {result.run} regressed against {result.baseline}", file=sys.stderr
        )
        raise typer.Exit(EXIT_PASSED)
    print(
        f"FAIL: {', '.join(result.regressed)} regressed against {result.baseline}", file=sys.stderr
    )
    raise typer.Exit(EXIT_REGRESSED)
