"""``rankhouse sql``: run one SQL query against the warehouse and print the result."""

from __future__ import annotations

import pandas as pd
import sqlalchemy as sa
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
    wh = open_warehouse(ctx, write=write)
    try:
        with wh.transaction() as conn:
            result = conn.exec_driver_sql(query)
            if not result.returns_rows:
                print("OK")
                return
            frame = pd.DataFrame(result.fetchall(), columns=list(result.keys()))
    except sa.exc.DBAPIError as exc:
        refused = "read-only" in str(exc.orig).lower() or "read only" in str(exc.orig).lower()
        hint = " (the warehouse is open read-only; pass --write to change it)" if refused else ""
        raise RankhouseError(f"the query failed: {exc.orig}{hint}") from None
    print_frame(frame, fmt)
