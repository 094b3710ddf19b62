"""Parquet files and (canonical, checked) pandas DataFrames, read by DuckDB.

Columns are matched to the logical fields by the mapping or by their common names
(``sources.resolve_columns``). Ids are always read as text; CSV, TSV and JSON lines are read
in Python by ``text_tables``.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..duck import register
from ..errors import InputError, Message
from ..lazy import pyarrow_parquet as pq
from .checks import (
    duplicate_error,
    id_problem,
    integer_problem,
    integer_sql,
    score_problem,
    score_sql,
)
from .sources import Source, columns_option, resolve_columns
from .staging import STAGE

_FRAME_VIEW = "_rankhouse_frame"
_INTEGER_TYPES = {
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
}


def _reader(source: Source, compression: str) -> tuple[str, list]:
    """The FROM clause reading ``source`` and its bound parameters."""
    if source.format == "parquet":
        return "read_parquet(?)", [str(source.data_path)]
    return _FRAME_VIEW, []


def _quote(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def describe(duck, source: Source, compression: str) -> dict[str, str]:
    """{column name: DuckDB type} of the source, in source order."""
    if source.is_frame:
        register(duck, _FRAME_VIEW, source.frame)  # its columns may be Arrow-backed
    reader, params = _reader(source, compression)
    rows = duck.execute(f"DESCRIBE SELECT * FROM {reader}", params).fetchall()
    return {row[0]: row[1] for row in rows}


def _integer(column: str, type_name: str) -> str:
    if type_name in _INTEGER_TYPES:
        return f"TRY_CAST({column} AS INTEGER)"
    if type_name == "VARCHAR":
        return integer_sql(column)
    number = f"TRY_CAST({column} AS DOUBLE)"
    return f"CASE WHEN {number} = trunc({number}) THEN TRY_CAST({number} AS INTEGER) END"


def stage(duck, selected: tuple[str, list, str]) -> str:
    """Read a source into the stage with what :func:`selection` gives; returns the bad-row SQL."""
    select, params, bad = selected
    duck.execute(f"CREATE OR REPLACE TEMP TABLE {STAGE} AS {select}", params)
    return bad


def selection(
    source: Source,
    kind: str,
    order: str,
    columns: dict[str, str],
    types: dict[str, str],
    compression: str,
    default_tag: str,
) -> tuple[str, list, str]:
    """(the SELECT that reads ``source`` as the stage's columns, its parameters, the SQL
    condition of a row the checks refuse)."""
    col = {field: _quote(name) for field, name in columns.items()}
    typ = {field: types[name] for field, name in columns.items()}
    for field in ("qid", "docid", "tag"):
        if field in typ and not (typ[field] == "VARCHAR" or typ[field] in _INTEGER_TYPES):
            raise InputError(
                f"column {columns[field]!r} ({field}) holds {typ[field]} values",
                source=source.label,
                field=columns[field],
                hint="ids are strings or integers: write the column as text",
            )
    ids = f"CAST({col['qid']} AS VARCHAR) AS query_id, CAST({col['docid']} AS VARCHAR) AS doc_id"
    bad_ids = "query_id IS NULL OR query_id = '' OR doc_id IS NULL OR doc_id = ''"
    params: list = []
    if kind == "qrels":
        select = f"{ids}, {_integer(col['rel'], typ['rel'])} AS grade"
        bad = f"{bad_ids} OR grade IS NULL"
    else:
        if "tag" in col:
            tag = f"CAST({col['tag']} AS VARCHAR)"
        else:
            tag, params = "CAST(? AS VARCHAR)", [default_tag]
        rank = _integer(col["rank"], typ["rank"]) if "rank" in col else "CAST(NULL AS INTEGER)"
        if order == "rank":
            score = f"-CAST({rank} AS DOUBLE)"
        elif typ["score"] == "VARCHAR":
            score = score_sql(col["score"])
        else:
            score = f"TRY_CAST({col['score']} AS DOUBLE)"
        select = f"{tag} AS tag, {ids}, {rank} AS rank, {score} AS score"
        bad = f"{bad_ids} OR tag IS NULL OR tag = '' OR score IS NULL OR isnan(score)"
    reader, reader_params = _reader(source, compression)
    return f"SELECT {select} FROM {reader}", params + reader_params, bad


def resolve(
    duck, source: Source, kind: str, order: str, mapping: dict[str, str], compression: str
) -> tuple[dict[str, str], dict[str, str]]:
    """(logical field -> column, column -> type) for the source; raises InputError."""
    types = describe(duck, source, compression)
    return resolve_columns(list(types), mapping, kind, order, source.label), types


# --- locating a problem (error path only) ---------------------------------------------------


def _records(source: Source) -> Iterator[tuple[int, dict]]:
    """(line or row number, record) of every record of the source."""
    if source.is_frame:
        for position, record in enumerate(source.frame.to_dict("records")):
            yield position, record
        return
    number = 0
    for batch in pq.ParquetFile(source.data_path).iter_batches():
        for record in batch.to_pylist():
            number += 1
            yield number, record


def _error(source: Source, number: int, field: str, text: str, hint: str | None = None):
    return InputError(f"{text} at row {number}", source=source.label, field=field, hint=hint)


def locate_problem(source: Source, kind: str, order: str, columns: dict[str, str]) -> InputError:
    """The first bad record of ``source`` (the bulk checks said there is one)."""
    try:
        for number, record in _records(source):
            problem = _record_problem(source, kind, order, columns, number, record)
            if problem is not None:
                return problem
    except (OSError, ValueError) as exc:
        return InputError(f"cannot parse the file: {exc}", source=source.label)
    return InputError("a value cannot be read (the rescan did not find which)", source=source.label)


def _record_problem(source, kind, order, columns, number, record) -> InputError | None:
    checks = [("qid", id_problem, "query id"), ("docid", id_problem, "document id")]
    if kind == "qrels":
        checks.append(("rel", integer_problem, "grade"))
    else:
        if "tag" in columns:
            checks.append(("tag", id_problem, "run tag"))
        if order == "score":
            checks.append(("score", score_problem, "score"))
        else:
            checks.append(("rank", integer_problem, "rank"))
    for field, check, label in checks:
        column = columns[field]
        value = record.get(column)
        problem = "is missing" if value is None else check(value)
        if problem:
            return _error(
                source,
                number,
                column,
                f"{label} {problem}",
                hint=Message(
                    f"column {column!r} is used as {field}; map another with ",
                    columns_option({field: "<column>"}),
                ),
            )
    return None


def locate_duplicate(
    source: Source, kind: str, columns: dict[str, str], key: tuple, default_tag: str
) -> InputError:
    """The error for a duplicated (query, doc) pair, naming where it occurs."""
    *tag, query_id, doc_id = key
    places = []
    for number, record in _records(source):
        if str(record.get(columns["qid"])) != query_id:
            continue
        if str(record.get(columns["docid"])) != doc_id:
            continue
        if tag:
            record_tag = str(record.get(columns["tag"])) if "tag" in columns else default_tag
            if record_tag != tag[0]:
                continue
        places.append(number)
        if len(places) == 2:
            break
    return duplicate_error(source.label, kind, key, places, unit="row")
