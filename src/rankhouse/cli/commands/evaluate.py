"""Evaluating: ``rankhouse eval`` evaluates runs against qrels, prints and stores the results;
``rankhouse measures`` lists the measures, from the registry; ``rankhouse trec-eval`` is
trec_eval 10's command line, output and exit codes; ``rankhouse history`` shows the stored
evaluations over time, one row per run.

Means with their intervals in a terminal table (eval's and history's): ``0.1326 ±0.1335`` in
one cell. Machine formats (CSV, TSV, JSON) print ``AP``, ``AP low`` and ``AP high`` as three
exact numbers (compare's ``--wide`` names); a table folds them into the mean and the
half-width of its interval (Student's t intervals are symmetric about the mean), so that the
table stays as narrow as it can be. The number of queries is its own column.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer

from ...cells import is_missing, table_value
from ...defaults import DEFAULT_MAX_JUDGED_DROP, RECENT_RUNS
from ...errors import count
from .common import (
    LEVEL_OPTION,
    META_OPTION,
    MISSING_QUERIES_OPTION,
    QRELS_ARGUMENT,
    RELEVANCE_LEVEL_OPTION,
    RUNS_ARGUMENT,
    MissingQueries,
    RunOrder,
    all_files,
    flag_option,
    measures_option,
    open_warehouse,
    parse_meta,
    parse_round,
)
from .output import (
    FORMAT_OPTION,
    INTERVALS_OPTION,
    RESULT_FORMAT_OPTION,
    OutputFormat,
    ResultFormat,
    paper_format,
    print_rows,
    print_stream,
)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
    app.command("measures")(measures_command)
    app.command(
        "trec-eval",
        context_settings={
            "allow_extra_args": True,
            "ignore_unknown_options": True,
            "allow_interspersed_args": False,
            "help_option_names": [],
        },
        add_help_option=False,
    )(trec_eval_command)
    app.command("history")(history_command)


# --- eval -------------------------------------------------------------------------------------

DEFAULT_MEASURES = ["AP", "nDCG@10", "P@10", "RR", "R@1000"]


# Not required by Typer: --ranked-labels FILE stands for both (checked in the command, which
# says what Typer would say without the option).
_QRELS = typer.Argument(None, metavar="QRELS", help=QRELS_ARGUMENT.help, show_default=False)
_RUNS = typer.Argument(None, metavar="RUN...", help=RUNS_ARGUMENT.help, show_default=False)


def eval_command(
    ctx: typer.Context,
    qrels: str = _QRELS,
    runs: list[str] = _RUNS,
    measures: list[str] = measures_option(
        None,
        help="Measure, repeatable, or several separated by commas: nDCG@10, AP(rel=2), P_5, "
        f"ndcg_cut.10,20 ... (default: {' '.join(DEFAULT_MEASURES)})",
    ),
    relevance_level: int = RELEVANCE_LEVEL_OPTION,
    missing_queries: MissingQueries = MISSING_QUERIES_OPTION,
    per_query: bool = typer.Option(False, "--per-query", "-q", help="One row per run and query."),
    recompute: bool = typer.Option(
        False, "--recompute", help="Compute again even when the evaluation is stored."
    ),
    name: str = typer.Option(
        None,
        "--name",
        "-n",
        help="Name of the run file in the warehouse (default: its tag; a file changed since "
        "gets NAME@2, NAME@3...).",
    ),
    meta: list[str] = META_OPTION,
    allow_no_overlap: bool = flag_option(
        "--allow-no-overlap",
        help="Evaluate a run that has no query in common with the qrels (otherwise an error: "
        "it is almost always the wrong file).",
    ),
    level: float = LEVEL_OPTION,
    order: RunOrder = typer.Option(
        RunOrder.score,
        "--order",
        help="Rank RUN files by score (trec_eval), or take their ranks as the ranking.",
    ),
    columns: str = typer.Option(
        None,
        "--columns",
        help="Column mapping of tabular RUN files, e.g. qid=QUERY_KEY,docid=DOC_KEY,score=SIM.",
    ),
    qrels_columns: str = typer.Option(
        None,
        "--qrels-columns",
        help="Column mapping of a tabular QRELS file, e.g. qid=query,docid=doc,rel=SCORE.",
    ),
    ranked_labels: str = typer.Option(
        None,
        "--ranked-labels",
        metavar="FILE",
        help="Evaluate a ranking with its labels instead of QRELS and RUN: lines 'qid Q0 "
        "docid rel', each query's lines in rank order (stored as qrels and a run named "
        "after FILE).",
    ),
    fmt: ResultFormat = RESULT_FORMAT_OPTION,
    intervals: bool = INTERVALS_OPTION,
    round: list[str] = typer.Option(  # noqa: A002 (the option's name)
        None,
        "--round",
        help="Decimals in --format markdown and latex: N for all, or MEASURE=N "
        "(repeatable); 4 when not given, as trec_eval prints.",
    ),
) -> None:
    """Evaluate RUNS against QRELS; every evaluation is stored and reused when asked again.

    Each mean comes with its interval (Student's t over the per-query values, --level) and
    the number of queries: a table shows the half-width beside the mean (0.1326 ±0.1335);
    csv, tsv and json give the bounds as MEASURE low and MEASURE high.

    A run file is ingested first; when its name is held by other content (the file was
    regenerated), it is stored as the next version NAME@2, NAME@3... of the same system.

    --ranked-labels FILE evaluates a ranking with its labels ('qid Q0 docid rel' lines, each
    query's lines in rank order) instead of QRELS and RUN.

    --format markdown or latex prints the means as a paper's table: one row per run, the
    best mean of each measure in bold, --intervals in brackets, --round decimals.
    """
    paper = paper_format(fmt, intervals, ["--per-query"] if per_query else [])
    rounding = parse_round(round)
    metadata = parse_meta(meta)
    common = {
        "relevance_level": relevance_level,
        "missing_queries": missing_queries.value,
        "recompute": recompute,
        "with_per_query": per_query,
        "allow_no_overlap": allow_no_overlap,
        "level": level,
    }
    if ranked_labels is not None:
        mapped = columns is not None or qrels_columns is not None
        _refuse_with_ranked_labels(ctx, qrels, runs, name, metadata, mapped)
        wh = open_warehouse(ctx, write=False, create=all_files(ranked_labels))
        result = wh.evaluate_ranked_labels(ranked_labels, measures or DEFAULT_MEASURES, **common)
    else:
        _require(ctx, qrels, runs)
        # from the evaluation's own module, not its inputs': what evaluating stored values
        # imports then loads while the warehouse opens ahead (cli/process.py), not after
        from ...evaluation.flow import check_argument_order

        # before a missing warehouse is reported
        check_argument_order(qrels, runs, qrels_columns=qrels_columns, columns=columns)
        # --read-only serves stored values; only files may create the warehouse
        wh = open_warehouse(ctx, write=False, create=all_files(qrels, *runs))
        result = wh.evaluate(
            qrels,
            runs,
            measures or DEFAULT_MEASURES,
            name=name,
            meta=metadata or None,
            order=order.value,
            columns=columns,
            qrels_columns=qrels_columns,
            **common,
        )
    for run, counts in result.query_counts.items():
        notes = [f"{count(counts.evaluated, 'query')} evaluated"]
        if counts.missing_from_run:
            verb = "scored as empty rankings" if missing_queries == "zero" else "skipped"
            notes.append(f"{count(counts.missing_from_run, 'qrels query')} not in the run ({verb})")
        if counts.ignored:
            notes.append(f"{count(counts.ignored, 'run query')} without judgments ignored")
        if counts.tied_pairs:
            notes.append(
                f"{count(counts.tied_pairs, 'tied-score pair')} ordered by doc id descending"
            )
        print(f"{run}: " + "; ".join(notes), file=sys.stderr)
    if result.num_reused:
        print(
            f"{result.num_reused:,} of {count(len(result.rows), 'result')} reused from storage "
            "(--recompute to compute again)",
            file=sys.stderr,
        )
    computed = any(not row["reused"] for row in result.rows)
    if len(result.runs) > 1 and computed:  # each run against the first: holes in the
        # judgments, checked where the values are computed (the engine is loaded): an eval
        # of stored values stays a read (the start-up budget); compare -b checks each time
        from ...backends.base import store_of
        from ...judgments.holes import evaluation_holes

        scoring = {"relevance_level": relevance_level, "missing_queries": missing_queries.value}
        for line in evaluation_holes(store_of(wh), result, scoring, DEFAULT_MAX_JUDGED_DROP):
            print(f"Warning: {line}", file=sys.stderr)
    # labels as headers: a value computed with -l 2 shows as AP(rel=2), never as AP
    headers = [result.labels.get(m, m) for m in result.measures]
    if per_query:
        title = f"qrels set {result.qrels!r}, per query"
        print_rows(
            ["run", "query", *headers],
            result.per_query_rows(),
            fmt,
            title=title,
            keys=["run", "query"],
        )
    elif paper:
        sys.stdout.write(result.paper_table(paper, round=rounding or 4, intervals=intervals))
    elif fmt == OutputFormat.table:
        columns, rows, numeric = folded(*result.interval_rows(), headers)
        title = f"qrels set {result.qrels!r}: {level_words(result.level)}"
        print_rows(columns, rows, fmt, title=title, numeric=numeric)
    else:
        print_rows(*result.interval_rows(), fmt)


def _require(ctx: typer.Context, qrels: str | None, runs: list[str] | None) -> None:
    """Typer's own error for a missing QRELS or RUN (they are optional for --ranked-labels)."""
    for value, metavar in ((qrels, "QRELS"), (runs, "RUN...")):
        if not value:
            ctx.fail(f"Missing argument '{metavar}' (or give --ranked-labels FILE).")


def _refuse_with_ranked_labels(
    ctx: typer.Context,
    qrels: str | None,
    runs: list[str] | None,
    name: str | None,
    metadata: dict[str, str],
    mapped: bool,
) -> None:
    """--ranked-labels FILE is the qrels and the run: neither can be given beside it."""
    given = [value for value in (qrels, *(runs or [])) if value]
    if given:
        ctx.fail(
            f"--ranked-labels FILE holds both the qrels and the run: drop {given[0]!r}, or "
            "evaluate QRELS RUN... without --ranked-labels."
        )
    if name is not None or metadata or mapped:
        ctx.fail(
            "--name, --meta, --columns and --qrels-columns apply to QRELS and RUN files; a "
            "--ranked-labels FILE is 'qid Q0 docid rel' lines, its run named after the file."
        )


# --- measures ---------------------------------------------------------------------------------


def measures_command(
    name: str = typer.Argument(
        None, help="Show only this measure (any accepted name, e.g. ndcg_cut_10)."
    ),
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """List the measures rankhouse computes, their parameters and trec_eval names."""
    from ...measures import parse_measures
    from ...measures.docs import COLUMNS, catalogue_rows

    rows = catalogue_rows()
    if name:
        wanted = {m.definition.name for m in parse_measures([name])}
        rows = [row for row in rows if row[0] in wanted]
    print_rows(COLUMNS, rows, fmt, title="Measures")


# --- trec-eval --------------------------------------------------------------------------------


def trec_eval_command(ctx: typer.Context) -> None:
    """Evaluate like trec_eval 10: QRELS RUN with -q -c -n -J -l N -M N -N N -m MEASURE.

    Prints exactly what trec_eval prints (all_trec catalogue included) and exits with its
    exit codes. A run name starting with '-' reads standard input. With --db (or
    $RANKHOUSE_DB) the qrels, the run and every per-query value are stored there, the run
    marked as read by trec-eval; otherwise no file is written.
    """
    from ...trec_eval.runner import main

    state = ctx.find_root().obj
    db = getattr(state, "db", None)
    read_only = bool(getattr(state, "read_only", False))
    raise typer.Exit(main(list(ctx.args), db=db, read_only=read_only))


# --- history ----------------------------------------------------------------------------------


def history_command(
    ctx: typer.Context,
    system: str = typer.Option(None, "--system", "-s", help="Only runs with this system tag."),
    run: str = typer.Option(None, "--run", help="Only this run (name or id)."),
    qrels: str = typer.Option(None, "--qrels", help="Only evaluations against this qrels set."),
    measures: list[str] = typer.Option(
        None,
        "--measure",
        "-m",
        help="Measure columns, repeatable (default: those eval, compare, regress or trec-eval "
        "asked for).",
    ),
    all_measures: bool = flag_option(
        "--all-measures",
        "-a",
        help="Without -m: every stored label, also the precision-recall points a report "
        "stored for its curves.",
    ),
    since: str = typer.Option(
        None,
        "--since",
        metavar="DATE",
        help="Only runs ingested at or after this date (YYYY-MM-DD, UTC).",
    ),
    relevance_level: int = typer.Option(
        1, "--relevance-level", "-l", help="The level the measures were evaluated at."
    ),
    missing_queries: MissingQueries = typer.Option(
        MissingQueries.zero,
        "--missing-queries",
        help="The missing-query policy the measures were evaluated with.",
    ),
    level: float = LEVEL_OPTION,
    drift: bool = flag_option(
        "--drift",
        help="Also each run's newest stored order drift (compare --drift, regress "
        "--max-drift): its baseline, RBO, Kendall's tau, tau_AP and overlap.",
    ),
    judged: bool = flag_option(
        "--judged",
        help="Also the judged share of each run's top k (judged_at_K, k the measures' "
        "cutoffs, 10 without one), as each evaluation stored it: the share the gate's holes "
        "rule reads.",
    ),
    limit: int = typer.Option(
        None,
        "--limit",
        metavar="N",
        min=0,
        help="The newest N runs of each system; 0: every run (default: a table without "
        f"--system or --run shows each system's newest run, with --system its newest "
        f"{RECENT_RUNS}; otherwise every run).",
        show_default=False,
    ),
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Stored evaluations over time: one row per run (newest last), one column per label.

    Without --system or --run a table shows each system's newest run, with --system (and no
    --since) its newest 28, and a note says how many runs are left out; --limit N shows the
    newest N of each system, --limit 0 every run.
    tsv, csv and json print every run (unless --limit says otherwise), written as they are read.

    Columns: ingest time (UTC), run, system tag, qrels set, the run's --meta keys, num_q
    (the queries the means are over), one column per label (the measure with the settings
    it was computed under: -m AP -l 2 is the column AP(rel=2)) with its interval, and gate
    (the newest regress verdict). A table shows each mean with the half-width of its
    interval (Student's t over the per-query values, --level); csv, tsv and json give the
    bounds as LABEL low and LABEL high. History reads; it never evaluates.
    """
    from ...columns import Rows
    from ...history import HISTORY_BATCH_RUNS, history_stream

    wh = open_warehouse(ctx, write=False, reads=True)
    table = limit is None and fmt == OutputFormat.table and run is None
    bounded = table and system is None  # each system's newest run
    recent = table and system is not None and since is None  # a system's newest nights
    newest = 1 if bounded else RECENT_RUNS if recent else (limit or None)
    selection: dict[str, Any] = {
        "system": system,
        "run": run,
        "qrels": qrels,
        "measures": measures or None,
        "since": since,
        "relevance_level": relevance_level,
        "missing_queries": missing_queries.value,
    }
    stream = history_stream(
        wh,
        **selection,
        all_measures=all_measures,
        level=level,
        drift=drift,
        judged=judged,
        newest=newest,
        batch_runs=None if fmt == OutputFormat.table else HISTORY_BATCH_RUNS,
    )
    hidden, measure_columns = stream.hidden, stream.measures
    if hidden:
        print(
            f"note: {count(len(hidden), 'stored label')} not shown ({_span(hidden)}: no command "
            "asked for them, a report stored them for its curves); --all-measures shows them",
            file=sys.stderr,
        )
    if fmt != OutputFormat.table:  # every row as it is read: memory holds one batch
        valued: set[str] = set()
        print_stream(stream.columns, _noting_values(stream, valued), fmt)
        if measures:
            _note_other_settings(wh, measure_columns, valued)
        return
    found = Rows(stream.columns, [row for batch in stream.batches for row in batch])
    if measures:
        valued = {m for m in measure_columns if _has_value(found, m)}
        _note_other_settings(wh, measure_columns, valued)
    rows = [(str(row[0])[:19], *row[1:]) for row in found.rows]  # to the second: csv has all
    columns, rows, numeric = folded(found.columns, rows, measure_columns)
    # measures are numbers even where none is stored (an empty listing aligns nothing)
    numeric = [bool(rows) and is_number for is_number in numeric]
    title = f"history: {level_words(level)}" if measure_columns else "history"
    print_rows(columns, rows, fmt, title=title, keys=["run"], numeric=numeric)
    if newest:
        _note_newest(stream.selected, selection, newest, found, bounded or recent)


def _note_newest(selected, selection: dict[str, Any], newest: int, found, bounded: bool) -> None:
    """On stderr, after the table: how many runs the newest of each system leave out
    (``selected``: the runs and systems selected), and how to see them."""
    runs, systems = selected
    shown = len(set(found.column("run"))) if found.rows else 0
    if runs <= shown:
        return
    which = "newest run" if newest == 1 else f"newest {newest} runs"
    hints = [] if selection["system"] else ["--system S shows a system's runs"]
    hints += ["--since DATE the runs since then"] if bounded and selection["system"] else []
    hints += ["--limit N the newest N of each"] if bounded else []
    hints += ["--limit 0 every run", "--format csv or json every run as it is read"]
    print(
        f"note: the {which} of "
        + (f"each of {systems:,} systems" if systems > 1 else "the system")
        + f" shown, {shown:,} of "
        f"{count(runs, 'run')} evaluated; {', '.join(hints)}",
        file=sys.stderr,
    )


def _noting_values(stream, valued: set[str]):
    """The stream's batches as they come, noting in ``valued`` each measure column that holds
    a value (for :func:`_note_other_settings` once they are written)."""
    where = {name: stream.columns.index(name) for name in stream.measures if name in stream.columns}
    for batch in stream.batches:
        for name in [m for m in where if m not in valued]:
            if any(not is_missing(row[where[name]]) for row in batch):
                valued.add(name)
        yield batch


def _has_value(found, column: str) -> bool:
    return column in found.columns and not all(is_missing(v) for v in found.column(column))


def _note_other_settings(wh, wanted: list[str], valued: set[str]) -> None:
    """On stderr: a requested label (in ``wanted``) without values (not in ``valued``) whose
    measure is stored at other settings."""
    from ...history import other_labels

    empty = [w for w in wanted if w not in valued]
    if not empty:
        return
    for name, others in other_labels(wh, empty).items():
        print(
            f"note: no stored value of {name}; stored at other settings: {', '.join(others)} "
            "(-l / --missing-queries, or -m with the label)",
            file=sys.stderr,
        )


def _span(labels: list[str]) -> str:
    return ", ".join(labels) if len(labels) <= 3 else f"{labels[0]} ... {labels[-1]}"


# --- means with their intervals in a table ----------------------------------------------------

DIGITS = 4
"""Decimals of a mean, and of the half-width beside it."""


def level_words(level: float) -> str:
    """What a folded cell holds, for a table's title: ``mean ±95% CI (t)``."""
    return f"mean ±{level * 100:g}% CI (t)"


def folded(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], measures: Sequence[str]
) -> tuple[list[str], list[list[Any]], list[bool]]:
    """``columns`` and ``rows`` with each measure's ``low`` and ``high`` folded into its cell.

    Args:
        columns: the wide columns: each measure followed by ``<measure> low`` and
            ``<measure> high``.
        rows: the rows, one value per column.
        measures: the measure columns.

    Returns:
        (the columns without the bounds, the rows with the measures as text, which columns
        are numbers).
    """
    from ...columns import INTERVAL_SUFFIXES  # when a table shows them: `--help` needs none

    position = {name: i for i, name in enumerate(columns)}
    bounds = {measure + suffix for measure in measures for suffix in INTERVAL_SUFFIXES}
    kept = [name for name in columns if name not in bounds]
    table = []
    for row in rows:
        line = []
        for name in kept:
            value = row[position[name]]
            if name in measures:
                low = row[position[name + INTERVAL_SUFFIXES[0]]]
                high = row[position[name + INTERVAL_SUFFIXES[1]]]
                value = cell(value, low, high)
            line.append(value)
        table.append(line)
    numeric = [name in measures or name == "num_q" for name in kept]
    return kept, table, numeric


def cell(mean: Any, low: Any, high: Any) -> str:
    """``0.1326 ±0.1335``; the mean alone without an interval; empty without a mean."""
    text = table_value(mean, DIGITS)
    if not text or is_missing(low) or is_missing(high):
        return text
    half = (float(high) - float(low)) / 2
    # a half-width of 16 digits or more is written as a large mean is (1.0000e+174)
    shown = table_value(half, DIGITS) if abs(half) >= 1e16 else f"{half:.{DIGITS}f}"
    return f"{text} ±{shown}"
