"""A reference reader for TREC text, CSV/TSV, JSON lines and DataFrames, written from
docs/ingest.md's reading rules alone.

It shares no code with rankhouse (no import from ``src/``): it is the yardstick the
generated-input tests hold ``Warehouse.ingest_qrels`` / ``ingest_run`` to. It reads a whole
file in memory, byte by byte rules, and either returns the rows rankhouse must store or says
that rankhouse must refuse the file.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import math
import re

import numpy
import zstandard

BOM = b"\xef\xbb\xbf"
SEPARATORS = b" \t\x0b\x0c"  # space, tab, vertical tab, form feed
SCORE = re.compile(
    r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity))"
)
INTEGER = re.compile(r"[+-]?[0-9]+(?:\.0*)?")


class Refused(Exception):
    """The rules say the file must be refused."""


def decompress(data: bytes) -> bytes:
    """The file's content: compression is known by the first bytes, never by the name."""
    try:
        if data[:2] == b"\x1f\x8b":
            return gzip.decompress(data)
        if data[:3] == b"BZh" and data[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
            return bz2.decompress(data)
        if data[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(data)
        if data[:4] == b"\x28\xb5\x2f\xfd":
            return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except Exception as exc:  # any damage: the file is refused
        raise Refused(f"damaged compressed data: {exc}") from None
    return data


def lines(content: bytes) -> list[bytes]:
    """LF, CRLF and a lone CR each end a line; a BOM at the very start is dropped."""
    if content.startswith(BOM):
        content = content[len(BOM) :]
    result: list[bytes] = []
    current = bytearray()
    i = 0
    while i < len(content):
        byte = content[i : i + 1]
        if byte == b"\r":
            result.append(bytes(current))
            current.clear()
            if content[i + 1 : i + 2] == b"\n":
                i += 1
        elif byte == b"\n":
            result.append(bytes(current))
            current.clear()
        else:
            current += byte
        i += 1
    if current:
        result.append(bytes(current))
    return result


def fields(line: bytes) -> list[bytes]:
    out: list[bytes] = []
    current = bytearray()
    for value in line:
        if value in SEPARATORS:
            if current:
                out.append(bytes(current))
                current.clear()
        else:
            current.append(value)
    if current:
        out.append(bytes(current))
    return out


def data_lines(raw: bytes) -> list[list[str]]:
    """The fields of every data line; Refused on bytes that are not UTF-8 (any line)."""
    result = []
    for line in lines(decompress(raw)):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("not UTF-8") from None
        found = fields(line)
        if not found or found[0].startswith(b"#"):
            continue
        result.append([field.decode("utf-8") for field in found])
    if not result:
        raise Refused("no data lines")
    return result


def integer(text: str) -> int:
    if not INTEGER.fullmatch(text):
        raise Refused(f"not an integer: {text!r}")
    value = int(text.split(".")[0])
    if not -(2**31) <= value < 2**31:
        raise Refused("out of the 32-bit range")
    return value


def score(text: str) -> float:
    if not SCORE.fullmatch(text):
        raise Refused(f"not a number: {text!r}")
    value = float(text)
    assert not math.isnan(value)
    return value


def read_qrels(raw: bytes) -> set[tuple[str, str, int]]:
    """{(query, doc, grade)}; Refused when rankhouse must refuse the file."""
    rows = {}
    for found in data_lines(raw):
        if len(found) != 4:
            raise Refused("a qrels line has 4 fields")
        key = (found[0], found[2])
        if key in rows:
            raise Refused("duplicate")
        rows[key] = integer(found[3])
    return {(q, d, g) for (q, d), g in rows.items()}


def read_run(raw: bytes, order: str = "score") -> set[tuple[str, str, str, int | None, float]]:
    """{(tag, query, doc, rank, score)}; rank is None when field 4 is not an integer (order
    score), score is -rank under order rank."""
    rows = {}
    for found in data_lines(raw):
        if order == "rank":
            if len(found) < 5:
                raise Refused("a rank-only run line has at least 5 fields")
            tag = found[4] if len(found) == 5 else found[5]
            rank = integer(found[3])
            value = -float(rank)
        else:
            if len(found) < 6:
                raise Refused("a run line has at least 6 fields")
            tag = found[5]
            value = score(found[4])
            try:
                rank = integer(found[3])
            except Refused:
                rank = None
        key = (tag, found[0], found[2])
        if key in rows:
            raise Refused("duplicate")
        rows[key] = (rank, value)
    return {(t, q, d, r, s) for (t, q, d), (r, s) in rows.items()}


# --- tabular sources: CSV/TSV, JSON lines, DataFrames ("Reading rules") ----------------------

ALIASES = {
    "qid": ("qid", "query", "query_id", "q_id"),
    "docid": ("docid", "docno", "doc_id"),
    "rel": ("rel", "label", "relevance", "grade", "y_true"),
    "score": ("score", "sim", "predicted_relevance"),
    "rank": ("rank",),
    "tag": ("tag", "system", "run_id"),
}
DELIMITERS = (",", "\t", "|", ";")
AROUND = " \t"  # spaces and tabs around a number in a table are ignored
FRAME_TAG = "run"  # the tag of a DataFrame without a tag column


def text_of(raw: bytes) -> str:
    """The file as text: decompressed, UTF-8 (else refused), a leading BOM dropped."""
    try:
        text = decompress(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("not UTF-8") from None
    return text.removeprefix("\ufeff")


def text_lines(text: str) -> list[str]:
    """LF, CRLF and a lone CR each end a line (nothing else does)."""
    return re.split(r"\r\n|\r|\n", text.removesuffix("\r\n").removesuffix("\n").removesuffix("\r"))


def sniff(header_line: str, fmt: str) -> str:
    """The one of , tab | ; found most often outside quotes; ties to the format's own, then in
    that order."""
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for char in header_line:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in counts:
            counts[char] += 1
    own = "\t" if fmt == "tsv" else ","
    best = own
    for delimiter in (own, *DELIMITERS):
        if counts[delimiter] > counts[best]:
            best = delimiter
    return best


def records(text: str, delimiter: str) -> list[list[str]]:
    """RFC 4180 records: a field starting with a quote runs to the next lone quote ("" is one
    quote; line breaks inside are kept) and must be followed by the delimiter or a line end;
    a quote elsewhere is an ordinary character. Empty lines hold no record."""
    found: list[list[str]] = []
    record: list[str] = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        if at_line_start and text[i] in "\r\n":  # an empty line
            i += 2 if text.startswith("\r\n", i) else 1
            continue
        at_line_start = False
        if text[i] == '"':
            value, i = _quoted(text, i + 1)
            if i < n and text[i] not in (delimiter, "\r", "\n"):
                raise Refused("text after a closing quote")
        else:
            end = i
            while end < n and text[end] not in (delimiter, "\r", "\n"):
                end += 1
            value, i = text[i:end], end
        record.append(value)
        if i < n and text[i] == delimiter:
            i += 1
            if i == n or text[i] in "\r\n":
                record.append("")  # a delimiter right before the line end
            else:
                continue
        if i < n:  # a line end
            i += 2 if text.startswith("\r\n", i) else 1
        found.append(record)
        record = []
        at_line_start = True
    if record:
        found.append(record)
    return found


def _quoted(text: str, i: int) -> tuple[str, int]:
    value = []
    while True:
        j = text.find('"', i)
        if j < 0:
            raise Refused("a quote is not closed")
        value.append(text[i:j])
        if text.startswith('""', j):
            value.append('"')
            i = j + 2
        else:
            return "".join(value), j + 1


def resolve(columns: list[str], kind: str, order: str) -> dict[str, int]:
    """{field: column position} by the common names, case-insensitive; Refused when a required
    field has no column."""
    lower = [str(c).lower() for c in columns]
    fields = (
        ("qid", "docid", "rel") if kind == "qrels" else ("qid", "docid", "score", "rank", "tag")
    )
    found = {}
    for name in fields:
        for alias in ALIASES[name]:
            if alias in lower:
                found[name] = lower.index(alias)
                break
    required = ["qid", "docid", "rel"] if kind == "qrels" else ["qid", "docid", order]
    if any(name not in found for name in required):
        raise Refused("no column for a required field")
    return found


def table_id(value: object) -> str:
    if not isinstance(value, str) or value == "":
        raise Refused("an id is empty or not text")
    if any("\ud800" <= char <= "\udfff" for char in value):
        raise Refused("a lone surrogate is not text")
    return value


def table_integer(text: object) -> int:
    if not isinstance(text, str):
        raise Refused("not a number")
    return integer(text.strip(AROUND))


def table_score(text: object) -> float:
    if not isinstance(text, str):
        raise Refused("not a number")
    return score(text.strip(AROUND))


def optional(rule, value):
    try:
        return rule(value)
    except Refused:
        return None


def table_rows(rows, kind: str, order: str, columns: dict[str, int], default_tag: str) -> set:
    """The stored rows of checked table records (each a list or dict of field texts)."""
    records = ({name: record[position] for name, position in columns.items()} for record in rows)
    return stored_rows(records, kind, order, default_tag, table_id, table_integer, table_score)


def stored_rows(records, kind: str, order: str, default_tag: str, id_of, integer_of, score_of):
    """The stored rows of ``records`` (dicts of logical field -> value), read by the given rules."""
    stored = {}
    for get in records:
        query, doc = id_of(get["qid"]), id_of(get["docid"])
        if kind == "qrels":
            key, value = (query, doc), integer_of(get["rel"])
        else:
            tag = id_of(get["tag"]) if "tag" in get else default_tag
            if order == "rank":
                rank = integer_of(get["rank"])
                value = (rank, -float(rank))
            else:
                rank = optional(integer_of, get["rank"]) if "rank" in get else None
                value = (rank, score_of(get["score"]))
            key = (tag, query, doc)
        if key in stored:
            raise Refused("duplicate")
        stored[key] = value
    if not stored:
        raise Refused("no rows")
    if kind == "qrels":
        return {(q, d, g) for (q, d), g in stored.items()}
    return {(t, q, d, r, s) for (t, q, d), (r, s) in stored.items()}


def read_delimited(
    raw: bytes, fmt: str, kind: str, order: str, delimiter: str | None, default_tag: str
) -> set:
    """A CSV/TSV file's stored rows; Refused when rankhouse must refuse it."""
    text = text_of(raw)
    header_line = next((line for line in text_lines(text) if line), None)
    if header_line is None:
        raise Refused("empty")
    if delimiter is None:
        delimiter = sniff(header_line, fmt)
    delimiter = {"tab": "\t"}.get(delimiter, delimiter)
    found = records(text, delimiter)
    header, rows = found[0], found[1:]
    msmarco = len(header) == 3 and all(f.isascii() and f.isdigit() for f in header)
    if kind == "run" and delimiter == "\t" and msmarco:
        # MS MARCO's run format, no header: qid, docid, rank, ranked by rank only
        if order != "rank":
            raise Refused("MS MARCO's run format has no scores")
        header, rows = ["qid", "docid", "rank"], found
    if any(len(row) != len(header) for row in rows):
        raise Refused("a record has another number of fields than the header")
    return table_rows(rows, kind, order, resolve(header, kind, order), default_tag)


class _JsonNumber(str):
    """A JSON number's spelling (ids: integers only)."""

    fraction = False


class _JsonFraction(_JsonNumber):
    fraction = True


def _no_constants(name: str):
    raise Refused(f"{name} is not JSON")


def _json_id(value: object) -> str:
    """An id: a JSON string as its value, a JSON integer as its digits as written."""
    if isinstance(value, _JsonNumber):
        if value.fraction:
            raise Refused("an id with a fraction or exponent")
        return str(value)
    if not isinstance(value, str):
        raise Refused("an id that is not a string or an integer")
    return value


def _json_text(value: object) -> str | None:
    """The text a number is read from: a JSON number's spelling or a string; None otherwise
    (true/false, null, arrays, objects, a missing key)."""
    return str(value) if isinstance(value, str) else None


def read_jsonl(raw: bytes, kind: str, order: str, default_tag: str) -> set:
    """A JSON lines file's stored rows; Refused when rankhouse must refuse it."""
    objects = []
    for line in text_lines(text_of(raw)):
        if not line.strip(" \t"):
            continue
        try:
            value = json.loads(
                line,
                parse_int=_JsonNumber,
                parse_float=_JsonFraction,
                parse_constant=_no_constants,
            )
        except ValueError:
            raise Refused("not JSON") from None
        if not isinstance(value, dict):
            raise Refused("not an object")
        objects.append(value)
    if not objects:
        raise Refused("empty")
    keys = list(objects[0])
    columns = resolve(keys, kind, order)
    rows = []
    for obj in objects:
        row = {}
        for name, position in columns.items():
            value = obj.get(keys[position])
            if name in ("qid", "docid", "tag"):
                if keys[position] not in obj:
                    raise Refused("a needed key is missing")
                row[position] = _json_id(value)
            else:
                row[position] = _json_text(value)
        rows.append(row)
    return table_rows(rows, kind, order, columns, default_tag)


def frame_id(value: object) -> str:
    """DataFrame ids: strings, or integers (their decimal text)."""
    if isinstance(value, bool | numpy.bool_):
        raise Refused("a boolean id")
    if isinstance(value, int | numpy.integer):
        return str(int(value))
    return table_id(value)


def frame_integer(value: object) -> int:
    """Numbers (a whole float is that integer; booleans are 1 and 0) or text under the rule."""
    if isinstance(value, bool | numpy.bool_):
        return int(value)
    if isinstance(value, int | numpy.integer):
        return integer(str(int(value)))
    if isinstance(value, float | numpy.floating):
        if not math.isfinite(value) or value != math.floor(value):
            raise Refused("not a whole number")
        return integer(str(int(value)))
    return table_integer(value)


def frame_score(value: object) -> float:
    if isinstance(value, bool | numpy.bool_ | int | numpy.integer):
        return float(value)
    if isinstance(value, float | numpy.floating):
        if math.isnan(value):
            raise Refused("NaN")
        return float(value)
    return table_score(value)


def read_frame(frame, kind: str, order: str) -> set:
    """A DataFrame's stored rows; Refused when rankhouse must refuse it."""
    columns = resolve(list(frame.columns), kind, order)
    cells = {name: frame.iloc[:, position].tolist() for name, position in columns.items()}
    records = ({name: values[i] for name, values in cells.items()} for i in range(len(frame)))
    return stored_rows(records, kind, order, FRAME_TAG, frame_id, frame_integer, frame_score)
