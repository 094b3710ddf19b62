"""Delimited text (CSV, TSV, ``|`` or ``;`` separated) and JSON lines into the stage: every
value checked as it is read, the first bad one named with its line and field.

Both formats are read record by record in Python, so that every file is read by one set of
rules (docs/ingest.md, "Reading rules"): a UTF-8 BOM is dropped, LF, CRLF and a lone CR each
end a line. Delimited fields are quoted as in RFC 4180, and the delimiter is sniffed from the
header among ``,`` tab ``|`` ``;`` unless it is given. A JSON lines file holds one object per
line, whose numbers are never converted: the parser hands back the number's own spelling
(:class:`JsonInteger` or :class:`JsonFraction`), and the field rules decide what each spelling
may be. Ids are text as written: a delimited field as it stands, a JSON string as its value, a
JSON integer as its digits; anything else in an id is an error. Grades, ranks and scores follow
the number rules of :mod:`.staging`.

A delimited file names its columns on its first line. A first line of data (every field a
number or an id, one at least a number, none a column name rankhouse knows) is a missing
header, and the error says so. One shape of data is a format of its own: MS MARCO's runs are
three tab-separated integers, query, passage and rank, without a header; such a file (or any
file under ``--format msmarco``) is read as ``qid, docid, rank``, ranked by the given rank. A
number written with a decimal comma gets a hint of its own.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..duck import register
from ..errors import InputError, Message, Option, count
from ..lazy import pyarrow as pa
from .files import open_decompressed
from .sources import (
    DELIMITERS,
    FIELD_ALIASES,
    FIELD_LABELS,
    Source,
    columns_option,
    default_delimiter,
    resolve_columns,
)
from .staging import STAGE, duplicate_error, integer_of, integer_problem, score_problem

_BATCH_ROWS = 65_536
_BATCH_VIEW = "_rankhouse_batch"
_STAGE_COLUMNS = {
    "qrels": {"query_id": "VARCHAR", "doc_id": "VARCHAR", "grade": "INTEGER"},
    "run": {
        "tag": "VARCHAR",
        "query_id": "VARCHAR",
        "doc_id": "VARCHAR",
        "rank": "INTEGER",
        "score": "DOUBLE",
    },
}
#: The Arrow type of each SQL type of the stage (pyarrow is imported when a batch is built).
_ARROW_TYPES = {"VARCHAR": "string", "INTEGER": "int32", "DOUBLE": "float64"}
_NOT_GIVEN = object()


class _Bad(Exception):
    """A value that cannot be used; the message says why (e.g. ``is empty``)."""


def _number_text(value: Any, problem_of: Callable[[str], str | None]) -> str:
    """The text of a number or numeric field, checked by ``problem_of`` (its problem, else
    None); other JSON values are not numbers."""
    if not isinstance(value, str):  # a delimited field, a JSON string or a JSON number's spelling
        if value is _NOT_GIVEN or value is None:
            raise _Bad("is missing")
        raise _Bad(f"is a JSON {_json_kind(value)}, not a number")
    problem = problem_of(value)
    if problem:
        raise _Bad(problem)
    return value


def _id(value: Any) -> str:
    if isinstance(value, JsonFraction):
        raise _Bad(f"{str(value)!r} is a JSON number with a fraction or exponent")
    if not isinstance(value, str):
        if value is _NOT_GIVEN or value is None:
            raise _Bad("is missing")
        raise _Bad(f"is a JSON {_json_kind(value)}")
    if value == "":
        raise _Bad("is empty")
    if not value.isprintable() and _has_surrogate(value):  # from a JSON escape (\\udc80)
        raise _Bad("holds a lone surrogate, which is not text")
    return str(value)


def _integer(value: Any) -> int:
    return integer_of(_number_text(value, integer_problem))


def _score(value: Any) -> float:
    return float(_number_text(value, score_problem))


def _optional_integer(value: Any) -> int | None:
    try:
        return _integer(value)
    except _Bad:
        return None


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    return {dict: "object", list: "array"}.get(type(value), type(value).__name__)


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


class TextTable:
    """A CSV/TSV or JSON lines source, its columns resolved, read as checked stage rows."""

    def __init__(
        self,
        source: Source,
        kind: str,
        order: str,
        mapping: dict[str, str],
        default_tag: str,
        delimiter: str | None = None,
    ) -> None:
        self.source = source
        self.kind = kind
        self.order = order
        self.default_tag = default_tag
        msmarco = source.format == "msmarco"
        if msmarco and kind == "qrels":
            raise InputError(
                "MS MARCO's format (query id, passage id, rank) is a run format",
                source=source.label,
                hint=Message("MS MARCO's qrels are TREC qrels: pass ", Option("format", "trec")),
            )
        self.reader = (
            JsonRecords(source)
            if source.format == "jsonl"
            else DelimitedRecords(source, "\t" if msmarco else delimiter)
        )
        self._header = MSMARCO_COLUMNS if msmarco else None
        self.names, self._records = self._read()
        if not msmarco and kind == "run" and not mapping:
            msmarco = is_msmarco(self.names, self.delimiter)
            if msmarco:  # MS MARCO's run format without a header: the first line is data
                msmarco_needs_rank(source.label, self.names, order, given=False)
                self._header = MSMARCO_COLUMNS
                self.names, self._records = self._read()
        elif msmarco:
            msmarco_needs_rank(source.label, self.names, order, given=True)
        try:
            self.columns = resolve_columns(self.names, mapping, kind, order, source.label)
        except InputError as exc:
            if self.delimiter is None or not looks_like_data(self.names):
                raise
            raise missing_header(exc, self.names, self.delimiter, kind) from None
        self._steps = self._plan()

    def _read(self):
        """The reader's (header, records), the header given for a file without one."""
        return self.reader.read() if self._header is None else self.reader.read(self._header)

    @property
    def delimiter(self) -> str | None:
        """The delimiter used (given or sniffed); None for JSON lines."""
        return getattr(self.reader, "delimiter", None)

    def _plan(self) -> list[tuple[str, Callable[[Any], Any], str | None]]:
        """(stage column, conversion, logical field) in stage column order."""
        if self.kind == "qrels":
            return [("query_id", _id, "qid"), ("doc_id", _id, "docid"), ("grade", _integer, "rel")]
        rank_rule = _integer if self.order == "rank" else _optional_integer
        return [
            ("tag", _id, "tag" if "tag" in self.columns else None),
            ("query_id", _id, "qid"),
            ("doc_id", _id, "docid"),
            ("rank", rank_rule, "rank" if "rank" in self.columns else None),
            ("score", _score, "score" if self.order == "score" else None),
        ]

    def rows(self) -> Iterator[tuple[int, tuple]]:
        """(line, stage row) of every record; raises InputError at the first bad value."""
        getters = [self._getter(field) for _, _, field in self._steps]
        checks = [(rule, field) for _, rule, field in self._steps]
        for line, record in self._records:
            values = []
            for get, (rule, field) in zip(getters, checks, strict=True):
                if get is None:
                    values.append(None)
                    continue
                value = get(record)
                try:
                    values.append(rule(value))
                except _Bad as bad:
                    raise self._value_error(line, field, str(bad), value) from None
            if self.kind == "run":
                self._derive(values)
            yield line, tuple(values)

    def _getter(self, field: str | None):
        if field is None:
            return None
        column = self.columns[field]
        if isinstance(self.reader, JsonRecords):
            return lambda record: record.get(column, _NOT_GIVEN)
        index = self.names.index(column)
        return lambda fields: fields[index]

    def _derive(self, values: list) -> None:
        """Fill the run values without a column: the default tag, the score from the rank."""
        if values[0] is None:
            values[0] = self.default_tag
        if self.order == "rank":
            values[4] = -float(values[3])

    def _value_error(self, line: int, field: str, problem: str, value: Any) -> InputError:
        column = self.columns[field]
        hint = decimal_comma_hint(value) if field in ("rel", "rank", "score") else None
        hint = hint or Message(
            f"column {column!r} is used as {field}; map another with ",
            columns_option({field: "<column>"}),
        )
        if field in ("qid", "docid", "tag") and self.source.format == "jsonl":
            hint = 'write ids as JSON strings, e.g. "qid": "101"'
        return self.reader.error(line, f"{FIELD_LABELS[field]} {problem}", field=column, hint=hint)

    def stage(self, duck) -> None:
        """Create the stage and fill it in batches (raises InputError at the first bad value)."""
        types = _STAGE_COLUMNS[self.kind]
        definition = ", ".join(f"{name} {sql_type}" for name, sql_type in types.items())
        duck.execute(f"CREATE OR REPLACE TEMP TABLE {STAGE} ({definition})")
        schema = pa.schema(
            [(name, getattr(pa, _ARROW_TYPES[sql_type])()) for name, sql_type in types.items()]
        )
        batch: list[tuple] = []
        for _, row in self.rows():
            batch.append(row)
            if len(batch) == _BATCH_ROWS:
                _insert(duck, schema, batch)
                batch = []
        if batch:
            _insert(duck, schema, batch)

    def locate_duplicate(self, key: tuple) -> InputError:
        """The error for a (tag,) query, doc key seen twice: a fresh read finds both lines."""
        again = TextTable.__new__(TextTable)
        again.__dict__.update(self.__dict__)
        again.names, again._records = self._read()
        places = []
        for line, row in again.rows():
            found = row[:2] if self.kind == "qrels" else row[:3]
            if found == key:
                places.append(line)
                if len(places) == 2:
                    break
        return duplicate_error(self.source.label, self.kind, key, places, unit="line")


