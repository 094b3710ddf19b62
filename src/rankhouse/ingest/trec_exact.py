"""TREC text by the reference rules, line by line in Python: the exact reader, the rescan that
names the first bad line, and a ranked file with labels.

The rules (docs/ingest.md, "Reading rules"): a UTF-8 byte order mark at the start of the file
is dropped; LF, CRLF and a lone CR each end a line (so ``\\n\\r`` is a line end followed by an
empty line) and line numbers count every line end; fields are separated by runs of space, tab,
vertical tab and form feed; every other byte belongs to a field. Blank lines and lines whose
first field starts with ``#`` are skipped.

The SQL readers (:mod:`.trec`) apply the same rules to the files they take (files without a
CR, a BOM or a ``\\x01`` byte); this module reads the others, line by line into the stage. The
SQL readers check millions of rows at once, which says that a row is bad, not where it was in
the file: only then is the file rescanned here (:func:`locate_problem`), to name the first bad
line and field, or the two lines of a repeated query and document, with a hint.

A ranked file with labels holds a ranking and its judgments in one file, as course material and
some shared tasks hand them out (:func:`read_ranked_labels`). Each line is ``qid Q0 docid rel``
(the shape of a TREC qrels line), and the order of a query's lines is the ranking: its first
line is rank 1. One file gives both inputs of an evaluation:

* the qrels: ``(qid, docid, rel)`` of every line;
* the run: each query's documents at their line position, scored so that trec_eval's order
  (score descending) is the line order (the first of a query's ``n`` lines scores ``n``, the
  last 1: no ties), tagged with the file's base name.

A document listed twice for a query is refused (it would be both ranked twice and judged
twice), as are a line without 4 fields and a label that is not an integer, each naming the
file, the line and the field.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..duck import register
from ..errors import Either, InputError, Message, Option, count
from ..lazy import pandas as pd
from ..lazy import pyarrow as pa
from .files import open_decompressed
from .sources import Source, base_name, open_source
from .staging import STAGE, duplicate_error, integer_problem, score_problem

if TYPE_CHECKING:
    import pandas


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


# --- naming the first bad line --------------------------------------------------------------------


def locate_problem(source: Source, kind: str, order: str) -> InputError | None:
    """The first bad line of ``source`` as an InputError (None if the rescan finds none)."""
    any_line = False
    for number, fields in numbered_fields(source):
        any_line = True
        problem = _line_problem(source, kind, order, number, fields)
        if problem is not None:
            return problem
    if not any_line:
        return empty_error(source)
    return None


def empty_error(source: Source) -> InputError:
    """The error for a file without a data line."""
    return InputError(
        "no data lines: the file is empty or holds only comments and blank lines",
        source=source.label,
    )


def _line_problem(
    source: Source, kind: str, order: str, number: int, fields: list[str]
) -> InputError | None:
    where = {"source": source.label, "line": number}
    if kind == "qrels":
        if len(fields) != 4:
            hint = "a qrels line is 'qid iter docid rel'"
            if len(fields) >= 6:
                hint += "; this looks like a run line: use 'rankhouse ingest run'"
            return InputError(f"expected 4 fields, found {len(fields)}", **where, hint=hint)
        problem = integer_problem(fields[3])
        if problem:
            return InputError(
                f"grade {problem}",
                **where,
                field="rel",
                hint="the 4th field of a qrels line must be an integer grade such as 0, 1, 2 or -1",
            )
        return None
    least = 5 if order == "rank" else 6
    if len(fields) < least:
        hint = "a run line is 'qid Q0 docid rank score tag'"
        if order == "rank":
            hint = Message(
                hint, " (or 'qid Q0 docid rank tag' under ", Option("order", "rank"), ")"
            )
        if len(fields) == 4:
            hint = Message(
                hint,
                "; this looks like a qrels line: ",
                Either("ingest it with Warehouse.ingest_qrels", "use 'rankhouse ingest qrels'"),
                "; a ranking with its labels (the line order is the ranking) is evaluated with ",
                Either(
                    "rankhouse.evaluate_ranked_labels(FILE, measures)",
                    "'rankhouse eval --ranked-labels FILE'",
                ),
            )
        elif len(fields) == 5:
            hint = Message(hint, "; a line without a score needs ", Option("order", "rank"))
        elif len(fields) == 3 and all(f.isascii() and f.isdigit() for f in fields):
            hint = Message(
                hint,
                "; this looks like MS MARCO's 'qid pid rank': pass ",
                Option("format", "msmarco"),
                " with ",
                Option("order", "rank"),
            )
        return InputError(
            f"expected at least {count(least, 'field')}, found {len(fields)}", **where, hint=hint
        )
    if order == "rank":
        field, problem = "rank", integer_problem(fields[3])
    else:
        field, problem = "score", score_problem(fields[4])
    if not problem:
        return None
    if order == "rank":
        hint = Message("with ", Option("order", "rank"), " the 4th field must be an integer rank")
    else:
        hint = Message(
            "the 5th field of a run line must be a number; for ranks only use ",
            Option("order", "rank"),
        )
    return InputError(f"{field} {problem}", **where, field=field, hint=hint)


def locate_duplicate(
    source: Source, kind: str, key: tuple[str, ...], order: str = "score"
) -> InputError:
    """The error for a duplicated (query, doc) pair, naming the two lines where it occurs."""
    *tag, query_id, doc_id = key
    lines = []
    for number, fields in numbered_fields(source):
        if len(fields) < 3 or fields[0] != query_id or fields[2] != doc_id:
            continue
        if tag and _tag_of(fields, order) != tag[0]:
            continue
        lines.append(number)
        if len(lines) == 2:
            break
    return duplicate_error(source.label, kind, key, lines, unit="line")


def _tag_of(fields: list[str], order: str) -> str | None:
    if order == "rank" and len(fields) == 5:
        return fields[4]
    return fields[5] if len(fields) >= 6 else None


# --- a ranked file with labels --------------------------------------------------------------------


FIELDS = 4
"""Fields of a line: ``qid Q0 docid rel``."""


@dataclass(frozen=True)
class RankedLabels:
    """What a ranked file with labels holds.

    Attributes:
        name: the file's base name: the run's tag and the qrels set's name.
        qrels: ``query_id, doc_id, relevance``, one row per line.
        run: ``query_id, doc_id, rank, score, tag``, one row per line (rank: the line's
            position among its query's lines).
    """

    name: str
    qrels: pandas.DataFrame
    run: pandas.DataFrame


def read_ranked_labels(path: str | os.PathLike[str]) -> RankedLabels:
    """Read a ranked file with labels (plain or compressed).

    Raises:
        InputError: a missing file or a folder; no data line; a line without 4 fields, a
            label that is not an integer or a document twice for a query (naming the file,
            the line and the field).
    """
    src = open_source(path, "trec")
    assert src.path is not None  # a path, not a frame
    name = base_name(src.path)
    rows: list[tuple[str, str, int]] = []
    seen: dict[tuple[str, str], int] = {}
    for number, fields in numbered_fields(src):
        if len(fields) != FIELDS:
            raise InputError(
                f"expected {FIELDS} fields, found {len(fields)}",
                source=src.label,
                line=number,
                hint=_fields_hint(len(fields)),
            )
        query, _, doc, label = fields
        problem = integer_problem(label)
        if problem:
            raise InputError(
                f"label {problem}",
                source=src.label,
                line=number,
                field="rel",
                hint="the 4th field must be an integer grade such as 0, 1, 2 or -1",
            )
        first = seen.setdefault((query, doc), number)
        if first != number:
            raise duplicate_error(src.label, "run", (query, doc), [first, number], unit="line")
        rows.append((query, doc, int(label)))
    if not rows:
        raise empty_error(src)
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    rank = frame.groupby("query_id", sort=False).cumcount() + 1
    lines = frame.groupby("query_id", sort=False)["doc_id"].transform("size")
    run = pd.DataFrame(
        {
            "query_id": frame["query_id"],
            "doc_id": frame["doc_id"],
            "rank": rank,
            "score": (lines - rank + 1).astype(float),
            "tag": name,
        }
    )
    return RankedLabels(name, frame, run)


def _fields_hint(found: int) -> str:
    hint = "a ranked line with its label is 'qid Q0 docid rel', in rank order"
    if found >= 6:
        hint += "; this looks like a run line: evaluate the run against its qrels instead"
    return hint
