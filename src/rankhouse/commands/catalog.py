"""``rankhouse runs list|show|rm`` and ``rankhouse qrels list|rm``: what the warehouse holds."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import typer

from .common import open_warehouse
from .output import FORMAT_OPTION, OutputFormat, print_frame

if TYPE_CHECKING:
    import pandas as pd

_RUN_LIST = ["id", "name", "system_tag", "num_queries", "num_rows", "ingested_at"]
_QRELS_LIST = [
    "id",
    "name",
    "num_queries",
    "num_judgments",
    "num_relevant",
    "min_grade",
    "max_grade",
    "ingested_at",
]


_SHORT_NAMES = {
    "system_tag": "tag",
    "num_queries": "queries",
    "num_rows": "rows",
    "num_judgments": "judgments",
    "num_relevant": "relevant",
}


def _listing(frame: pd.DataFrame, columns: list[str], fmt: OutputFormat) -> pd.DataFrame:
    """The catalogue's columns; a table shows times to the second and grades as one range."""
    shown = frame[columns].rename(columns=_SHORT_NAMES)
    if fmt != OutputFormat.table:
        return shown
    shown = shown.assign(ingested_at=[str(t)[:19] for t in shown["ingested_at"]])
    if "min_grade" in shown:
        grades = [
            f"{lo}..{hi}" for lo, hi in zip(shown["min_grade"], shown["max_grade"], strict=True)
        ]
        shown = shown.drop(columns=["min_grade", "max_grade"])
        shown.insert(shown.columns.get_loc("ingested_at"), "grades", grades)
    return shown


def register(app: typer.Typer) -> None:
    runs = typer.Typer(help="List, show and remove stored runs.")
    qrels = typer.Typer(help="List and remove stored qrels sets.")
    app.add_typer(runs, name="runs")
    app.add_typer(qrels, name="qrels")

    @runs.command("list")
    def runs_list(ctx: typer.Context, fmt: OutputFormat = FORMAT_OPTION) -> None:
        """Every stored run: id, name, tag, queries, rows, ingested_at (UTC)."""
        wh = open_warehouse(ctx, write=False)
        print_frame(_listing(wh.runs(), _RUN_LIST, fmt), fmt, title="runs", keys=["name"])

    @runs.command("show")
    def runs_show(
        ctx: typer.Context,
        name: str = typer.Argument(..., help="Run name or id."),
        fmt: OutputFormat = FORMAT_OPTION,
    ) -> None:
        """One run: its catalogue row, metadata and rows per query."""
        import pandas as pd

        from ..catalog import run_query_counts

        wh = open_warehouse(ctx, write=False)
        run = wh.run(name)
        counts = run_query_counts(wh, run["id"])["num_rows"]
        per_query = {
            "queries": int(counts.size),
            "min_rows_per_query": int(counts.min()) if counts.size else 0,
            "median_rows_per_query": float(counts.median()) if counts.size else 0.0,
            "max_rows_per_query": int(counts.max()) if counts.size else 0,
        }
        if fmt == OutputFormat.json:
            record = {**run, "ingested_at": str(run["ingested_at"]), **per_query}
            record["parse_options"] = json.loads(record["parse_options"])
            print(json.dumps(record, indent=2))
            return
        rows = [(key, run[key]) for key in run if key != "metadata"]
        rows += [(f"metadata.{key}", value) for key, value in run["metadata"].items()]
        rows += list(per_query.items())
        frame = pd.DataFrame([(key, str(value)) for key, value in rows], columns=["field", "value"])
        print_frame(frame, fmt, title=f"run {run['name']!r}")

    @runs.command("rm")
    def runs_rm(ctx: typer.Context, name: str = typer.Argument(..., help="Run name or id.")):
        """Delete a run, its rows and its stored evaluations."""
        from ..catalog import remove_run

        row = remove_run(open_warehouse(ctx, create=False), name)
        print(f"removed run {row['name']!r} (id {row['id']})", file=sys.stderr)

    @qrels.command("list")
    def qrels_list(ctx: typer.Context, fmt: OutputFormat = FORMAT_OPTION) -> None:
        """Every stored qrels set: id, name, queries, judgments, grades, ingested_at (UTC)."""
        wh = open_warehouse(ctx, write=False)
        print_frame(
            _listing(wh.qrels_sets(), _QRELS_LIST, fmt), fmt, title="qrels sets", keys=["name"]
        )

    @qrels.command("rm")
    def qrels_rm(ctx: typer.Context, name: str = typer.Argument(..., help="Qrels name or id.")):
        """Delete a qrels set, its judgments and the evaluations made with it."""
        from ..catalog import remove_qrels

        row = remove_qrels(open_warehouse(ctx, create=False), name)
        print(f"removed qrels set {row['name']!r} (id {row['id']})", file=sys.stderr)
