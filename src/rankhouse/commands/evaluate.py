"""``rankhouse eval``: evaluate runs against qrels, print and store the results."""

from __future__ import annotations

import sys
from enum import StrEnum

import typer

from .common import (
    FORMAT_OPTION,
    META_OPTION,
    OutputFormat,
    all_files,
    open_warehouse,
    parse_meta,
    print_frame,
)

DEFAULT_MEASURES = ["AP", "nDCG@10", "P@10", "RR", "R@1000"]


class MissingQueries(StrEnum):
    zero = "zero"
    skip = "skip"


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)


def eval_command(
    ctx: typer.Context,
    qrels: str = typer.Argument(..., help="Qrels: a stored name or id, or a file (ingested)."),
    runs: list[str] = typer.Argument(..., help="Runs: stored names or ids, or files (ingested)."),
    measures: list[str] = typer.Option(
        None,
        "--measure",
        "-m",
        help="Measure, repeatable: nDCG@10, AP(rel=2), P_5, ndcg_cut.10,20 ... "
        f"(default: {' '.join(DEFAULT_MEASURES)})",
    ),
    relevance_level: int = typer.Option(
        1,
        "--relevance-level",
        "-l",
        help="Grade from which a document counts as relevant for binary measures.",
    ),
    missing_queries: MissingQueries = typer.Option(
        MissingQueries.zero,
        "--missing-queries",
        help="zero: a qrels query the run did not answer scores as an empty ranking "
        "(trec_eval -c); skip: average over the queries both have.",
    ),
    per_query: bool = typer.Option(False, "--per-query", "-q", help="One row per run and query."),
    recompute: bool = typer.Option(
        False, "--recompute", help="Compute again even when the evaluation is stored."
    ),
    name: str = typer.Option(
        None,
        "--name",
        "-n",
        help="Name of the run file in the warehouse [default: its tag; a file changed since "
        "gets NAME@2, NAME@3...].",
    ),
    meta: list[str] = META_OPTION,
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Evaluate RUNS against QRELS; every evaluation is stored and reused when asked again.

    A run file is ingested first; when its name is held by other content (the file was
    regenerated), it is stored as the next version NAME@2, NAME@3... of the same system.
    """
    metadata = parse_meta(meta)
    wh = open_warehouse(ctx, create=all_files(qrels, *runs))
    result = wh.evaluate(
        qrels,
        runs,
        measures or DEFAULT_MEASURES,
        relevance_level=relevance_level,
        missing_queries=missing_queries.value,
        recompute=recompute,
        name=name,
        meta=metadata or None,
    )
    for run, counts in result.query_counts.items():
        notes = [f"{counts.evaluated} queries evaluated"]
        if counts.missing_from_run:
            verb = "scored as empty rankings" if missing_queries == "zero" else "skipped"
            notes.append(f"{counts.missing_from_run} qrels queries not in the run ({verb})")
        if counts.ignored:
            notes.append(f"{counts.ignored} run queries without judgments ignored")
        if counts.tied_pairs:
            notes.append(f"{counts.tied_pairs} tied-score pairs ordered by doc id descending")
        print(f"{run}: " + "; ".join(notes), file=sys.stderr)
    if result.num_reused:
        print(
            f"{result.num_reused} of {len(result.aggregates)} results reused from storage "
            "(--recompute to compute again)",
            file=sys.stderr,
        )
    if per_query:
        wide = result.per_query.pivot_table(
            index=["run", "query"],
            columns="measure",
            values="value",
            sort=False,
            aggfunc="first",
            dropna=False,
        )
        wide = wide.reindex(columns=list(result.summary.columns[1:])).reset_index()
        wide.columns.name = None
        # labels as headers: a value computed with -l 2 shows as AP(rel=2), never as AP
        print_frame(
            wide.rename(columns=result.labels), fmt, title=f"qrels {result.qrels}, per query"
        )
    else:
        print_frame(
            result.summary.rename(columns=result.labels), fmt, title=f"qrels {result.qrels}"
        )
