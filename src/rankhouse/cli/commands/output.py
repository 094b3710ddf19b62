"""What commands print on stdout: a table that fits the terminal, or TSV, CSV or JSON.

The machine formats carry every value exactly (see :mod:`rankhouse.cells`). A table shows
what fits: printed to a terminal narrower than the table, a table of one row turns
vertical (one line per column) and a longer one is split into several tables of the
columns that fit side by side, each repeating the key column (the run); a column wider
than the terminal wraps. Headers are never cut. Printed anywhere else (a pipe, a file),
the table is whole, however wide.
"""

from __future__ import annotations

import numbers
import os
import sys
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

import typer

from ...cells import _is_bool, is_missing, json_text, json_value, table_value, text_value
from .common import choices

if TYPE_CHECKING:
    import pandas as pd


OutputFormat = choices("OutputFormat", "table tsv csv json")


FORMAT_OPTION = typer.Option(
    OutputFormat.table,
    "--format",
    "-f",
    help="Output format: a table that fits the terminal, or every value exactly in tsv, csv "
    "or json.",
)


def print_frame(
    frame: pd.DataFrame,
    fmt: OutputFormat = OutputFormat.table,
    *,
    title: str | None = None,
    digits: int | Mapping[str, int] = 4,
    keys: Sequence[str] | None = None,
    file: TextIO | None = None,
    emphasis: Mapping[str, Collection[int]] | None = None,
    emphasis_style: str = "bold",
) -> None:
    """Print a DataFrame as a table, TSV, CSV or JSON records (see :func:`print_rows`; the
    frame's index is not printed)."""
    columns = [str(c) for c in frame.columns]
    rows = list(frame.itertuples(index=False, name=None))
    numeric = [
        frame.iloc[:, i].dtype.kind in "iuf" or _is_numeric([row[i] for row in rows])
        for i in range(len(columns))
    ]
    print_rows(
        columns,
        rows,
        fmt,
        title=title,
        digits=digits,
        keys=keys,
        file=file,
        numeric=numeric,
        emphasis=emphasis,
        emphasis_style=emphasis_style,
    )


def print_rows(
    columns: Sequence[str],
    rows: Sequence[Sequence],
    fmt: OutputFormat = OutputFormat.table,
    *,
    title: str | None = None,
    digits: int | Mapping[str, int] = 4,
    keys: Sequence[str] | None = None,
    file: TextIO | None = None,
    numeric: Sequence[bool] | None = None,
    emphasis: Mapping[str, Collection[int]] | None = None,
    emphasis_style: str = "bold",
) -> None:
    """Print rows of plain values as a table, TSV, CSV or JSON records.

    Args:
        columns: the column names.
        rows: the rows, one value per column.
        fmt: the format.
        title: a table's title (the machine formats have none).
        digits: decimals of the numbers in a table: one number, or per column name (4 for
            the others).
        keys: the columns that identify a row, repeated in each part of a table split to fit
            the terminal (default: the first column).
        file: where to print (default stdout).
        numeric: which columns are right-aligned numbers (default: those whose present
            values are all numbers).
        emphasis: column name -> row positions whose cells a table shows in
            ``emphasis_style`` (a rich style, e.g. the best mean of each measure).
    """
    out = file or sys.stdout
    columns = [str(c) for c in columns]
    if fmt == OutputFormat.json:
        records = [
            {name: json_value(v) for name, v in zip(columns, row, strict=True)} for row in rows
        ]
        out.write(json_text(records) + "\n")
    elif fmt in (OutputFormat.csv, OutputFormat.tsv):
        import csv

        writer = csv.writer(
            out, delimiter="," if fmt == OutputFormat.csv else "\t", lineterminator="\n"
        )
        writer.writerow(columns)
        writer.writerows([text_value(v) for v in row] for row in rows)
    else:
        if numeric is None:
            numeric = [_is_numeric([row[i] for row in rows]) for i in range(len(columns))]
        places = [digits if isinstance(digits, int) else digits.get(c, 4) for c in columns]
        cells = [[table_value(v, d) for v, d in zip(row, places, strict=True)] for row in rows]
        key_index = [columns.index(k) for k in keys or columns[:1] if k in columns]
        width = _terminal_width(out)
        styles = None
        if emphasis:
            marked = [set(emphasis.get(c, ())) for c in columns]
            styles = [
                [emphasis_style if r in rows_marked else None for rows_marked in marked]
                for r in range(len(rows))
            ]
        print_table(
            out, columns, cells, numeric, title=title, keys=key_index, width=width, styles=styles
        )


