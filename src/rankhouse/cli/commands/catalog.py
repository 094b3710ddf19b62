"""What the warehouse holds: ``rankhouse ingest qrels|run FILE`` stores qrels and runs (parse
options, call the library, say what happened); ``rankhouse runs list|show|rm`` and ``rankhouse
qrels list|rm`` list, show and remove them."""

from __future__ import annotations

import json
import sys

import typer

from ...columns import Rows
from ...errors import RankhouseError, count
from .common import META_OPTION, RunOrder, choices, open_warehouse, parse_meta
from .output import FORMAT_OPTION, OutputFormat, print_rows


def register(app: typer.Typer) -> None:
    _register_ingest(app)
    _register_lists(app)
    _register_retention(app)


# --- ingest -----------------------------------------------------------------------------------


QrelsFormat = choices("QrelsFormat", "trec csv tsv parquet jsonl")


#: A run's formats: the qrels' and MS MARCO's headerless ``qid pid rank``.
SourceFormat = choices("SourceFormat", "trec csv tsv parquet jsonl msmarco")


_NAME = typer.Option(None, "--name", "-n", help="Name in the warehouse (default: from the file).")
_COLUMNS = typer.Option(
    None,
    "--columns",
    help="Column mapping for tabular files, e.g. qid=QUERY_KEY,docid=DOC_KEY,score=SCORE.",
)
_FORMAT = typer.Option(
    None, "--format", help="Input format (default: from the extension, .gz stripped; else trec)."
)
DELIMITER_OPTION = typer.Option(
    None,
    "--delimiter",
    help="Field delimiter of a csv/tsv file: , ; | or tab (default: sniffed from the header).",
)
_REPLACE = typer.Option(
    False, "--replace", help="Overwrite what holds the same name with different content."
)


def _register_ingest(app: typer.Typer) -> None:
    ingest = typer.Typer(
        help="Ingest qrels, runs or a rater's judgments (TREC text, CSV, TSV, Parquet, JSON lines)."
    )
    app.add_typer(ingest, name="ingest")

    @ingest.command("qrels")
    def ingest_qrels(
        ctx: typer.Context,
        file: str = typer.Argument(
            ...,
            help="Qrels file (plain or .gz), or irds:<dataset id> (read from ir_datasets' "
            "local cache; named after the id).",
        ),
        name: str = _NAME,
        columns: str = _COLUMNS,
        format: QrelsFormat = _FORMAT,
        delimiter: str = DELIMITER_OPTION,
        replace: bool = _REPLACE,
        intents: bool = typer.Option(
            False,
            "--intents",
            help="Diversity qrels: 'qid intent docid grade' (the second field the intent); "
            "a table's intent column is intent or subtopic.",
        ),
    ) -> None:
        """Store relevance judgments (TREC: 'qid iter docid rel')."""
        wh = open_warehouse(ctx)
        result = wh.ingest_qrels(
            file,
            name=name,
            columns=columns,
            format=format.value if format else None,
            delimiter=delimiter,
            replace=replace,
            intents=intents,
        )
        print(result.describe(), file=sys.stderr)

    @ingest.command("run")
    def ingest_run(
        ctx: typer.Context,
        file: str = typer.Argument(
            ...,
            help="Run file (plain or .gz), one run per tag; or irds:<dataset id> (its scored "
            "documents, read from ir_datasets' local cache; named after the id).",
        ),
        name: str = _NAME,
        columns: str = _COLUMNS,
        format: SourceFormat = _FORMAT,
        delimiter: str = DELIMITER_OPTION,
        order: RunOrder = typer.Option(
            RunOrder.score, "--order", help="Rank by score, or take the given ranks (score=-rank)."
        ),
        meta: list[str] = META_OPTION,
        replace: bool = _REPLACE,
    ) -> None:
        """Store a run (TREC: 'qid Q0 docid rank score tag'); several tags give several runs."""
        metadata = parse_meta(meta)
        wh = open_warehouse(ctx)
        results = wh.ingest_run(
            file,
            name=name,
            columns=columns,
            format=format.value if format else None,
            delimiter=delimiter,
            order=order.value,
            meta=metadata,
            replace=replace,
        )
        for result in results:
            print(result.describe(), file=sys.stderr)

    _register_ingest_judgments(ingest)


RaterKind = choices("RaterKind", "human llm")


