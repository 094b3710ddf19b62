"""The value rules shared by the bulk SQL validation and the Python rescan that locates a problem.

The happy path validates in SQL; only when SQL reports a problem does a Python rescan walk
the source to name the first bad line and field (and every rescan words a repeated query and
document alike: :func:`duplicate_error`). Both sides take their rule from here: the
patterns below are used verbatim by Python's ``re`` and by DuckDB's ``regexp_full_match``
(RE2), so a spelling passes both or neither.

Scores: ASCII decimal ``[+-]?(D+(.D*)?|.D+)([eE][+-]?D+)?`` or ``inf``/``infinity`` (any
case, optional sign); the value is the nearest double (``1e999`` is infinity). NaN, digit
separators (``1_000``), hexadecimal and non-ASCII digits are errors.
Grades and ranks: ASCII ``[+-]?D+`` optionally followed by ``.`` and zeros (``1.0``, what
pandas writes, is 1; ``1.5`` is an error), within the 32-bit range. Spaces and tabs around a
value are ignored (they only occur in tabular text; they separate TREC fields).
"""

from __future__ import annotations

import math
import re

from ..errors import InputError

SCORE_PATTERN = (
    r"[+-]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[iI][nN][fF]([iI][nN][iI][tT][yY])?)"
)
INTEGER_PATTERN = r"[+-]?[0-9]+(\.0*)?"
_SCORE = re.compile(SCORE_PATTERN)
_INTEGER = re.compile(INTEGER_PATTERN)
_INT32 = (-(2**31), 2**31 - 1)
_AROUND = " \t"


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def id_problem(value: object) -> str | None:
    """Why ``value`` cannot be a query or document id (None when it can)."""
    if _is_missing(value) or str(value) == "":
        return "is empty"
    return None


def score_problem(value: object) -> str | None:
    """Why ``value`` is not a score (see the module's rule); None when it is one."""
    if _is_missing(value):
        return "is missing"
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return "is NaN" if math.isnan(float(value)) else None
    text = str(value).strip(_AROUND)
    if text.lower().lstrip("+-") == "nan":
        return f"{text!r} is NaN"
    if not _SCORE.fullmatch(text):
        return f"{text!r} is not a number"
    return None


def integer_of(text: str) -> int:
    """The integer a text that :func:`integer_problem` accepts stands for (``' 1.0'`` is 1)."""
    return int(text.strip(_AROUND).partition(".")[0])


def integer_problem(value: object) -> str | None:
    """Why ``value`` is not a grade or rank (see the module's rule); None when it is one."""
    if _is_missing(value):
        return "is missing"
    if isinstance(value, float):
        if not value.is_integer():
            return f"{value!r} is not an integer"
        value = int(value)
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip(_AROUND)
        if not _INTEGER.fullmatch(text):
            return f"{text!r} is not an integer"
        number = integer_of(text)
    if not _INT32[0] <= number <= _INT32[1]:
        return f"{number} is out of the 32-bit integer range"
    return None


def _sql_text(expression: str) -> str:
    return f"trim({expression}, E' \\t')"


def score_sql(expression: str, *, spaced: bool = True) -> str:
    """SQL: the DOUBLE of the text ``expression`` under the score rule, else NULL.

    ``spaced=False`` when the text cannot hold a space or tab (a TREC field, which they
    delimit): the trim, which costs more than the pattern on millions of rows, is left out.
    """
    text = _sql_text(expression) if spaced else expression
    return (
        f"CASE WHEN regexp_full_match({text}, '{SCORE_PATTERN}') "
        f"THEN TRY_CAST({text} AS DOUBLE) END"
    )


def integer_sql(expression: str, *, spaced: bool = True) -> str:
    """SQL: the INTEGER of the text ``expression`` under the grade/rank rule, else NULL.

    The pattern (TRY_CAST alone takes '1.6' as 2 and '0x10' as 16) only runs for text that
    is not already an integer written the usual way, which is nearly every rank of a file.
    ``spaced`` as for :func:`score_sql`.
    """
    cast = f"TRY_CAST({expression} AS INTEGER)"
    text = _sql_text(expression) if spaced else expression
    return (
        f"CASE WHEN CAST({cast} AS VARCHAR) = {expression} THEN {cast} "
        f"WHEN regexp_full_match({text}, '{INTEGER_PATTERN}') THEN TRY_CAST({text} AS INTEGER) END"
    )


def duplicate_error(
    label: str, kind: str, key: tuple[str, ...], places: list[int], *, unit: str
) -> InputError:
    """Error for a (query, doc) pair seen twice; ``places`` are its first two lines or rows."""
    *tag, query_id, doc_id = key
    what = f"document {doc_id!r} appears twice for query {query_id!r}"
    if tag:
        what += f" of run {tag[0]!r}"
    hint = "keep one line per query and document"
    if kind == "run":
        hint += " (trec_eval stops with 'duplicate docs')"
    if len(places) < 2:
        return InputError(what, source=label, field="docid", hint=hint)
    first, second = places
    if unit == "line":
        return InputError(
            f"{what}, first at line {first}", source=label, line=second, field="docid", hint=hint
        )
    return InputError(
        f"{what}: {unit}s {first} and {second}", source=label, field="docid", hint=hint
    )
