"""``rankhouse regress``: the regression gate for CI (exit 0 passed, 1 regressed, 3 not shown,
2 anything else that stops the gate); ``rankhouse gate status|accept``: what the nightly gate
weighs each system against, how it is calibrated, and accepting a new reference."""

from __future__ import annotations

import sys
from enum import StrEnum

import typer

from ...defaults import DEFAULT_MAX_JUDGED_DROP, packed
from ..process import failure_text, interrupted
from .common import (
    ALPHA_OPTION,
    MISSING_QUERIES_OPTION,
    PERMUTATIONS_OPTION,
    RELEVANCE_LEVEL_OPTION,
    SEED_OPTION,
    TEST_OPTION,
    MissingQueries,
    Test,
    all_files,
    choices,
    flag_option,
    open_warehouse,
)
from .output import FORMAT_OPTION, OutputFormat, print_rows

Mode = choices("Mode", "non-inferiority significance")


NewSystem = choices("NewSystem", "warn fail")


class NotShown(StrEnum):
    auto = "auto"
    fail = "fail"
    passes = "pass"


EXIT_PASSED = 0
EXIT_REGRESSED = 1
EXIT_BAD_INPUT = 2
EXIT_NOT_SHOWN = 3


def register(app: typer.Typer) -> None:
    app.command("regress")(regress_command)
    _register_gate(app)


