"""``rankhouse qrels diff``, ``qrels agreement``, ``qrels raters``, ``qrels build`` and
``rankhouse pool``: judgments as data (:mod:`rankhouse.judgments`). The ``qrels`` commands
join the group that :mod:`.catalog` makes (which also holds ``ingest judgments``)."""

from __future__ import annotations

import sys

import typer

from ...cells import json_text, json_value
from .common import SEED_OPTION, choices, measures_option, open_warehouse
from .output import FORMAT_OPTION, OutputFormat, print_rows


def register(app: typer.Typer) -> None:
    """Attach the judgment commands: two to the ``qrels`` group, ``pool`` to the root."""
    qrels = next(group.typer_instance for group in app.registered_groups if group.name == "qrels")
    _register_versions(qrels)
    _register_agreement(qrels)
    _register_raters(qrels)
    _register_pool(app)


# --- versions and diffs ----------------------------------------------------------------------


def _register_versions(qrels: typer.Typer) -> None:
    """``qrels diff`` (and what versions add to the qrels group)."""

    @qrels.command("diff")
    def qrels_diff(
        ctx: typer.Context,
        a: str = typer.Argument(..., help="The qrels set compared from (name, alias or id)."),
        b: str = typer.Argument(..., help="The qrels set compared to (e.g. dl19@2)."),
        section: _Section = typer.Option(
            None,
            "--section",
            help="Print this section alone (csv and tsv print one: queries by default).",
        ),
        changes: bool = typer.Option(
            False, "--changes", help="Also list each judgment added, removed or changed."
        ),
        fmt: OutputFormat = FORMAT_OPTION,
    ) -> None:
        """What changed from qrels set A to B: per query the judgments added, removed and
        changed, the totals, the grade transitions (rows: A, columns: B), and the stored
        evaluations that used A (docs/judgments.md)."""
        wh = open_warehouse(ctx, write=False, reads=True)
        found = wh.qrels_diff(a, b)
        if section is not None:
            shown = [section.value]
        elif fmt in (OutputFormat.csv, OutputFormat.tsv):
            shown = ["queries"]
        else:
            shown = [s for s in _SECTION_TITLES if changes or s != "changes"]
        if fmt == OutputFormat.json and len(shown) > 1:
            document = {"a": found.a, "b": found.b}
            for name in shown:
                rows = found.rows(name)
                document[name] = [
                    {c: json_value(v) for c, v in zip(rows.columns, row, strict=True)}
                    for row in rows.rows
                ]
            document["totals"] = document["totals"][0]
            print(json_text(document))
            return
        for name in shown:
            rows = found.rows(name)
            title = _SECTION_TITLES[name].format(a=found.a, b=found.b)
            print_rows(rows.columns, rows.rows, fmt, title=title)


_Section = choices("_Section", "queries totals transitions evaluations changes")


#: Each section of ``qrels diff`` and its table's title.
_SECTION_TITLES = {
    "queries": "judgments per query, {a} -> {b}",
    "totals": "totals, {a} -> {b}",
    "transitions": "grade transitions (rows: grade in {a}, columns: grade in {b})",
    "evaluations": "stored evaluations that used {a} (value_b: with {b})",
    "changes": "judgments added, removed and changed, {a} -> {b}",
}


# --- agreement ---------------------------------------------------------------------------------


AgreementPart = choices("AgreementPart", "summary coverage confusion queries rankings swaps shifts")


def _register_agreement(qrels: typer.Typer) -> None:
    """``qrels agreement``."""

    @qrels.command("agreement")
    def qrels_agreement(
        ctx: typer.Context,
        sets: list[str] = typer.Argument(
            None, metavar="QRELS...", help="Two or more stored qrels sets (names or ids)."
        ),
        raters: str = typer.Option(
            None,
            "--raters",
            help="Instead of qrels sets, two or more stored raters: A,B,C (each rater's "
            "newest grade of each pair).",
        ),
        runs: list[str] = typer.Option(
            None,
            "--runs",
            help="Stored runs to evaluate under both sets and rank (two sets): R1,R2,R3 or "
            "repeated.",
        ),
        measures: list[str] = measures_option(
            None,
            help="Measures the runs are ranked by, repeatable or comma-separated (default "
            "nDCG@10 and AP).",
        ),
        show: AgreementPart = typer.Option(
            None,
            "--show",
            help="One part only: summary, coverage, confusion, queries (per query), rankings, "
            "swaps, shifts. Default: every part in a table or JSON; the summary (the rankings "
            "with --runs) in CSV and TSV.",
        ),
        level: float = typer.Option(
            0.95, "--level", help="Confidence level of the correlations' bootstrap intervals."
        ),
        resamples: int = typer.Option(
            1000,
            "--resamples",
            min=0,
            help="Bootstrap resamples of the queries for the correlations' intervals (0: none).",
        ),
        seed: int = SEED_OPTION,
        fmt: OutputFormat = FORMAT_OPTION,
    ) -> None:
        """How qrels sets (or, with --raters, stored raters) agree on the (query, document)
        pairs they all judged: exact agreement, Cohen's kappa (unweighted, linear, quadratic) and
        Krippendorff's ordinal alpha per two sets; Fleiss' kappa and alpha over three or
        more; the confusion matrix of grades (two sets), per-query agreement, and the pairs
        judged by one set only. With --runs, the runs evaluated under both sets (stored) and
        ranked: Kendall's tau, tau_AP and Spearman's rho between the two rankings per
        measure with bootstrap intervals over the queries, the pairs of runs that swap (with
        each set's paired t-test p-value), and each run's mean shift."""
        from ...errors import InputError

        chosen = [r.strip() for item in runs or [] for r in item.split(",") if r.strip()]
        if raters is not None and (sets or chosen):
            raise InputError("--raters compares raters: name no qrels set and no --runs with it")
        # --runs stores what it evaluates; --read-only serves evaluations already stored
        wh = open_warehouse(ctx, write=False, create=False, reads=not chosen)
        found = wh.qrels_agreement(
            sets or None,
            raters=raters,
            runs=chosen or None,
            measures=measures or None,
            level=level,
            resamples=resamples,
            seed=seed,
        )
        parts = _agreement_parts(found)
        if show is not None and show.value not in parts:
            raise InputError(f"--show {show.value}: there is no such part here ({_why(show)})")
        if fmt == OutputFormat.json and show is None:
            document = {
                name: [{c: json_value(v) for c, v in zip(cols, row, strict=True)} for row in rows]
                for name, (cols, rows) in parts.items()
            }
            print(json_text({"sets": list(found.sets), **document}))
            return
        if show is not None:
            wanted = [show.value]
        elif fmt == OutputFormat.table:
            wanted = list(parts)
        else:
            wanted = ["rankings" if chosen else "summary"]
        for name in wanted:
            columns, rows = parts[name]
            keys = [c for c in columns if c in ("sets", "set", "query", "measure", "run", "other")]
            print_rows(columns, rows, fmt, title=f"qrels agreement: {name}", keys=keys[:2] or None)