def print_stream(
    columns: Sequence[str],
    batches: Iterable[Sequence[Sequence]],
    fmt: OutputFormat = OutputFormat.table,
    *,
    limit: int | None = None,
    file: TextIO | None = None,
) -> tuple[int, bool]:
    """Print rows that arrive in batches, at most ``limit`` of them (None: every row): TSV,
    CSV and JSON batch by batch as they arrive (the same text :func:`print_rows` writes), a
    table once its rows are in (it needs them all to size its columns). Stops reading the
    batches at the limit.

    Returns:
        (the rows printed, whether the batches held more).
    """
    out = file or sys.stdout
    columns = [str(c) for c in columns]
    taken = _Taken(batches, limit)
    if fmt == OutputFormat.json:
        keys = [json_text(name) for name in columns]
        first = True
        out.write("[")
        for batch in taken:
            for row in batch:
                out.write(("\n" if first else ",\n") + _record(keys, row))
                first = False
        out.write("]\n" if first else "\n]\n")
    elif fmt in (OutputFormat.csv, OutputFormat.tsv):
        import csv

        writer = csv.writer(
            out, delimiter="," if fmt == OutputFormat.csv else "\t", lineterminator="\n"
        )
        writer.writerow(columns)
        for batch in taken:
            writer.writerows([text_value(v) for v in row] for row in batch)
    else:
        print_rows(columns, [row for batch in taken for row in batch], fmt, file=out)
    return taken.count, taken.more


def _record(keys: Sequence[str], row: Sequence) -> str:
    """One record of a JSON array as ``json.dumps(records, indent=2)`` writes it, built from
    its values' compact JSON (the indenting encoder is pure Python: 4x slower)."""
    parts = []
    for key, cell in zip(keys, row, strict=True):
        value = json_value(cell)
        if isinstance(value, dict | list) and value:
            text = json_text(value).replace("\n", "\n    ")
        else:
            text = json_text(value, indent=None)
        parts.append(f"    {key}: {text}")
    return "  {\n" + ",\n".join(parts) + "\n  }"


class _Taken:
    """The batches, cut at ``limit`` rows; ``count`` rows given, ``more`` left behind."""

    def __init__(self, batches: Iterable[Sequence[Sequence]], limit: int | None) -> None:
        self.batches, self.limit = batches, limit
        self.count, self.more = 0, False

    def __iter__(self) -> Iterator[Sequence[Sequence]]:
        for batch in self.batches:
            if self.limit is not None and self.count + len(batch) > self.limit:
                kept = self.limit - self.count
                if kept:
                    self.count += kept
                    yield batch[:kept]
                self.more = True
                return
            self.count += len(batch)
            yield batch


def _is_numeric(values: Sequence) -> bool:
    present = [v for v in values if not is_missing(v)]
    return bool(present) and all(isinstance(v, numbers.Number) and not _is_bool(v) for v in present)


def _terminal_width(out: TextIO) -> int | None:
    """The terminal's width when ``out`` is one (``$COLUMNS`` first), else None: no limit."""
    isatty = getattr(out, "isatty", None)
    if isatty is None or not isatty():
        return None
    from rich.console import Console

    return Console(file=out).width


def _width(text: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(line) for line in text.splitlines()), default=0)


def _table_width(widths: Sequence[int]) -> int:
    # show_edge=False: one space of padding on each side of a cell, one rule between cells
    return sum(w + 2 for w in widths) + max(len(widths) - 1, 0)


def print_table(
    out: TextIO,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    numeric: Sequence[bool],
    *,
    title: str | None = None,
    keys: Sequence[int] = (0,),
    width: int | None = None,
    styles: Sequence[Sequence[str | None]] | None = None,
) -> None:
    """Print text cells as one table, or, wider than ``width``, as parts that fit it
    (``styles``: a rich style or None per cell)."""
    if width is None and _plain_text_is_rich_text(out, headers, rows, title):
        out.write(_plain_table(headers, rows, numeric, title))
        return
    widths = [max([_width(h), *(_width(row[i]) for row in rows)]) for i, h in enumerate(headers)]
    every = list(range(len(headers)))
    if width is None or _table_width(widths) <= width:
        _render(out, headers, rows, numeric, every, widths, title, width, styles)
        return
    if len(rows) == 1:  # one record: one line per column
        vertical = [[h, rows[0][i]] for i, h in enumerate(headers)]
        sizes = [max(_width(h) for h in headers), max(_width(c) for c in rows[0])]
        fields = ["field", "value"]
        sizes = [max(sizes[0], len(fields[0])), max(sizes[1], len(fields[1]))]
        _render(out, fields, vertical, [False, False], [0, 1], sizes, title, width)
        return
    for number, part in enumerate(_parts(widths, keys, width)):
        if number:
            out.write("\n")
        shown_title = title if not number else None
        _render(out, headers, rows, numeric, part, widths, shown_title, width, styles)


def _plain_text_is_rich_text(
    out: TextIO, headers: Sequence[str], rows: Sequence[Sequence[str]], title: str | None
) -> bool:
    """Whether Rich would print this table to ``out`` as plain text that :func:`_plain_table`
    writes identically: no colour (``out`` is no terminal and neither ``FORCE_COLOR`` nor
    ``TTY_COMPATIBLE=1`` says otherwise), box-drawing characters (a UTF encoding) and cells
    of printable ASCII or the few one-column symbols the tables write (``±`` of an interval,
    ``×``, ``–``, ``…``, ``≤``, ``≥``), one column per character, with no space at either end
    (Rich trims some of those)."""
    if os.environ.get("TTY_COMPATIBLE") == "1" or os.environ.get("FORCE_COLOR"):
        return False
    encoding = (getattr(out, "encoding", None) or "utf-8").lower()
    if not encoding.startswith("utf"):
        return False
    texts = [*headers, title or "", *(cell for row in rows for cell in row)]
    return all(_one_column_each(text) and text == text.strip() for text in texts)