def _insert(duck, schema: pa.Schema, rows: list[tuple]) -> None:
    columns = [list(column) for column in zip(*rows, strict=True)]
    table = pa.Table.from_arrays(
        [pa.array(values, type=field.type) for values, field in zip(columns, schema, strict=True)],
        schema=schema,
    )
    register(duck, _BATCH_VIEW, table)
    try:
        duck.execute(f"INSERT INTO {STAGE} SELECT * FROM {_BATCH_VIEW}")
    finally:
        duck.unregister(_BATCH_VIEW)


# --- delimited text: the header and the records, with lines ---------------------------------------


_NAMES = {",": "comma", "\t": "tab", "|": "|", ";": ";"}
_BOM = "\ufeff"


def sniff(header_line: str, fmt: str) -> str:
    """The candidate delimiter found most often outside quotes in the header line.

    Ties go to the format's own delimiter (``,`` for csv, tab for tsv), then to the order
    ``,`` tab ``|`` ``;``; a header without any candidate gets the format's own.
    """
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for char in header_line:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in counts:
            counts[char] += 1
    own = default_delimiter(fmt)
    order = [own] + [d for d in DELIMITERS if d != own]
    return max(order, key=lambda d: counts[d])  # max keeps the first of equal counts


@contextmanager
def lines_of(source: Source, errors: str = "strict") -> Iterator[Iterator[str]]:
    """The decompressed file's UTF-8 lines, each ending at LF, CRLF or a lone CR (the ending
    kept), a leading BOM dropped. A byte that is not UTF-8 raises UnicodeDecodeError (or, with
    ``errors="surrogateescape"``, is kept as a lone surrogate)."""
    with open_decompressed(source.data_path, source.label) as raw:
        lines = iter(io.TextIOWrapper(raw, encoding="utf-8", errors=errors, newline=""))
        first = next(lines, "")
        yield itertools.chain([first.removeprefix(_BOM)], lines)


