"""The reference TREC reader: text split into lines and fields in Python, by the exact rules
every other reader agrees with.

The rules (docs/ingest.md, "Reading rules"): a UTF-8 byte order mark at the start of the file
is dropped; LF, CRLF and a lone CR each end a line (so ``\\n\\r`` is a line end followed by an
empty line) and line numbers count every line end; fields are separated by runs of space, tab,
vertical tab and form feed; every other byte belongs to a field. Blank lines and lines whose
first field starts with ``#`` are skipped.

The SQL readers (:mod:`.sql_stage`, :mod:`.direct`) apply the same rules to the files they take
(files without a CR, a BOM or a ``\\x01`` byte); this module reads the others, line by line into
the stage, and gives :mod:`.locate` the lines of any file, to name the line of a problem the bulk
checks found.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...duck import register
from ...errors import InputError
from ...lazy import pyarrow as pa
from ..files import open_decompressed
from ..sources import Source
from ..staging import STAGE

BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n|\r|\n")
_CHUNK = 1 << 20
_BATCH = 200_000
_TABLE = "_rankhouse_exact_lines"


def physical_lines(stream) -> Iterator[bytes]:
    """Every line of the binary ``stream`` (without its line end), BOM dropped, in order."""
    pending = b""
    first = True
    while chunk := stream.read(_CHUNK):
        data = pending + chunk
        if first:
            if len(data) < len(BOM) and BOM.startswith(data):
                pending = data  # too short to tell yet
                continue
            data = data.removeprefix(BOM)
            first = False
        # a CR at the end of the chunk may be the first half of a CRLF
        held = b"\r" if data.endswith(b"\r") else b""
        parts = _LINE_END.split(data[: len(data) - len(held)])
        pending = parts.pop() + held
        yield from parts
    if first:
        pending = pending.removeprefix(BOM)
    if pending:
        parts = _LINE_END.split(pending)
        if parts[-1] == b"":
            parts.pop()
        yield from parts


def numbered_fields(source: Source) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of every data line of ``source``.

    Raises:
        InputError: bytes that are not UTF-8 (naming the line; comment lines included), or a
            damaged compressed file.
    """
    with open_decompressed(source.data_path, source.label) as stream:
        for number, raw in enumerate(physical_lines(stream), start=1):
            fields = raw.split()  # bytes.split: space, \t, \x0b, \x0c (no \r or \n are left)
            if not fields:
                continue
            try:
                if fields[0].startswith(b"#"):
                    raw.decode("utf-8")
                    continue
                yield number, [field.decode("utf-8") for field in fields]
            except UnicodeDecodeError:
                raise _not_utf8(source, number, raw) from None


def _not_utf8(source: Source, number: int, raw: bytes) -> InputError:
    try:
        raw.decode("utf-8")
        column = 0
    except UnicodeDecodeError as exc:
        column = exc.start + 1
    return InputError(
        f"bytes that are not UTF-8 at column {column}",
        source=source.label,
        line=number,
        hint="convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)",
    )


class Unreadable(Exception):
    """The exact reader met bytes it cannot read (not UTF-8, damaged compression)."""


def stage_exactly(duck, source: Source, columns_sql: str) -> None:
    """Fill the stage from ``source`` read line by line with the rules above.

    ``columns_sql`` is the stage's SELECT list over text columns ``c1``..``c6`` (NULL where a
    line has fewer fields) and ``nf`` (the number of fields), as for the SQL readers, so that
    values are checked by the same SQL whichever reader split the line.
    """
    duck.execute(f"DROP TABLE IF EXISTS {STAGE}")
    created = False
    batch: list[list[str]] = []

    def flush() -> None:
        nonlocal created
        width = 6
        table = pa.table(
            {
                **{
                    f"c{i + 1}": pa.array(
                        [fields[i] if i < len(fields) else None for fields in batch],
                        type=pa.string(),
                    )
                    for i in range(width)
                },
                "nf": pa.array([len(fields) for fields in batch], type=pa.int64()),
            }
        )
        register(duck, _TABLE, table)
        try:
            if created:
                duck.execute(f"INSERT INTO {STAGE} SELECT {columns_sql} FROM {_TABLE}")
            else:
                duck.execute(f"CREATE TEMP TABLE {STAGE} AS SELECT {columns_sql} FROM {_TABLE}")
                created = True
        finally:
            duck.unregister(_TABLE)
        batch.clear()

    try:
        for _, fields in numbered_fields(source):
            batch.append(fields)
            if len(batch) >= _BATCH:
                flush()
    except InputError as exc:
        # like DuckDB's readers: the caller's rescan names the first problem in line order
        raise Unreadable(str(exc)) from exc
    flush()


def starts_with_bom(source: Source) -> bool:
    """Whether the (decompressed) file starts with a UTF-8 byte order mark."""
    with open_decompressed(source.data_path, source.label) as stream:
        return stream.read(len(BOM)) == BOM