#: Symbols outside ASCII that the tables write, one terminal column each (as Rich counts).
ONE_COLUMN_SYMBOLS = frozenset("±×–…≤≥")


def _one_column_each(text: str) -> bool:
    if text.isascii():
        return text.isprintable()
    return all(c in ONE_COLUMN_SYMBOLS or (c.isascii() and c.isprintable()) for c in text)


def _plain_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    numeric: Sequence[bool],
    title: str | None,
) -> str:
    """The table as Rich prints it without colour (``show_edge=False``, heavy head), built
    directly: Rich's layout costs about 0.1 s of imports and rendering for a 100-row table.
    tests/cli/test_output_plain.py holds the two to the same bytes."""
    widths = [max([len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str], rule: str) -> str:
        padded = (
            cell.rjust(w) if right else cell.ljust(w)
            for cell, w, right in zip(cells, widths, numeric, strict=True)
        )
        return rule.join(f" {cell} " for cell in padded) + "\n"

    natural = _table_width(widths)
    lines = []
    if title:
        if len(title) > natural:
            lines.append(f"{title}\n")
        else:
            left = (natural - len(title)) // 2
            lines.append(" " * left + title + " " * (natural - len(title) - left) + "\n")
    lines.append(line(headers, "┃"))
    lines.append("╇".join("━" * (w + 2) for w in widths) + "\n")
    lines.extend(line(row, "│") for row in rows)
    return "".join(lines)


def _parts(widths: Sequence[int], keys: Sequence[int], width: int) -> list[list[int]]:
    """Groups of columns that fit ``width`` side by side, each led by the key columns."""
    keys = [k for k in keys if k < len(widths)]
    parts: list[list[int]] = []
    current = list(keys)
    for index in range(len(widths)):
        if index in keys:
            continue
        candidate = [*current, index]
        if len(current) > len(keys) and _table_width([widths[i] for i in candidate]) > width:
            parts.append(current)
            candidate = [*keys, index]
        current = candidate
    parts.append(current)
    return parts


def _render(
    out: TextIO,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    numeric: Sequence[bool],
    shown: Sequence[int],
    widths: Sequence[int],
    title: str | None,
    width: int | None,
    styles: Sequence[Sequence[str | None]] | None = None,
) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    natural = _table_width([widths[i] for i in shown])
    fits = width is None or natural <= width
    if title and len(title) > natural:  # a title wider than the table goes on its own line
        out.write(f"{title}\n")
        title = None
    table = Table(title=title, show_edge=False, header_style="bold")
    for i in shown:
        table.add_column(
            headers[i],
            justify="right" if numeric[i] else "left",
            no_wrap=fits,
            overflow="fold",
        )
    for r, row in enumerate(rows):
        style = styles[r] if styles is not None else [None] * len(row)
        table.add_row(*(Text(row[i], style=style[i]) if style[i] else row[i] for i in shown))
    console = Console(
        file=out,
        width=natural if fits else width,
        highlight=False,
        emoji=False,
        markup=False,
    )
    console.print(table)


# --- eval's and compare's formats: also the tables of a paper -------------------------------


ResultFormat = choices("ResultFormat", "table tsv csv json markdown latex")


PAPER_FORMATS = frozenset({ResultFormat.markdown, ResultFormat.latex})
"""The formats that print the means as a paper's table (:mod:`rankhouse.present.papers`)."""

RESULT_FORMAT_OPTION = typer.Option(
    ResultFormat.table,
    "--format",
    "-f",
    help="Output format: a table that fits the terminal, every value exactly in tsv, csv or "
    "json, or the means as a paper's table in markdown (GitHub) or latex (booktabs): runs "
    "as rows, the best mean of each measure in bold.",
)
INTERVALS_OPTION = typer.Option(
    False,
    "--intervals",
    help="With --format markdown or latex: each mean's confidence interval in brackets.",
)


def paper_format(fmt: str, intervals: bool, shapes: Sequence[str] = ()) -> str | None:
    """``fmt`` when it is a paper's format (markdown, latex), else None.

    Raises:
        RankhouseError: --intervals without a paper's format, or a paper's format with
            options (``shapes``) that ask for another table.
    """
    from ...errors import RankhouseError

    if fmt not in PAPER_FORMATS:
        if intervals:
            raise RankhouseError(
                "--intervals shapes --format markdown and latex (the table shows the "
                "intervals already; csv, tsv and json give them as columns)"
            )
        return None
    if shapes:
        raise RankhouseError(
            f"--format {fmt} prints the means, one row per run: drop {', '.join(shapes)}"
        )
    return str(fmt)
