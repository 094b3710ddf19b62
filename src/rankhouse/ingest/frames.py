"""A pandas DataFrame made canonical: one column per logical field, every value checked.

Ids must be strings or integers (an integer id is its decimal text); grades and ranks
integers (a float that is whole, ``1.0``, is that integer; text follows the grade rule);
scores numbers or numeric text. A missing value (None, NaN, pd.NA, NaT) or a value of another
type is an InputError naming the column and the row: its 0-based position, and its index
label when that differs. Nothing here mutates the caller's frame.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..lazy import numpy as np
from ..lazy import pandas as pd
from .checks import integer_of, integer_problem, score_problem

_INT32 = (-(2**31), 2**31 - 1)
_ID_HINT = "ids are strings or integers: convert the column, e.g. df[col].astype(str)"
_LABELS = {
    "qid": "query id",
    "docid": "document id",
    "tag": "run tag",
    "rel": "grade",
    "rank": "rank",
    "score": "score",
}


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
            f"{_LABELS[self.field]} {problem} at {where}",
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