def regress_command(
    ctx: typer.Context,
    run: str = typer.Argument(..., help="The run under test: a stored name or id, or a file."),
    baseline: str = typer.Option(
        ...,
        "--baseline",
        "-b",
        help="A run name or id, or a rule: 'reference' (the system's pinned reference, "
        "pinned now when it has none; `rankhouse gate accept` moves it), 'previous' (the "
        "latest earlier run of the same system tag), 'last-passed' (the newest of those whose "
        "gate passed), 'best' (the passed one with the highest mean of the first measure).",
    ),
    qrels: str = typer.Option(..., "--qrels", help="Qrels: a stored name or id, or a file."),
    measures: list[str] = typer.Option(
        ...,
        "--measure",
        "-m",
        help="Measure, repeatable, with its margin after a colon if it has its own: "
        "nDCG@10:0.01 (the measure's units), AP:2% (of the reference's mean). Without one "
        "the margin is calibrated from the system's nightly history.",
    ),
    mode: Mode = typer.Option(
        Mode.non_inferiority,
        "--mode",
        help="non-inferiority: pass a measure shown no worse than -margin (the lower limit of "
        "the (1 - 2 alpha) interval of the difference at least -margin); significance: fail "
        "when a change to the worse side beyond the margin is significant.",
    ),
    max_drop: float = typer.Option(
        None,
        "--max-drop",
        help="Margin of the measures without one (absolute unless --relative). Default: "
        "calibrated from the system's nightly spread for the false alarm target "
        "(non-inferiority); no tolerance (significance).",
        min=0.0,
        show_default=False,
    ),
    relative: bool = typer.Option(
        False, "--relative", help="Read --max-drop as a fraction of the reference's mean."
    ),
    false_alarm: float = typer.Option(
        0.01,
        "--false-alarm",
        help="Share of unchanged nights the whole check may fail, spread over its measures; "
        "the calibrated margins follow from it.",
    ),
    not_shown: NotShown = typer.Option(
        NotShown.auto,
        "--not-shown",
        help="What a measure does that the queries can neither show no worse than its margin "
        "nor show to drop: fail (exit 3), pass (with a warning), or auto: fail when its "
        "margin was given, pass when it was calibrated.",
    ),
    max_drift: list[str] = typer.Option(
        None,
        "--max-drift",
        metavar="MEASURE@K:BOUND",
        help="Fail when the run's mean order drift from the baseline is below BOUND: rbo, "
        "tau, tau_ap or overlap over the top K (e.g. rbo@100:0.9). Repeatable.",
    ),
    alpha: float = ALPHA_OPTION,
    level: float = typer.Option(
        0.95, "--level", help="Confidence level of the intervals shown, between 0 and 1."
    ),
    test: Test = TEST_OPTION,
    correction: str = typer.Option(
        "holm",
        "--correction",
        help="Multiple-testing correction over the measures (statsmodels multipletests): holm, "
        "none, bonferroni, bh, ... It decides in the significance mode; in the "
        "non-inferiority mode it changes only the p-values and verdict words shown.",
    ),
    permutations: int = PERMUTATIONS_OPTION,
    seed: int = SEED_OPTION,
    relevance_level: int = RELEVANCE_LEVEL_OPTION,
    missing_queries: MissingQueries = MISSING_QUERIES_OPTION,
    allow_missing_baseline: bool = flag_option(
        "--allow-missing-baseline",
        help="With a baseline rule: pass (exit 0) when the run is the first of its system; "
        "history shows its gate as 'first run'.",
    ),
    new_system: NewSystem = typer.Option(
        NewSystem.warn,
        "--new-system",
        help="A first run whose system tag no stored run has, while other systems are stored "
        "(a renamed run tag?): warn and pass it with --allow-missing-baseline, or fail (exit "
        "2), naming the nearest known system.",
    ),
    allow_input_change: bool = flag_option(
        "--allow-input-change",
        help="Gate against a baseline judged on other inputs (qrels content, queries, "
        "settings) instead of stopping with exit 2.",
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
    max_judged_drop: float = typer.Option(
        DEFAULT_MAX_JUDGED_DROP,
        "--max-judged-drop",
        help="Warn of holes in the judgments when the run's mean Judged@k (k the measure's "
        "cutoff, 10 without one) is below the baseline's by more than this; a measure that "
        "fails there, but whose judged documents alone drop no more than its margin, is "
        "'unsettled' (exit 3), not regressed; 0 to 1.",
    ),
    pool_out: str = typer.Option(
        None,
        "--pool-out",
        metavar="FILE",
        help="Write the run's and the baseline's unjudged top-k documents here as a pool to "
        "judge ('qid docid' lines).",
    ),
) -> None:
    """Gate RUN against a baseline: exit 0 passed, 1 regressed, 3 not shown or unsettled, 2 error.

    In the default non-inferiority mode a measure passes when the run is shown no worse
    than the baseline by more than its margin (the lower limit of the (1 - 2 alpha) t
    interval of the paired difference at least -margin); it is 'regressed' when the whole
    interval lies below zero too (the evidence shows a drop), else 'not shown' (the queries
    cannot tell). Margins not given are calibrated from the system's nightly spread so
    that an unchanged night fails with probability --false-alarm; each check prints what
    its margins mean. With --mode significance a measure regresses when it moves to its
    worse side by more than the margin and the change is significant (Holm over the
    measures). A baseline judged on other inputs than the run's, bad input, or anything
    else that stops the gate, exits 2.

    Every check is stored; `rankhouse history` shows its verdict in the gate column.
    --format json prints the document --json writes. A report file given as '-' goes to
    stdout instead of the table.
    """
    reports = {"--markdown": markdown, "--json": json_file, "--junit": junit}
    to_stdout = [flag for flag, path in reports.items() if path == "-"]
    if len(to_stdout) > 1:
        raise typer.BadParameter(f"only one report can go to stdout, not {' and '.join(to_stdout)}")
    try:
        from ...regress import GateOptions

        options = packed(
            GateOptions,
            locals(),
            mode=mode.value.replace("-", "_"),
            not_shown=not_shown.value,
            max_drift=max_drift or None,
            test=test.value,
            missing_queries=missing_queries.value,
            new_system=new_system.value,
        )
        wh, result = _gate(ctx, reports, run, qrels, measures, options)
        _write_reports(wh, result, reports)
        if pool_out is not None:
            _write_holes_pool(wh, result, pool_out)
        _print_result(result, to_stdout, fmt)
    except typer.Exit:
        raise
    except Exception as exc:  # only a regression exits 1: whatever else stops the gate, 2
        if interrupted(exc):
            raise
        print(f"Error: {failure_text(exc)}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    _leave(wh, result)


def _gate(ctx: typer.Context, reports: dict[str, str | None], run, qrels, measures, options):
    """(the warehouse, the gate's result), the report files checked first: a file that
    cannot be written fails the gate before anything is ingested, evaluated or stored."""
    from ...outputs import check_output_path
    from ...regress import regress

    for flag, path in reports.items():
        if path is not None and path != "-":
            check_output_path(path, f"the {flag} report", _EXAMPLES[flag])
    wh = open_warehouse(ctx, create=all_files(run, qrels))
    return wh, regress(wh, run, qrels=qrels, measures=measures, options=options)


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
    from ...regress.files import to_json

    if to_stdout:
        sys.stdout.write(_report(to_stdout[0], result))
    elif fmt == OutputFormat.json:
        sys.stdout.write(to_json(result))
    elif fmt != OutputFormat.table:
        columns = list(VERDICT_COLUMNS)
        rows = [tuple(row[name] for name in columns) for row in result.verdict_rows]
        print_rows(columns, rows, fmt, numeric=[name in VERDICT_NUMBERS for name in columns])
    elif result.baseline is not None:
        settings = result.settings
        shown = dict(_SHOWN)
        if settings["mode"] == "non_inferiority":  # its bound and margin before the words
            del shown["p_corrected"], shown["verdict"], shown["status"]
            shown |= {**_NON_INFERIORITY, "verdict": "verdict", "status": "status"}
        columns = list(shown)
        rows = [tuple(row[name] for name in columns) for row in result.verdict_rows]
        print_rows(
            [shown[name] for name in columns],
            rows,
            fmt,
            title=f"regress {result.run} vs {result.baseline}: {_title(settings)}",
            numeric=[name in VERDICT_NUMBERS for name in columns],
        )
        if result.drift_rows:
            names = ["measure", "value", "bound", "num_q", "passed"]
            print_rows(
                ["drift", "mean", "bound", "n", "passed"],
                [tuple(row[n] for n in names) for row in result.drift_rows],
                fmt,
                title="order drift",
                numeric=[False, True, True, True, False],
            )


def _title(settings) -> str:
    """The mode and the levels of what the table shows."""
    level = f"low/high: {settings['level']:.0%} interval"
    if settings["mode"] != "non_inferiority":
        return f"significance, {level}, p corrected by {settings['correction']}"
    bound = 1 - 2 * settings["alpha"]
    return f"non-inferiority, {level}, bound: lower limit of the {bound:.0%} interval"


def _report(flag: str, result) -> str:
    from ...regress import files as regress_files

    return getattr(regress_files, _WRITERS[flag])(result)


def _leave(wh, result) -> None:
    for line in result.notes:
        print(line if line.startswith("warning: ") else f"note: {line}", file=sys.stderr)
    for line in result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    if result.input_change:
        print(f"note: inputs changed, compared anyway: {result.input_change}", file=sys.stderr)
    for line in result.meaning:
        print(line, file=sys.stderr)
    print(result.headline, file=sys.stderr)
    raise typer.Exit(
        {"regressed": EXIT_REGRESSED, "not_shown": EXIT_NOT_SHOWN, "unsettled": EXIT_NOT_SHOWN}.get(
            result.outcome, EXIT_PASSED
        )
    )


def _write_holes_pool(wh, result, path: str) -> None:
    """The run's and the baseline's top-k documents that the qrels do not judge, as a pool
    (k the largest of the gated measures' cutoffs, 10 without one)."""
    from ...judgments.holes import judged_cutoff
    from ...judgments.pools import PoolOptions, pool, write_pool
    from ...outputs import check_output_path

    if result.baseline is None:
        return
    check_output_path(path, "the --pool-out pool", "pool.txt")
    depth = max(judged_cutoff(str(row["measure"])) for row in result.verdict_rows)
    runs = list(dict.fromkeys([result.run, result.baseline]))
    found = pool(wh, runs, PoolOptions(depth=depth, qrels=result.qrels))
    with open(path, "w", encoding="utf-8") as out:
        write_pool(found, out)


#: The writer of each report file (:mod:`rankhouse.regress.files`), and a name to suggest.
_WRITERS = {"--markdown": "to_markdown", "--json": "to_json", "--junit": "to_junit_text"}
_EXAMPLES = {"--markdown": "gate.md", "--json": "gate.json", "--junit": "gate.xml"}


#: The verdict columns a terminal table shows, with their headers (csv/tsv/json have all).
_SHOWN = {
    "measure": "measure",
    "baseline_value": "baseline",
    "run_value": "run",
    "delta": "delta",
    "delta_low": "low",
    "delta_high": "high",
    "hedges_gz": "g_z",
    "num_q": "n",
    "p_corrected": "p",
    "verdict": "verdict",
    "status": "status",
}

#: Instead of the p-value in the non-inferiority mode: its bound and the margin.
_NON_INFERIORITY = {"bound": "bound", "margin": "margin"}


# --- gate status, gate accept -----------------------------------------------------------------

# The newest check of each system on each qrels set, one row per measure, with the system's
# current reference (views and tables of migrations 0003 and 0013).
_STATUS = """
WITH newest AS (
    SELECT c.id AS check_id, r.system_tag, c.qrels_id, r.name AS run_name, c.passed,
           c.baseline_run_id, row_number() OVER (
               PARTITION BY r.system_tag, c.qrels_id ORDER BY c.created_at DESC, c.id DESC
           ) AS recency
    FROM regress_checks c
    JOIN runs r ON r.id = c.run_id
),
reference AS (
    SELECT system_tag, qrels_id, run_name, row_number() OVER (
        PARTITION BY system_tag, qrels_id ORDER BY accepted_at DESC, id DESC
    ) AS recency
    FROM gate_references
)
SELECT n.system_tag, q.name AS qrels, ref.run_name AS reference, n.run_name AS last_run,
       CASE WHEN n.baseline_run_id IS NULL THEN 'first run'
            WHEN n.passed THEN 'pass' ELSE 'fail' END AS gate,
       v.measure, v.status, v.margin, v.margin_source, v.spread, v.spread_nights,
       v.false_alarm, v.detectable_drop
FROM newest n
JOIN qrels_sets q ON q.id = n.qrels_id
LEFT JOIN regress_verdicts v ON v.check_id = n.check_id
LEFT JOIN reference ref
       ON ref.system_tag = n.system_tag AND ref.qrels_id = n.qrels_id AND ref.recency = 1
WHERE n.recency = 1
  AND (CAST(:system AS VARCHAR) IS NULL OR n.system_tag = :system)
ORDER BY n.system_tag, q.name, v.measure
"""

_HISTORY = """
SELECT r.system_tag, q.name AS qrels, r.accepted_at, r.run_name, r.reason, r.accepted_by
FROM gate_references r
JOIN qrels_sets q ON q.id = r.qrels_id
WHERE (CAST(:system AS VARCHAR) IS NULL OR r.system_tag = :system)
ORDER BY r.system_tag, q.name, r.accepted_at DESC, r.id DESC
"""

_STATUS_COLUMNS = [
    "system_tag",
    "qrels",
    "reference",
    "last_run",
    "gate",
    "measure",
    "status",
    "margin",
    "margin_source",
    "spread",
    "spread_nights",
    "false_alarm",
    "detectable_drop",
]
_STATUS_HEADERS = {
    "system_tag": "system",
    "last_run": "last night",
    "margin_source": "from",
    "spread_nights": "nights",
    "false_alarm": "false alarms",
    "detectable_drop": "drop caught (80%)",
}
_STATUS_NUMBERS = {"margin", "spread", "spread_nights", "false_alarm", "detectable_drop"}


def _register_gate(app: typer.Typer) -> None:
    gate = typer.Typer(
        help="The nightly gate: each system's reference and calibration, and accepting a new "
        "reference."
    )
    app.add_typer(gate, name="gate")

    @gate.command("status")
    def gate_status(
        ctx: typer.Context,
        system: str = typer.Option(None, "--system", "-s", help="Only this system tag."),
        history: bool = flag_option(
            "--history",
            help="Every reference accepted (when, which run, why, by whom) instead.",
        ),
        fmt: OutputFormat = FORMAT_OPTION,
    ) -> None:
        """Each system's newest gate check, per measure: its reference, the margin, where the
        margin came from (calibrated from N nightly differences, tonight's queries while
        calibrating, or given), the night-to-night spread, the expected share of unchanged
        nights it fails, and the drop it catches on the first night 80% of the time."""
        wh = open_warehouse(ctx, write=False, reads=True)
        with wh.connect() as conn:
            if history:
                rows = conn.execute(_HISTORY, {"system": system}).all()
                print_rows(
                    ["system", "qrels", "accepted_at", "reference", "reason", "by"],
                    [(*row[:2], str(row[2])[:19], *row[3:]) for row in rows],
                    fmt,
                    title="references",
                    numeric=[False] * 6,
                )
                return
            rows = conn.execute(_STATUS, {"system": system}).all()
        if not rows:
            which = f" for {system!r}" if system else ""
            print(f"no gate check is stored yet{which}", file=sys.stderr)
        print_rows(
            [_STATUS_HEADERS.get(name, name) for name in _STATUS_COLUMNS],
            [tuple(row) for row in rows],
            fmt,
            title="the nightly gate",
            keys=["system", "measure"],
            numeric=[name in _STATUS_NUMBERS for name in _STATUS_COLUMNS],
        )

    @gate.command("accept")
    def gate_accept(
        ctx: typer.Context,
        run: str = typer.Argument(..., help="The run that becomes its system's reference."),
        qrels: str = typer.Option(..., "--qrels", help="Qrels: a stored name or id, or a file."),
        reason: str = typer.Option(
            ..., "--reason", help="Why the new level is right (kept with the reference)."
        ),
    ) -> None:
        """Accept RUN as its system's reference on QRELS: from the next night on, `regress
        --baseline reference` weighs the system's nights against it (a lasting drop stops
        failing once accepted). The former references stay: `gate status --history`."""
        wh = open_warehouse(ctx)
        row = wh.accept_reference(run, qrels=qrels, reason=reason)
        print(
            f"{row['run_name']} is now the reference of system {row['system_tag']!r} "
            f"(reason: {row['reason']})",
            file=sys.stderr,
        )
