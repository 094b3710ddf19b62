"""``rankhouse qrels diff``, ``rankhouse qrels agreement`` and ``rankhouse pool``: judgments as
data (:mod:`rankhouse.judgments`). The first two join the ``qrels`` group that
:mod:`.catalog` makes."""

from __future__ import annotations

import sys
from enum import StrEnum

import typer


def register(app: typer.Typer) -> None:
    """Attach the judgment commands: two to the ``qrels`` group, ``pool`` to the root."""
    qrels = next(group.typer_instance for group in app.registered_groups if group.name == "qrels")
    _register_versions(qrels)
    _register_agreement(qrels)
    _register_pool(app)


# --- versions and diffs ----------------------------------------------------------------------


def _register_versions(qrels: typer.Typer) -> None:
    """``qrels diff`` (and what versions add to the qrels group)."""


# --- agreement ---------------------------------------------------------------------------------


def _register_agreement(qrels: typer.Typer) -> None:
    """``qrels agreement``."""


# --- pools -------------------------------------------------------------------------------------


def _register_pool(app: typer.Typer) -> None:
    """``pool``."""
    app.command("pool")(pool_command)


class PoolOrder(StrEnum):
    depth = "depth"
    rrf = "rrf"


class PoolFormat(StrEnum):
    trec = "trec"
    csv = "csv"
    jsonl = "jsonl"


def pool_command(
    ctx: typer.Context,
    runs: list[str] = typer.Argument(
        ..., metavar="RUN...", help="Runs: stored names or ids, or run files (not stored)."
    ),
    depth: int = typer.Option(
        ..., "--depth", "-k", min=1, help="Pool each run's top K documents of each query."
    ),
    qrels: str = typer.Option(
        None,
        "--qrels",
        help="Leave out the documents this qrels set judges (a stored name or id, or a file).",
    ),
    order: PoolOrder = typer.Option(
        PoolOrder.depth,
        "--order",
        help="Priority: depth (best rank in any run, then how many runs have the document in "
        "their top K, then doc id) or rrf (reciprocal-rank fusion of the runs first).",
    ),
    rrf_k: float = typer.Option(
        60.0, "--rrf-k", min=0, help="RRF's k: rank r of a run adds 1/(k + r)."
    ),
    budget: int = typer.Option(
        None,
        "--budget",
        min=0,
        help="At most N documents in all, taken by priority across the queries (every "
        "query's first, then every query's second, ...).",
    ),
    budget_per_query: int = typer.Option(
        None, "--budget-per-query", min=0, help="At most N documents of each query."
    ),
    output: str = typer.Option(
        "-", "--output", "-o", help="The file to write (written whole); - for stdout."
    ),
    fmt: PoolFormat = typer.Option(
        PoolFormat.trec,
        "--format",
        "-f",
        help="trec: 'qid docid' lines; csv; jsonl: one {query_id, doc_id, priority, "
        "best_rank, rrf, runs} object a line.",
    ),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="Do not print the per-query pool sizes on stderr."
    ),
) -> None:
    """The documents to judge next: the depth-K pool of RUNs, what --qrels judges left out,
    in priority order, cut to a budget; its sizes per query on stderr."""
    import io

    from ...judgments.pools import PoolOptions, pool, write_pool
    from ...outputs import check_output_path, write_text
    from .common import all_files, open_warehouse

    if output != "-":
        check_output_path(output, "the pool", "pool.txt")
    options = PoolOptions(
        depth,
        qrels=qrels,
        order=order.value,
        rrf_k=rrf_k,
        budget=budget,
        budget_per_query=budget_per_query,
    )
    files_only = all_files(*runs, qrels)
    found = pool(
        None if files_only else open_warehouse(ctx, write=False, reads=True), runs, options
    )
    text = io.StringIO()
    write_pool(found, text, fmt.value)
    if output == "-":
        sys.stdout.write(text.getvalue())
    else:
        write_text(output, text.getvalue(), "the pool")
    if not quiet:
        _print_sizes(found)


def _print_sizes(found) -> None:
    """The per-query sizes, and their totals, as a table on stderr."""
    from .output import print_rows

    totals = [sum(row[i] for row in found.sizes) for i in range(1, len(found.SIZE_COLUMNS))]
    print_rows(found.SIZE_COLUMNS, [*found.sizes, ("all", *totals)], file=sys.stderr)