def not_utf8_error(source: Source) -> InputError:
    """The error naming the first line holding a byte that is not UTF-8."""
    with lines_of(source, "surrogateescape") as lines:
        for line, text in enumerate(lines, start=1):
            if not_utf8(text):
                return InputError(
                    "the line is not UTF-8",
                    source=source.label,
                    line=line,
                    hint="convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)",
                )
    return InputError("the file is not UTF-8", source=source.label)


class DelimitedRecords:
    """A delimited file read record by record; every record carries the line it starts on.

    Blank lines are skipped; the first other line is the header (line numbers count every
    line, the header's too); a record spanning lines (a quoted line break) is named by its
    first line.
    """

    def __init__(self, source: Source, delimiter: str | None) -> None:
        self.source = source
        self.given = delimiter
        self.delimiter = delimiter or default_delimiter(source.format)

    def __iter__(self) -> Iterator[tuple[int, list[str]]]:
        """(line, fields) of every non-blank record, the header first; sets ``delimiter``."""
        try:
            yield from self._records()
        except UnicodeDecodeError:
            raise not_utf8_error(self.source) from None

    def _records(self) -> Iterator[tuple[int, list[str]]]:
        with lines_of(self.source) as lines:
            skipped = []
            for text in lines:
                skipped.append(text)
                if text.strip("\r\n"):
                    break
            if self.given is None and skipped:
                self.delimiter = sniff(skipped[-1].rstrip("\r\n"), self.source.format)
            reader = csv.reader(
                itertools.chain(skipped, lines),
                delimiter=self.delimiter,
                quotechar='"',
                strict=True,
            )
            line = 1
            while True:
                try:
                    fields = next(reader)
                except StopIteration:
                    return
                except csv.Error as exc:
                    raise self.error(reader.line_num, f"cannot parse the line: {exc}") from None
                if fields:
                    yield line, fields
                line = reader.line_num + 1

    def error(self, line: int, text: str, field: str | None = None, hint=None) -> InputError:
        return InputError(text, source=self.source.label, line=line, field=field, hint=hint)

    def read(
        self, header: list[str] | None = None
    ) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
        """(header, rows): the column names and the records after them, each checked to have
        as many fields as the header. InputError when the file holds no header.

        A ``header`` given names the columns of a file without one: its first line is data.
        """
        records = iter(self)
        first = next(records, None)
        if first is None:
            raise InputError("no rows: the source is empty", source=self.source.label)
        if header is not None:
            return header, self._checked(itertools.chain([first], records), len(header))
        return first[1], self._checked(records, len(first[1]))

    def _checked(self, records, width: int) -> Iterator[tuple[int, list[str]]]:
        for line, fields in records:
            if len(fields) != width:
                raise self.error(
                    line,
                    f"the line has {count(len(fields), 'field')}, the header has {width} "
                    f"(delimiter: {_NAMES[self.delimiter]})",
                    hint=Message(
                        "quote fields that hold the delimiter, or pass ", Option("delimiter")
                    ),
                )
            yield line, fields