def _agreement_parts(found) -> dict[str, tuple[list[str], list[list]]]:
    """Each part of an agreement as (columns, rows), in the order a table prints them."""
    from ...judgments import agreement

    def part(columns, rows):
        return list(columns), [[row[c] for c in columns] for row in rows]

    parts = {
        "summary": part(agreement.SUMMARY_COLUMNS, found.summary),
        "coverage": part(agreement.COVERAGE_COLUMNS, found.coverage),
    }
    if found.confusion is not None:
        first, second = found.sets
        columns = [f"{first} \\ {second}", *(str(g) for g in found.grades)]
        rows = [
            [grade, *counts] for grade, counts in zip(found.grades, found.confusion, strict=True)
        ]
        parts["confusion"] = (columns, rows)
    parts["queries"] = part(agreement.QUERY_COLUMNS, found.queries)
    if found.rankings:
        intervals = agreement.INTERVAL_COLUMNS if "kendall_tau_low" in found.rankings[0] else ()
        parts["rankings"] = part([*agreement.RANKING_COLUMNS, *intervals], found.rankings)
        parts["swaps"] = part(agreement.SWAP_COLUMNS, found.swaps)
        parts["shifts"] = part(agreement.SHIFT_COLUMNS, found.shifts)
    return parts


def _why(show) -> str:
    if show.value == "confusion":
        return "the confusion matrix is of two sets"
    return "rankings, swaps and shifts come with --runs"


# --- raters and the qrels built from them ------------------------------------------------------


def _register_raters(qrels: typer.Typer) -> None:
    """``qrels raters`` and ``qrels build``."""

    @qrels.command("raters")
    def qrels_raters(ctx: typer.Context, fmt: OutputFormat = FORMAT_OPTION) -> None:
        """Every stored rater: kind, metadata, judgment sets, judgments (a pair judged again
        counted once), queries, when its newest set was stored (UTC)."""
        from ...judgments.raters import raters

        wh = open_warehouse(ctx, write=False, reads=True)
        found = raters(wh)
        rows = [(*row[:-1], str(row[-1])) for row in found.rows]
        print_rows(found.columns, rows, fmt, title="raters", keys=["rater"])

    @qrels.command("build")
    def qrels_build(
        ctx: typer.Context,
        name: str = typer.Argument(
            ..., help="The qrels set to build (its next version when the name is taken)."
        ),
        from_judgments: bool = typer.Option(
            False, "--from-judgments", help="Build it from the stored raters' judgments."
        ),
        raters: str = typer.Option(
            None, "--raters", help="The raters read: A,B,C (default: every stored rater)."
        ),
        rule: str = typer.Option(
            ...,
            "--rule",
            help="majority (a tie: the lowest tied grade), mean (rounded to the nearest "
            "grade, halfway down), max, or rater:NAME (NAME's grades alone).",
        ),
    ) -> None:
        """Aggregate raters' judgments into a qrels set, recording the rule and the judgment
        sets read (docs/judgments.md, Raters and their judgments)."""
        from ...errors import InputError

        if not from_judgments:
            raise InputError("qrels build reads the raters' judgments: pass --from-judgments")
        wh = open_warehouse(ctx)
        found = wh.build_qrels(name, rule=rule, raters=raters)
        print(found.describe(), file=sys.stderr)

    @qrels.command("builds")
    def qrels_builds(ctx: typer.Context, fmt: OutputFormat = FORMAT_OPTION) -> None:
        """What each qrels set built from judgments read: its rule, and each judgment set
        with its rater."""
        from ...judgments.raters import builds

        found = builds(open_warehouse(ctx, write=False, reads=True))
        print_rows(found.columns, found.rows, fmt, title="qrels built from judgments")


# --- pools -------------------------------------------------------------------------------------


def _register_pool(app: typer.Typer) -> None:
    """``pool``."""
    app.command("pool")(pool_command)


PoolOrder = choices("PoolOrder", "depth rrf")


PoolFormat = choices("PoolFormat", "trec csv jsonl")


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
