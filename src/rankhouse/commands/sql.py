"""``rankhouse sql``: run one SQL query against the warehouse and print the result."""

from __future__ import annotations

import pandas as pd
import sqlalchemy as sa
import typer

from ..errors import RankhouseError
from .common import FORMAT_OPTION, OutputFormat, open_warehouse, print_frame

READ_ONLY_HINT = (
    "without --write, sql reads the warehouse only (no changes, files or settings; "
    "see docs/history.md)"
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
        with wh.transaction() as conn:
            result = conn.exec_driver_sql(query)
            if not result.returns_rows:
                print("OK")
                return
            frame = pd.DataFrame(result.fetchall(), columns=list(result.keys()))
    except sa.exc.DBAPIError as exc:
        hint = "" if write else f"; {READ_ONLY_HINT}"
        reason = str(exc.orig).strip().splitlines()[0]  # DuckDB adds the query and a caret
        raise RankhouseError(f"the query failed: {reason}{hint}") from None
    print_frame(frame, fmt)