def not_utf8(text: str) -> bool:
    """True when ``text`` holds a byte that was not UTF-8 (read as a lone surrogate)."""
    return any("\udc80" <= char <= "\udcff" for char in text)


# --- JSON lines: numbers kept as they are written -------------------------------------------------


class JsonInteger(str):
    """A JSON number written without fraction or exponent (``12``, ``-3``), as written."""


class JsonFraction(str):
    """A JSON number written with a fraction or an exponent (``2.0``, ``1e3``), as written."""


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(
    parse_int=JsonInteger, parse_float=JsonFraction, parse_constant=_no_constant
)
# JSON's own whitespace; a line holding nothing else is skipped.
_BLANK = " \t\r\n"


class JsonRecords:
    """The objects of a JSON lines file, each with its line number (every line end counts)."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def __iter__(self) -> Iterator[tuple[int, dict]]:
        try:
            yield from self._records()
        except UnicodeDecodeError:
            raise not_utf8_error(self.source) from None

    def _records(self) -> Iterator[tuple[int, dict]]:
        with lines_of(self.source) as lines:
            for line, text in enumerate(lines, start=1):
                if not text.strip(_BLANK):
                    continue
                try:
                    record = _DECODER.decode(text)
                except ValueError as exc:
                    raise self.error(line, f"the line is not valid JSON: {exc}") from None
                if not isinstance(record, dict):
                    raise self.error(
                        line, f"the line holds a JSON {type(record).__name__}, not an object"
                    )
                yield line, record

    def error(self, line: int, text: str, field: str | None = None, hint=None) -> InputError:
        return InputError(text, source=self.source.label, line=line, field=field, hint=hint)

    def read(self) -> tuple[list[str], Iterator[tuple[int, dict]]]:
        """(columns, records): the keys of the first object, and every object (that one too)."""
        records = iter(self)
        first = next(records, None)
        if first is None:
            raise InputError("no rows: the source is empty", source=self.source.label)

        def all_records():
            yield first
            yield from records

        return list(first[1]), all_records()


# --- a delimited file's first line ----------------------------------------------------------------


#: The columns of MS MARCO's run format, in its order: query, passage, rank.
MSMARCO_COLUMNS = ["qid", "docid", "rank"]

_INTEGER = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"\s*[+-]?([0-9]+([.,][0-9]*)?|[.,][0-9]+)([eE][+-]?[0-9]+)?\s*")
_ID = re.compile(r"[\w.:/@#+-]+")
_DECIMAL_COMMA = re.compile(r"\s*([+-]?[0-9]+),([0-9]+)\s*")
_KNOWN = {alias for aliases in FIELD_ALIASES.values() for alias in aliases}
_SHOWN = {"\t": "<tab>"}


def is_msmarco(fields: list[str], delimiter: str | None) -> bool:
    """Whether a first line is MS MARCO's run format: three integers separated by tabs."""
    return delimiter == "\t" and len(fields) == 3 and all(_INTEGER.fullmatch(f) for f in fields)


