"""``rankhouse eval``: evaluate runs against qrels, print and store the results."""

from __future__ import annotations

import sys

import typer

from .common import (
    LEVEL_OPTION,
    META_OPTION,
    MISSING_QUERIES_OPTION,
    QRELS_ARGUMENT,
    RELEVANCE_LEVEL_OPTION,
    RUNS_ARGUMENT,
    MissingQueries,
    all_files,
    open_warehouse,
    parse_meta,
)
from .ingest import RunOrder
from .output import FORMAT_OPTION, OutputFormat, print_rows

DEFAULT_MEASURES = ["AP", "nDCG@10", "P@10", "RR", "R@1000"]


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)


# Not required by Typer: --ranked-labels FILE stands for both (checked in the command, which
# says what Typer would say without the option).
_QRELS = typer.Argument(None, metavar="QRELS", help=QRELS_ARGUMENT.help, show_default=False)
_RUNS = typer.Argument(None, metavar="RUN...", help=RUNS_ARGUMENT.help, show_default=False)


def eval_command(
    ctx: typer.Context,
    qrels: str = _QRELS,
    runs: list[str] = _RUNS,
    measures: list[str] = typer.Option(
        None,
        "--measure",
        "-m",
        metavar="MEASURE",
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
    allow_no_overlap: bool = typer.Option(
        False,
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
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Evaluate RUNS against QRELS; every evaluation is stored and reused when asked again.

    Each mean comes with its interval (Student's t over the per-query values, --level) and
    the number of queries: a table shows the half-width beside the mean (0.1326 ±0.1335);
    csv, tsv and json give the bounds as MEASURE low and MEASURE high.

    A run file is ingested first; when its name is held by other content (the file was
    regenerated), it is stored as the next version NAME@2, NAME@3... of the same system.

    --ranked-labels FILE evaluates a ranking with its labels ('qid Q0 docid rel' lines, each
    query's lines in rank order) instead of QRELS and RUN.
    """
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
        from ...evaluation.inputs import check_argument_order

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
    from ...words import count

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
    elif fmt == OutputFormat.table:
        from .intervals import folded, level_words

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