def _register_ingest_judgments(ingest: typer.Typer) -> None:
    """``ingest judgments``: one rater's judgments (docs/judgments.md, Raters and their
    judgments)."""

    @ingest.command("judgments")
    def ingest_judgments(
        ctx: typer.Context,
        file: str = typer.Argument(
            ..., help="Judgments: TREC qrels, or csv/tsv/parquet/jsonl (plain or .gz)."
        ),
        rater: str = typer.Option(..., "--rater", help="The rater who made them."),
        kind: RaterKind = typer.Option(
            None, "--kind", help="The rater's kind, stored with a new rater."
        ),
        meta: list[str] = typer.Option(
            None,
            "--meta",
            metavar="KEY=VALUE",
            help="Metadata stored with a new rater (model=..., prompt=...), repeatable.",
        ),
        columns: str = typer.Option(
            None,
            "--columns",
            help="Column mapping for tabular files, e.g. qid=Q,docid=D,rel=G,time=T,rationale=R.",
        ),
        format: QrelsFormat = _FORMAT,
        delimiter: str = DELIMITER_OPTION,
    ) -> None:
        """Store a rater's judgments (query, document, grade, and a tabular file's time and
        rationale columns), once per content; a rater's kind and metadata are fixed when
        it is first stored."""
        metadata = parse_meta(meta)
        wh = open_warehouse(ctx)
        result = wh.ingest_judgments(
            file,
            rater=rater,
            kind=kind.value if kind else None,
            meta=metadata,
            columns=columns,
            format=format.value if format else None,
            delimiter=delimiter,
        )
        print(result.describe(), file=sys.stderr)


# --- runs and qrels ---------------------------------------------------------------------------

_RUN_LIST = [
    "id",
    "name",
    "system_tag",
    "num_queries",
    "num_rows",
    "ingested_at",
    "aliases",
    "pruned_at",
]
_QRELS_LIST = [
    "id",
    "name",
    "num_queries",
    "num_judgments",
    "num_relevant",
    "min_grade",
    "max_grade",
    "ingested_at",
    "aliases",
    "version",
    "follows",
]


_SHORT_NAMES = {
    "system_tag": "tag",
    "num_queries": "queries",
    "num_rows": "rows",
    "num_judgments": "judgments",
    "num_relevant": "relevant",
    "pruned_at": "pruned",
}


def _print_listing(found: Rows, columns: list[str], fmt: OutputFormat, title: str) -> None:
    """The catalogue's columns; a table shows times to the second and grades as one range."""
    values = [found.column(name) for name in columns]
    if fmt == OutputFormat.table:
        at = columns.index("ingested_at")
        values[at] = [str(time)[:19] for time in values[at]]
        if "pruned_at" in columns:  # "pruned 2026-03-01": the rows column says what it had
            at = columns.index("pruned_at")
            values[at] = [f"pruned {str(time)[:10]}" if time else "" for time in values[at]]
        if "min_grade" in columns:
            low, high = columns.index("min_grade"), columns.index("max_grade")
            grades = [f"{lo}..{hi}" for lo, hi in zip(values[low], values[high], strict=True)]
            kept = [i for i in range(len(columns)) if i not in (low, high)]
            columns = [columns[i] for i in kept]
            values = [values[i] for i in kept]
            at = columns.index("ingested_at")
            columns.insert(at, "grades")
            values.insert(at, grades)
    names = [_SHORT_NAMES.get(name, name) for name in columns]
    rows = list(zip(*values, strict=True))
    print_rows(names, rows, fmt, title=title, keys=["name"])


