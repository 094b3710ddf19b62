"""Value checks shared by the bulk SQL validation and the Python rescan that locates a problem.

The happy path validates in SQL; only when SQL reports a problem does a Python rescan walk
the source to name the first bad line and field. Both sides apply the same rules, written
here once for Python and in ``staging.py`` for SQL.
"""

from __future__ import annotations

import math
import re

INTEGER_TEXT = r"[+-]?[0-9]+"
_INTEGER = re.compile(INTEGER_TEXT)
_INT32 = (-(2**31), 2**31 - 1)


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def id_problem(value: object) -> str | None:
    """Why ``value`` cannot be a query or document id (None when it can)."""
    if _is_missing(value) or str(value) == "":
        return "is empty"
    return None


def score_problem(value: object) -> str | None:
    """Why ``value`` is not a score: DuckDB's DOUBLE cast must accept it and it must not be NaN."""
    if _is_missing(value):
        return "is missing"
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return "is NaN" if math.isnan(float(value)) else None
    text = str(value).strip()
    if "_" in text:
        return f"{text!r} is not a number"
    try:
        number = float(text)
    except ValueError:
        return f"{text!r} is not a number"
    return f"{text!r} is NaN" if math.isnan(number) else None


def integer_problem(value: object) -> str | None:
    """Why ``value`` is not an integer (optional sign, digits; 32-bit)."""
    if _is_missing(value):
        return "is missing"
    if isinstance(value, float):
        if not value.is_integer():
            return f"{value!r} is not an integer"
        value = int(value)
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip()
        if not _INTEGER.fullmatch(text):
            return f"{text!r} is not an integer"
        number = int(text)
    if not _INT32[0] <= number <= _INT32[1]:
        return f"{number} is out of the 32-bit integer range"
    return None
