"""What every command shares: the warehouse from the global options, and output rendering."""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    import pandas as pd

    from ..warehouse import Warehouse


@dataclass
class CliState:
    """Global options of the root command, handed to sub-commands through ``ctx.obj``."""

    db: str | None = None
    read_only: bool = False
    _warehouse: Warehouse | None = field(default=None, repr=False)


def open_warehouse(
    ctx: typer.Context, *, write: bool = True, create: bool | None = None
) -> Warehouse:
    """The warehouse named by ``--db`` / ``$RANKHOUSE_DB`` / ``./rankhouse.duckdb``.

    Commands that write pass ``write=True``; with ``--read-only`` they fail clearly.
    ``create`` (default: ``write``) says whether a missing warehouse file may be created: a
    command that only reads stored things says "no warehouse at PATH" instead.
    """
    from ..errors import RankhouseError
    from ..warehouse import Warehouse

    state: CliState = ctx.find_root().obj
    if write and state.read_only:
        raise RankhouseError("this command writes to the warehouse; drop --read-only")
    if state._warehouse is None:
        state._warehouse = Warehouse(
            state.db, read_only=state.read_only, create=write if create is None else create
        )
        ctx.find_root().call_on_close(state._warehouse.close)
    return state._warehouse


def all_files(*sources: str | None) -> bool:
    """Whether every given source names an existing file (a command given only files may
    create the warehouse that stores them; one naming stored runs or qrels needs it to exist)."""
    from pathlib import Path

    given = [source for source in sources if source is not None]
    return bool(given) and all(Path(source).is_file() for source in given)


META_OPTION = typer.Option(
    None, "--meta", help="Metadata KEY=VALUE stored with the run (repeatable)."
)


def parse_meta(pairs: list[str] | None) -> dict[str, str]:
    """``--meta KEY=VALUE`` options as a dict; raises InputError on a pair without '='."""
    from ..errors import InputError

    meta = {}
    for pair in pairs or []:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise InputError(
                f"--meta {pair!r} is not KEY=VALUE", hint="write e.g. --meta model=bm25"
            )
        meta[key.strip()] = value
    return meta


class OutputFormat(StrEnum):
    table = "table"
    tsv = "tsv"
    csv = "csv"
    json = "json"


FORMAT_OPTION = typer.Option(OutputFormat.table, "--format", "-f", help="Output format.")


def _cell(value: object, digits: int) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.{digits}f}"
    return str(value)


def print_frame(
    frame: pd.DataFrame,
    fmt: OutputFormat = OutputFormat.table,
    *,
    title: str | None = None,
    digits: int = 4,
    file=None,
) -> None:
    """Print a DataFrame as an aligned rich table, TSV, CSV or JSON records.

    Tables and TSV show floats with ``digits`` decimals; CSV and JSON keep full precision so
    that scripts get the exact doubles.
    """
    out = file or sys.stdout
    if fmt == OutputFormat.json:
        records = json.loads(
            frame.to_json(orient="records", date_format="iso", double_precision=15)
        )
        out.write(json.dumps(records, indent=2) + "\n")
        return
    if fmt == OutputFormat.csv:
        frame.to_csv(out, index=False, float_format="%.17g", lineterminator="\n")
        return
    if fmt == OutputFormat.tsv:
        out.write("\t".join(map(str, frame.columns)) + "\n")
        for row in frame.itertuples(index=False):
            out.write("\t".join(_cell(v, digits) for v in row) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_edge=False, header_style="bold")
    for name in frame.columns:
        numeric = frame[name].dtype.kind in "iuf"
        table.add_column(str(name), justify="right" if numeric else "left")
    for row in frame.itertuples(index=False):
        table.add_row(*(_cell(v, digits) for v in row))
    Console(file=out, width=max(80, Console(file=out).width)).print(table)