def _register_lists(app: typer.Typer) -> None:
    runs = typer.Typer(help="List, show, remove, prune and restore stored runs.")
    qrels = typer.Typer(
        help="Stored qrels sets: list and remove them, their versions' diffs, agreement, raters "
        "and the sets built from their judgments."
    )
    app.add_typer(runs, name="runs")
    app.add_typer(qrels, name="qrels")

    @runs.command("list")
    def runs_list(
        ctx: typer.Context,
        fmt: OutputFormat = FORMAT_OPTION,
        limit: int = typer.Option(
            None, "--limit", min=1, help="Only the newest N runs (the end of the whole list)."
        ),
    ) -> None:
        """Every stored run: id, name, tag, queries, rows, ingested_at (UTC), aliases (its
        other names)."""
        from ...catalog import run_rows

        wh = open_warehouse(ctx, write=False, reads=True)
        _print_listing(run_rows(wh, limit), _RUN_LIST, fmt, "runs")

    @runs.command("show")
    def runs_show(
        ctx: typer.Context,
        name: str = typer.Argument(..., help="Run name, alias or id."),
        fmt: OutputFormat = FORMAT_OPTION,
    ) -> None:
        """One run: its catalogue row, aliases, metadata and rows per query."""
        import statistics

        from ...catalog import other_names, pruned_rows, query_count_rows

        wh = open_warehouse(ctx, write=False, reads=True)
        run = wh.run(name)
        run["aliases"] = other_names(wh, "run", run["id"])
        if run["pruned_at"] is None:
            counts = query_count_rows(wh, run["id"]).column("num_rows")
            per_query = {
                "queries": len(counts),
                "min_rows_per_query": min(counts, default=0),
                "median_rows_per_query": float(statistics.median(counts)) if counts else 0.0,
                "max_rows_per_query": max(counts, default=0),
            }
        else:  # its rows are gone: what it had, and where they went
            pruned = pruned_rows(wh, run["id"])
            per_query = {"pruned_rows": pruned["num_rows"], "archive": pruned["archive"] or ""}
            run["pruned_at"] = str(run["pruned_at"])[:19]
        if fmt == OutputFormat.json:
            record = {**run, "ingested_at": str(run["ingested_at"]), **per_query}
            record["parse_options"] = json.loads(record["parse_options"])
            print(json.dumps(record, indent=2))
            return
        rows = [(key, run[key]) for key in run if key not in ("metadata", "aliases")]
        rows += [("aliases", ", ".join(run["aliases"]))]
        rows += [(f"metadata.{key}", value) for key, value in run["metadata"].items()]
        rows += list(per_query.items())
        print_rows(
            ["field", "value"],
            [(key, str(value)) for key, value in rows],
            fmt,
            title=f"run {run['name']!r}",
            numeric=[False, False],
        )

    @runs.command("rm")
    def runs_rm(ctx: typer.Context, name: str = typer.Argument(..., help="Run name, alias or id.")):
        """Delete a run, its rows, its aliases and its stored evaluations; given an alias,
        the alias alone (the run stays)."""
        from ...catalog import remove_run

        row = remove_run(open_warehouse(ctx, create=False), name)
        print(_removed("run", row), file=sys.stderr)

    @qrels.command("list")
    def qrels_list(ctx: typer.Context, fmt: OutputFormat = FORMAT_OPTION) -> None:
        """Every stored qrels set: id, name, queries, judgments, grades, ingested_at (UTC),
        aliases (its other names), version and follows (its lineage: the version it
        follows)."""
        from ...catalog import qrels_rows

        wh = open_warehouse(ctx, write=False, reads=True)
        _print_listing(qrels_rows(wh), _QRELS_LIST, fmt, "qrels sets")

    @qrels.command("rm")
    def qrels_rm(
        ctx: typer.Context,
        name: str = typer.Argument(..., help="Qrels name, alias or id."),
        yes: bool = typer.Option(
            False, "--yes", "-y", help="Remove without asking (needed where no terminal can ask)."
        ),
    ):
        """Delete a qrels set, its judgments, its aliases, and the evaluations and gate
        checks made with it (the runs stay). On a terminal it asks first, saying what goes
        with it. Given an alias, it removes the alias alone, without asking."""
        from ...catalog import qrels_dependents, remove_qrels

        wh = open_warehouse(ctx, create=False)
        if not yes and "alias" not in (found := qrels_dependents(wh, name)):
            what = f"qrels set {found['name']!r} (id {found['id']})"
            if not sys.stdin.isatty():
                raise RankhouseError(
                    f"removing {what} deletes {_dependents(found)}; pass --yes to remove it "
                    "(there is no terminal to ask)"
                )
            if not _confirmed(f"Remove {what} with {_dependents(found)}?"):
                print("nothing removed", file=sys.stderr)
                raise typer.Exit(1)
        row = remove_qrels(wh, name)
        print(_removed("qrels set", row), file=sys.stderr)


def _removed(what: str, row: dict) -> str:
    """What ``runs rm`` / ``qrels rm`` removed: ``removed run 'x' (id 3)`` with its aliases
    (a qrels set with what went with it), or ``removed alias 'y' of run 'x' (id 3)``."""
    if "removed_alias" in row:
        return (
            f"removed alias {row['removed_alias']!r} of {what} {row['name']!r} (id {row['id']}); "
            f"the {what} stays"
        )
    said = f"removed {what} {row['name']!r} (id {row['id']})"
    if what != "run":
        said += f" with {_dependents(row)}"
    elif row["aliases"]:
        said += f" and {_aliases(row['aliases'])}"
    return said


def _aliases(names: list[str]) -> str:
    """``its alias 'a'``, ``its aliases 'a', 'b'``."""
    return f"its alias{'es' if len(names) > 1 else ''} {', '.join(map(repr, names))}"


def _dependents(found: dict) -> str:
    """What goes with a qrels set: ``144 judgments, 12 evaluations of 2 runs and 6 gate
    checks`` (the runs themselves stay), and its aliases when it has some."""
    evaluations = count(found["evaluations"], "evaluation")
    if found["evaluations"]:
        evaluations += f" of {count(found['evaluated_runs'], 'run')}"
    checks = count(found["checks"], "gate check")
    if found.get("aliases"):
        return (
            f"{count(found['num_judgments'], 'judgment')}, {evaluations}, {checks} and "
            f"{_aliases(found['aliases'])}"
        )
    return f"{count(found['num_judgments'], 'judgment')}, {evaluations} and {checks}"


