"""``rankhouse sql``: run one SQL query against the warehouse and print the result."""

from __future__ import annotations

import typer

from ..errors import RankhouseError
from .common import open_warehouse
from .output import FORMAT_OPTION, OutputFormat, print_frame


def register(app: typer.Typer) -> None:
    app.command("sql")(sql_command)


def sql_command(
    ctx: typer.Context,
    query: str = typer.Argument(
        ..., help="One SQL statement, e.g. \"SELECT * FROM latest_evaluations\"; '-' reads stdin."
    ),
    write: bool = typer.Option(
        False, "--write", help="Open the warehouse for writing (default: read-only)."
    ),
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Run QUERY on the warehouse, read-only unless --write, and print the rows.

    Views for analysts: run_catalog, qrels_catalog, latest_evaluations, query_values,
    regress_results (see docs/history.md).
    """
    if query == "-":
        query = typer.get_text_stream("stdin").read()
    state = ctx.find_root().obj
    if not write:
        state.read_only = True
    import pandas as pd

    from ..db import database_errors

    wh = open_warehouse(ctx, write=write)
    try:
        with wh.transaction() as conn:
            result = conn.execute_raw(query)
    except database_errors(wh.dialect) as exc:
        reason = str(getattr(exc, "orig", exc))
        refused = "read-only" in reason.lower() or "read only" in reason.lower()
        hint = " (the warehouse is open read-only; pass --write to change it)" if refused else ""
        raise RankhouseError(f"the query failed: {reason}{hint}") from None
    if not result.keys():
        print("OK")
        return
    print_frame(pd.DataFrame(result.all(), columns=result.keys()), fmt)
