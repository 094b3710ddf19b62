"""Delimited text and JSON lines into the stage: every value checked, with its line and field.

Both formats are read in Python (``delimited``, ``jsonlines``), so each record is checked as it
is read and the first bad one is named at once. Ids are text as written: a delimited field as
it stands, a JSON string as its value, a JSON integer as its digits; anything else in an id is
an error. Grades, ranks and scores follow the number rules of ``checks``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..duck import register
from ..errors import InputError, Message, Option
from ..lazy import pyarrow as pa
from . import delimited, headers, jsonlines
from .checks import duplicate_error, integer_of, integer_problem, score_problem
from .sources import Source, columns_option, resolve_columns
from .staging import STAGE

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
_LABELS = {
    "qid": "query id",
    "docid": "document id",
    "tag": "run tag",
    "rel": "grade",
    "rank": "rank",
    "score": "score",
}
_NOT_GIVEN = object()


class _Bad(Exception):
    """A value that cannot be used; the message says why (e.g. ``is empty``)."""


def _text(value: Any) -> str:
    """The text of a number or numeric field; other JSON values are not numbers."""
    if isinstance(value, str):  # a delimited field, a JSON string or a JSON number's spelling
        return value
    if value is _NOT_GIVEN or value is None:
        raise _Bad("is missing")
    raise _Bad(f"is a JSON {_json_kind(value)}, not a number")


def _id(value: Any) -> str:
    if isinstance(value, jsonlines.JsonFraction):
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
    text = _text(value)
    problem = integer_problem(text)
    if problem:
        raise _Bad(problem)
    return integer_of(text)


def _score(value: Any) -> float:
    text = _text(value)
    problem = score_problem(text)
    if problem:
        raise _Bad(problem)
    return float(text)


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
            jsonlines.Records(source)
            if source.format == "jsonl"
            else delimited.Records(source, "\t" if msmarco else delimiter)
        )
        self._header = headers.MSMARCO_COLUMNS if msmarco else None
        self.names, self._records = self._read()
        if not msmarco and kind == "run" and not mapping:
            msmarco = headers.is_msmarco(self.names, self.delimiter)
            if msmarco:  # MS MARCO's run format without a header: the first line is data
                headers.msmarco_needs_rank(source.label, self.names, order, given=False)
                self._header = headers.MSMARCO_COLUMNS
                self.names, self._records = self._read()
        elif msmarco:
            headers.msmarco_needs_rank(source.label, self.names, order, given=True)
        try:
            self.columns = resolve_columns(self.names, mapping, kind, order, source.label)
        except InputError as exc:
            if self.delimiter is None or not headers.looks_like_data(self.names):
                raise
            raise headers.missing_header(exc, self.names, self.delimiter, kind) from None
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
        if isinstance(self.reader, jsonlines.Records):
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
        hint = headers.decimal_comma_hint(value) if field in ("rel", "rank", "score") else None
        hint = hint or Message(
            f"column {column!r} is used as {field}; map another with ",
            columns_option({field: "<column>"}),
        )
        if field in ("qid", "docid", "tag") and self.source.format == "jsonl":
            hint = 'write ids as JSON strings, e.g. "qid": "101"'
        return self.reader.error(line, f"{_LABELS[field]} {problem}", field=column, hint=hint)

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
