"""``rankhouse sql``: run one SQL query against the warehouse and print the result."""

from __future__ import annotations

import typer

from ...errors import DatabaseError, RankhouseError
from .common import open_warehouse
from .output import FORMAT_OPTION, OutputFormat, print_rows

READ_ONLY_HINT = (
    "without --write, sql reads the warehouse only (no changes, files or settings; see "
    "docs/history.md): pass --write to change it"
)


def register(app: typer.Typer) -> None:
    app.command("sql")(sql_command)


def sql_command(
    ctx: typer.Context,
    query: str = typer.Argument(
        ..., help="One SQL statement, e.g. \"SELECT * FROM latest_evaluations\"; '-' reads stdin."
    ),
    write: bool = typer.Option(
        False,
        "--write",
        help="Open the warehouse for writing, with all of DuckDB: changes, files, settings "
        "(default: read the warehouse only).",
    ),
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Run QUERY on the warehouse, read-only unless --write, and print the rows.

    Without --write the query can read the warehouse and nothing else: no change to it, no
    file or network access (COPY TO, EXPORT, ATTACH, read_csv, INSTALL), no SET or PRAGMA
    that changes a setting.

    Views for analysts: run_catalog, qrels_catalog, latest_evaluations, query_values,
    regress_results (see docs/history.md).
    """
    if query == "-":
        query = typer.get_text_stream("stdin").read()
    state = ctx.find_root().obj
    if not write:
        state.read_only = True
    wh = open_warehouse(ctx, write=write, create=False)
    try:
        result = wh.backend.run_statement(query)
    except DatabaseError as exc:
        reason = exc.reason
        hint = f"; {READ_ONLY_HINT}" if not write and _refused(reason) else ""
        raise RankhouseError(f"the query failed: {reason}{hint}") from None
    if not result.keys():
        print("OK")
        return
    print_rows(list(result.keys()), [tuple(row) for row in result.all()], fmt)


#: What DuckDB and PostgreSQL say when the sandbox refused a statement (a syntax error is
#: not a refusal: it gets no hint about --write).
_REFUSALS = ("read-only", "read only", "disabled by configuration", "configuration", "permission")


def _refused(reason: str) -> bool:
    lowered = reason.lower()
    return any(word in lowered for word in _REFUSALS)