def msmarco_needs_rank(label: str, fields: list[str], order: str, given: bool) -> None:
    """Refuse MS MARCO's run format ranked by score: it has no scores.

    Raises:
        InputError: ``order`` is not ``'rank'``.
    """
    if order == "rank":
        return
    line = "\t".join(fields)
    what = (
        "MS MARCO's run format"
        if given
        else f"the file looks like MS MARCO's run format without a header ({line!r})"
    )
    raise InputError(
        f"{what}: query id, passage id and rank, no score",
        source=label,
        line=None if given else 1,
        hint=Message("pass ", Option("order", "rank"), " to rank each query by the given rank"),
    )


def looks_like_data(fields: list[str]) -> bool:
    """Whether a header line looks like a line of data: every field a number or an id, at
    least one a number, and none a column name rankhouse knows."""
    if any(f.strip().lower() in _KNOWN for f in fields):
        return False
    numbers = [f for f in fields if _NUMBER.fullmatch(f)]
    return bool(numbers) and all(_NUMBER.fullmatch(f) or _ID.fullmatch(f) for f in fields)


def missing_header(exc: InputError, fields: list[str], delimiter: str, kind: str) -> InputError:
    """``exc`` (no column for a field) with the hint that the header is missing."""
    shown = delimiter.join(fields)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    names = ["qid", "docid", "rel"] if kind == "qrels" else ["qid", "docid", "score"]
    example = _SHOWN.get(delimiter, delimiter).join(names)
    return InputError(
        f"no header: line 1 holds data ({shown!r}), not column names",
        source=exc.source,
        hint=Message(
            "add a first line naming the columns, e.g. ",
            example,
            " (the names docs/ingest.md lists), or other names mapped with ",
            Option("columns"),
        ),
    )


def decimal_comma_hint(text: object) -> str | None:
    """The hint for a number written with a decimal comma (``1,5``), else None."""
    found = _DECIMAL_COMMA.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        return None
    return (
        "a decimal comma? rankhouse reads numbers with a decimal point: "
        f"{found.group(1)}.{found.group(2)}"
    )
