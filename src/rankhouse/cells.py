"""How one value is written, the same way by every command and report.

* JSON: numbers as the exact double (Python's shortest round-trip ``repr``), ``true``/
  ``false``, and ``null`` for a missing value (None, NaN: trec_eval's ``-nan``, pandas' NA).
  JSON has no infinity: an infinite number is the string ``"Infinity"`` or ``"-Infinity"``
  (protobuf's JSON spelling; Python's ``float()``, JavaScript's ``Number()`` and rankhouse's
  own JSON-lines reader read it back), never ``null``, so that it stays distinguishable from a
  missing value. Dates and times are ISO 8601 text, also inside lists and structs; a SQL
  DECIMAL is a number when a double reads back as the same decimal, else its digits as text.
* CSV and TSV: the same numbers (``inf``, ``-inf``) and ``true``/``false``, an empty cell for
  a missing value; a list or struct is its JSON text.
* Tables (for people): numbers rounded to a few decimals, a non-zero value too small to
  show in them in scientific notation (a p-value of ``1.2e-14``, never ``0.0000``), and one
  too large to show every digit of (``1e308``: 16 digits or more before the point) too
  (``1.0000e+308``), ``yes``/``no``, an empty cell for a missing value.

Every JSON writer dumps these values with ``allow_nan=False``: what it writes is JSON.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

INFINITY = "Infinity"
"""How JSON output writes positive infinity (negative: ``-Infinity``)."""

_LARGE = 1e16
"""From here on a double's digits before the point are not all its own: a table shows the
number in scientific notation."""


def is_missing(value: Any) -> bool:
    """None, NaN, or pandas' NA / NaT."""
    if value is None:
        return True
    if type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, float) and math.isnan(value)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def _plain(value: Any) -> Any:
    """numpy scalars as Python ones."""
    return value.item() if hasattr(value, "item") and hasattr(value, "dtype") else value


def _worded(value: Any, true: str, false: str) -> Any:
    """``value`` as a plain Python value, but '' when missing and ``true`` or ``false`` for a
    boolean: words, which the callers print as they are."""
    if is_missing(value):
        return ""
    value = _plain(value)
    if _is_bool(value):
        return true if value else false
    return value


def json_value(value: Any) -> Any:
    """``value`` as JSON data: exact floats, ``None`` for missing, ``"Infinity"`` and
    ``"-Infinity"`` for infinite numbers, ISO text for dates and times, lists and dicts with
    their items written the same way."""
    kind = type(value)
    if kind is str or kind is int:  # the usual cells first: a large result has millions
        return value
    if kind is float and math.isfinite(value):
        return value
    if is_missing(value):
        return None
    value = _plain(value)
    if isinstance(value, float):
        if math.isinf(value):
            return INFINITY if value > 0 else "-" + INFINITY
        return value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, Mapping):
        return {str(key): json_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    if isinstance(value, numbers.Real):
        return json_value(float(value))
    if isinstance(value, Decimal):  # SQL's DECIMAL: a number when a double says it exactly
        as_float = float(value)
        exact = math.isfinite(as_float) and Decimal(repr(as_float)) == value
        return as_float if exact else str(value)
    return str(value)


def json_text(data: Any, *, indent: int | None = 2) -> str:
    """JSON text of data made of :func:`json_value`'s values (never ``NaN`` or ``Infinity``
    literals, which are not JSON)."""
    return json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)


def text_value(value: Any) -> str:
    """``value`` in a CSV or TSV cell: the exact double, ``true``/``false``, '' for missing."""
    kind = type(value)
    if kind is str:  # the usual cells first: a large result has millions
        return value
    if kind is int:
        return str(value)
    if kind is float and value == value:
        return repr(value)
    value = _worded(value, "true", "false")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Mapping | list | tuple):
        return json_text(json_value(value), indent=None)
    return str(value)


def table_value(value: Any, digits: int = 4) -> str:
    """``value`` in a table cell: rounded to ``digits`` decimals, ``yes``/``no``, '' if missing.

    A non-zero number that would round to zero keeps two significant digits in scientific
    notation (``1.2e-14``); one of 16 digits or more before the point is shown in scientific
    notation with ``digits`` decimals (``1.0000e+308``, not 309 digits). A list or struct is
    its JSON text.
    """
    value = _worded(value, "yes", "no")
    if isinstance(value, float):
        if value != 0 and math.isfinite(value) and abs(value) < 0.5 * 10.0**-digits:
            return f"{value:.1e}"
        if math.isfinite(value) and abs(value) >= _LARGE:
            return f"{value:.{digits}e}"
        return f"{value:.{digits}f}"
    if isinstance(value, Mapping | list | tuple):
        return json_text(json_value(value), indent=None)
    return str(value)
