"""Parquet files and pandas DataFrames, read by DuckDB into the stage; a DataFrame made
canonical first.

Columns are matched to the logical fields by the mapping or by their common names
(:func:`.sources.resolve_columns`). Ids are always read as text; CSV, TSV and JSON lines are
read in Python by :mod:`.text_tables`.

A DataFrame is made canonical (:func:`canonical`): one column per logical field, every value
checked. Ids must be strings or integers (an integer id is its decimal text); grades and ranks
integers (a float that is whole, ``1.0``, is that integer; text follows the grade rule); scores
numbers or numeric text. A missing value (None, NaN, pd.NA, NaT) or a value of another type is
an InputError naming the column and the row: its 0-based position, and its index label when
that differs. Nothing here mutates the caller's frame.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..duck import register
from ..errors import InputError, Message
from ..lazy import numpy as np
from ..lazy import pandas as pd
from ..lazy import pyarrow_parquet as pq
from .sources import FIELD_LABELS, Source, columns_option, resolve_columns
from .staging import (
    STAGE,
    duplicate_error,
    id_problem,
    integer_of,
    integer_problem,
    integer_sql,
    score_problem,
    score_sql,
)

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


# --- locating a problem (error path only) ---------------------------------------------------------


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


# --- a DataFrame made canonical -------------------------------------------------------------------


_INT32 = (-(2**31), 2**31 - 1)
_ID_HINT = "ids are strings or integers: convert the column, e.g. df[col].astype(str)"


class _Column:
    """One source column being checked, able to name a row in an error."""

    def __init__(self, frame: pd.DataFrame, field: str, column: Any) -> None:
        self.field = field
        self.name = str(column)
        self.series = frame[column]
        self.index = frame.index

    def error(self, position: int, problem: str, hint: str | None = None) -> InputError:
        label = self.index[position]
        where = f"row {position}"
        if not (isinstance(label, int | np.integer) and label == position):
            where += f" (index {_shown(label)})"
        return InputError(
            f"{FIELD_LABELS[self.field]} {problem} at {where}",
            source="DataFrame",
            field=self.name,
            hint=hint or f"column {self.name!r} is used as {self.field}; fix or drop that row",
        )

    def first(self, mask) -> int | None:
        positions = np.flatnonzero(np.asarray(mask, dtype=bool))
        return int(positions[0]) if len(positions) else None

    def check_present(self) -> None:
        missing = self.first(self.series.isna())
        if missing is not None:
            raise self.error(missing, f"is missing ({_shown(self.series.iloc[missing])})")

    def values(self) -> np.ndarray:
        series = self.series
        if isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype(object)
        return series.to_numpy(dtype=object, copy=True)


def _shown(value: Any) -> str:
    """A value for a message: ``1.0``, ``'x'``, ``NaN``, ``None``, ``<NA>``."""
    if isinstance(value, float | np.floating):
        return "NaN" if np.isnan(value) else repr(float(value))
    if isinstance(value, np.integer):
        return repr(int(value))
    return repr(value)


def _ids(col: _Column) -> pd.Series:
    col.check_present()
    dtype = col.series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        raise col.error(0, "is a boolean", _ID_HINT)
    if pd.api.types.is_integer_dtype(dtype):
        return pd.Series(col.series.astype("int64").astype(str).to_numpy(dtype=object))
    if pd.api.types.is_float_dtype(dtype):
        raise col.error(0, f"is a float ({_shown(col.series.iloc[0])})", _ID_HINT)
    if isinstance(dtype, pd.StringDtype):  # every value is a str: kept as it is, not boxed
        empty = col.first((col.series == "").to_numpy(dtype=bool))
        if empty is not None:
            raise col.error(empty, "is empty")
        return col.series.reset_index(drop=True)
    values = col.values()
    if pd.api.types.infer_dtype(values, skipna=False) != "string":
        integers, booleans = (int, np.integer), (bool, np.bool_)
        for position, value in enumerate(values):
            if isinstance(value, str):
                continue
            if isinstance(value, integers) and not isinstance(value, booleans):
                values[position] = str(int(value))
                continue
            raise col.error(position, f"is a {type(value).__name__} ({_shown(value)})", _ID_HINT)
    empty = col.first(values == "")
    if empty is not None:
        raise col.error(empty, "is empty")
    return pd.Series(values, dtype=object)


def _integer_value(value: Any) -> int:
    if isinstance(value, str):  # checked by integer_problem: 1.0 is 1
        return integer_of(value)
    return int(value)


def _integers(col: _Column) -> pd.Series:
    col.check_present()
    dtype = col.series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return pd.Series(col.series.astype("int64").to_numpy())
    if pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_float_dtype(dtype):
        numbers = col.series.to_numpy(dtype="float64")
        whole = np.isfinite(numbers) & (np.floor(numbers) == numbers)
        bad = col.first(~whole | (numbers < _INT32[0]) | (numbers > _INT32[1]))
        if bad is not None:
            raise col.error(bad, integer_problem(col.series.iloc[bad]) or "is not an integer")
        if pd.api.types.is_integer_dtype(dtype):
            return pd.Series(col.series.astype("int64").to_numpy())
        return pd.Series(numbers.astype("int64"))
    values = col.values()
    for position, value in enumerate(values):
        problem = _value_problem(value, integer_problem)
        if problem:
            raise col.error(position, problem)
        values[position] = _integer_value(value)
    return pd.Series(values.astype("int64"))


def _scores(col: _Column) -> pd.Series:
    col.check_present()
    dtype = col.series.dtype
    if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        return pd.Series(col.series.to_numpy(dtype="float64"))
    values = col.values()
    for position, value in enumerate(values):
        problem = _value_problem(value, score_problem)
        if problem:
            raise col.error(position, problem)
        values[position] = float(value.strip(" \t") if isinstance(value, str) else value)
    return pd.Series(values.astype("float64"))


def _value_problem(value: Any, rule) -> str | None:
    # Python's own types first: they need no numpy attribute, read once per value here
    if not isinstance(value, str | int | float) and not isinstance(value, np.integer | np.floating):
        return f"is a {type(value).__name__} ({_shown(value)}), not a number"
    return rule(value)


def _optional_ranks(col: _Column) -> pd.Series:
    """Ranks of a run ranked by score: each kept when it is an integer, else left empty (as
    in a TREC or CSV run: one odd rank does not empty the others)."""
    try:
        return _integers(col)
    except InputError:
        pass
    values = col.values()
    ranks = [
        np.nan if _value_problem(value, integer_problem) else _integer_value(value)
        for value in values
    ]
    return pd.Series(np.array(ranks, dtype="float64"))  # NaN: no rank (stored as NULL)


_RULES = {"qid": _ids, "docid": _ids, "tag": _ids, "rel": _integers, "score": _scores}


def canonical(frame: pd.DataFrame, found: dict[str, Any], order: str) -> pd.DataFrame:
    """{logical field: checked values} for the ``found`` columns (InputError on a bad value)."""
    fields = {}
    for field, column in found.items():
        col = _Column(frame, field, column)
        if field == "rank":
            fields[field] = _integers(col) if order == "rank" else _optional_ranks(col)
        elif field == "score" and order == "rank":
            fields[field] = _optional_scores(col)
        else:
            fields[field] = _RULES[field](col)
    return pd.DataFrame(fields)


def _optional_scores(col: _Column) -> pd.Series:
    """Scores of a run ranked by rank: not used (the score is -rank), so never an error."""
    try:
        return _scores(col)
    except InputError:
        return pd.Series(np.full(len(col.series), np.nan))