def _confirmed(question: str) -> bool:
    """Ask on the terminal (stderr: stdout carries data only); yes only for y or yes."""
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


# --- retention: prune, restore, compact -------------------------------------------------------


def _register_retention(app: typer.Typer) -> None:
    runs = next(group.typer_instance for group in app.registered_groups if group.name == "runs")

    @runs.command("prune")
    def runs_prune(
        ctx: typer.Context,
        keep_last: int = typer.Option(
            None, "--keep-last", help="Keep the rows of each system's newest N runs."
        ),
        older_than: float = typer.Option(
            None, "--older-than", help="Prune only runs ingested more than DAYS days ago."
        ),
        system: list[str] = typer.Option(
            None, "--system", "-s", help="Only this system tag (repeatable; default: all)."
        ),
        archive: str = typer.Option(
            None,
            "--archive",
            help="Folder to write each run's rows to (Parquet, zstd) before deleting them; "
            "`runs restore` reads them back.",
        ),
        dry_run: bool = typer.Option(False, "--dry-run", help="Say what would go; change nothing."),
        yes: bool = typer.Option(
            False, "--yes", "-y", help="Prune without asking (needed where no terminal can ask)."
        ),
        fmt: OutputFormat = FORMAT_OPTION,
    ) -> None:
        """Delete the rows of old runs; every evaluation, per-query value, gate check and
        drift value stays. A run goes when it meets every criterion given; a system's gate
        references are kept. On a DuckDB file, `rankhouse compact` then returns the space."""
        from ...catalog.retention import PRUNE_COLUMNS

        wh = open_warehouse(ctx, write=not dry_run, create=False)
        policy = {"keep_last": keep_last, "older_than": older_than, "system": system or None}
        planned = wh.prune(**policy, archive=archive, dry_run=True)
        if not (dry_run or yes) and planned.pruned:
            if not sys.stdin.isatty():
                raise RankhouseError(
                    f"this policy {planned.describe()}; pass --yes to prune them (there is no "
                    "terminal to ask), or --dry-run to list them"
                )
            _print_pruned(planned, PRUNE_COLUMNS, fmt)
            if not _confirmed(f"Prune the rows of {count(len(planned.pruned), 'run')}?"):
                print("nothing pruned", file=sys.stderr)
                raise typer.Exit(1)
        done = wh.prune(**policy, archive=archive) if planned.pruned and not dry_run else planned
        done.dry_run = dry_run
        _print_pruned(done, PRUNE_COLUMNS, fmt)
        print(done.describe(), file=sys.stderr)
        if done.reclaimed:
            print(done.reclaimed, file=sys.stderr)
        elif done.pruned and not dry_run and wh.dialect == "duckdb":
            print("the file keeps its size until `rankhouse compact`", file=sys.stderr)

    @runs.command("restore")
    def runs_restore(
        ctx: typer.Context,
        name: str = typer.Argument(..., help="Run name, alias or id."),
        archive: str = typer.Option(
            None, "--archive", help="The archive folder or file (default: where prune wrote it)."
        ),
    ) -> None:
        """Put a pruned run's rows back from its archive, checked against the hash the
        catalogue recorded when they were pruned."""
        row = open_warehouse(ctx, create=False).restore(name, archive=archive)
        print(
            f"restored {count(row['restored_rows'], 'row')} of run {row['name']!r} "
            f"(id {row['id']}) from {row['archive']}",
            file=sys.stderr,
        )

    @app.command("compact")
    def compact(ctx: typer.Context) -> None:
        """Give the space of deleted rows back to the file system: a DuckDB file is copied
        into a new file that replaces it (safe if killed: the old file stays until the
        rename); a PostgreSQL server's run rows are vacuumed."""
        done = open_warehouse(ctx, create=False).compact()
        if done.before is None:
            print(done.said, file=sys.stderr)
            return
        print(
            f"{done.said}: {done.before / 1e6:,.1f} MB -> {done.after / 1e6:,.1f} MB",
            file=sys.stderr,
        )


def _print_pruned(result, columns: tuple[str, ...], fmt: OutputFormat) -> None:
    """The runs a prune weighed, one row each (the archive column only when there is one)."""
    rows = [tuple("" if value is None else value for value in row) for row in result.rows]
    title = "runs whose rows would go (bytes: an estimate)" if result.dry_run else "runs pruned"
    print_rows(list(columns), rows, fmt, title=title, keys=["run"])
