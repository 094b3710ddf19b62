"""``rankhouse regress``: the regression gate for CI (exit 0 pass, 1 regression, 2 bad input)."""

from __future__ import annotations

import sys

import typer

from ..failures import failure_text, interrupted
from .common import (
    MISSING_QUERIES_OPTION,
    RELEVANCE_LEVEL_OPTION,
    MissingQueries,
    all_files,
    open_warehouse,
)
from .compare import (
    ALPHA_OPTION,
    CORRECTION_OPTION,
    PERMUTATIONS_OPTION,
    SEED_OPTION,
    TEST_OPTION,
    Test,
)
from .output import FORMAT_OPTION, OutputFormat, print_rows

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
    correction: str = CORRECTION_OPTION,
    permutations: int = PERMUTATIONS_OPTION,
    seed: int = SEED_OPTION,
    relevance_level: int = RELEVANCE_LEVEL_OPTION,
    missing_queries: MissingQueries = MISSING_QUERIES_OPTION,
    allow_missing_baseline: bool = typer.Option(
        False,
        "--allow-missing-baseline",
        help="With --baseline previous: pass (exit 0) when the run is the first of its system; "
        "history shows its gate as 'first run'.",
    ),
    markdown: str = typer.Option(
        None, "--markdown", metavar="FILE", help="Also write a Markdown report here ('-': stdout)."
    ),
    json_file: str = typer.Option(
        None, "--json", metavar="FILE", help="Also write a JSON report here ('-': stdout)."
    ),
    junit: str = typer.Option(
        None, "--junit", metavar="FILE", help="Also write a JUnit XML report here ('-': stdout)."
    ),
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Gate RUN against a baseline: exit 1 when a measure dropped, 0 when none did.

    A measure regresses when its mean drops by more than --max-drop and the drop is
    significant. Improvements never fail. Bad input, or anything else that stops the
    gate, exits 2.

    Every check is stored; `rankhouse history` shows its verdict in the gate column.
    --format json prints the document --json writes. A report file given as '-' goes to
    stdout instead of the table.
    """
    reports = {"--markdown": markdown, "--json": json_file, "--junit": junit}
    to_stdout = [flag for flag, path in reports.items() if path == "-"]
    if len(to_stdout) > 1:
        raise typer.BadParameter(f"only one report can go to stdout, not {' and '.join(to_stdout)}")
    try:
        wh, result = _gate(
            ctx,
            reports,
            run,
            qrels,
            dict(
                baseline=baseline,
                measures=measures,
                max_drop=max_drop,
                relative=relative,
                alpha=alpha,
                test=test.value,
                correction=correction,
                permutations=permutations,
                seed=seed,
                relevance_level=relevance_level,
                missing_queries=missing_queries.value,
                allow_missing_baseline=allow_missing_baseline,
            ),
        )
        _write_reports(wh, result, reports)
        _print_result(result, to_stdout, fmt)
    except typer.Exit:
        raise
    except Exception as exc:  # only a regression exits 1: whatever else stops the gate, 2
        if interrupted(exc):
            raise
        print(f"Error: {failure_text(exc)}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    _leave(wh, result)


def _gate(ctx: typer.Context, reports: dict[str, str | None], run: str, qrels: str, options):
    """(the warehouse, the gate's result), the report files checked first: a file that
    cannot be written fails the gate before anything is ingested, evaluated or stored."""
    from ...outputs import check_output_path
    from ...regress import regress

    for flag, path in reports.items():
        if path is not None and path != "-":
            check_output_path(path, f"the {flag} report", _EXAMPLES[flag])
    wh = open_warehouse(ctx, create=all_files(run, qrels))
    return wh, regress(wh, run, qrels=qrels, **options)


def _write_reports(wh, result, reports: dict[str, str | None]) -> None:
    """Write the report files; one that fails now (a full disk) takes the stored check with
    it, so that history never shows a gate whose report CI did not get."""
    from ...errors import OutputError
    from ...outputs import write_text
    from ...regress import remove_check

    for flag, path in reports.items():
        if path is None or path == "-":
            continue
        try:
            write_text(path, _report(flag, result), f"the {flag} report")
        except OutputError as exc:
            remove_check(wh, result.check_id)
            raise OutputError(
                exc.message,
                hint="the gate's check was removed (what it ingested and evaluated stays "
                "stored): run the gate again once the report can be written",
            ) from None


def _print_result(result, to_stdout: list[str], fmt: OutputFormat) -> None:
    from ...columns import VERDICT_COLUMNS, VERDICT_NUMBERS
    from ...regress_files import to_json

    if to_stdout:
        sys.stdout.write(_report(to_stdout[0], result))
    elif fmt == OutputFormat.json:
        sys.stdout.write(to_json(result))
    elif fmt != OutputFormat.table:
        columns = list(VERDICT_COLUMNS)
        rows = [tuple(row[name] for name in columns) for row in result.verdict_rows]
        print_rows(columns, rows, fmt, numeric=[name in VERDICT_NUMBERS for name in columns])
    elif result.baseline is not None:
        columns = list(_SHOWN)
        rows = [tuple(row[name] for name in columns) for row in result.verdict_rows]
        print_rows(
            [_SHOWN[name] for name in columns],
            rows,
            fmt,
            title=f"regress {result.run} vs {result.baseline}",
            numeric=[name in VERDICT_NUMBERS for name in columns],
        )


def _report(flag: str, result) -> str:
    from ... import regress_files

    return getattr(regress_files, _WRITERS[flag])(result)


def _leave(wh, result) -> None:
    if result.baseline is None:
        system = wh.run(result.run)["system_tag"]
        print(
            f"PASS: {result.run} is the first of system {system!r}: there is no previous run to "
            "compare with (history shows its gate as 'first run')",
            file=sys.stderr,
        )
        raise typer.Exit(EXIT_PASSED)
    if result.passed:
        print(
            f"PASS: no measure of {result.run} regressed against {result.baseline}", file=sys.stderr
        )
        raise typer.Exit(EXIT_PASSED)
    print(
        f"FAIL: {', '.join(result.regressed)} regressed against {result.baseline}", file=sys.stderr
    )
    raise typer.Exit(EXIT_REGRESSED)


#: The writer of each report file (:mod:`rankhouse.regress_files`), and a name to suggest.
_WRITERS = {"--markdown": "to_markdown", "--json": "to_json", "--junit": "to_junit_text"}
_EXAMPLES = {"--markdown": "gate.md", "--json": "gate.json", "--junit": "gate.xml"}


#: The verdict columns a terminal table shows, with their headers (csv/tsv/json have all).
_SHOWN = {
    "measure": "measure",
    "baseline_value": "baseline",
    "run_value": "run",
    "delta": "delta",
    "improved": "+",
    "degraded": "-",
    "p_value": "p",
    "p_corrected": "p corr",
    "status": "status",
}
