"""How one value is written, the same way by every command and report.

* JSON: numbers as the exact double (Python's shortest round-trip ``repr``), ``true``/
  ``false``, and ``null`` for a missing value (None, NaN: trec_eval's ``-nan``, pandas' NA).
* CSV and TSV: the same numbers and ``true``/``false``, an empty cell for a missing value.
* Tables (for people): numbers rounded to a few decimals, a non-zero value too small to
  show in them in scientific notation (a p-value of ``1.2e-14``, never ``0.0000``),
  ``yes``/``no``, an empty cell for a missing value.
"""

from __future__ import annotations

import math
import numbers
from datetime import date, datetime
from typing import Any


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


def json_value(value: Any) -> Any:
    """``value`` as JSON data: exact floats, ``None`` for missing and non-finite numbers."""
    if is_missing(value):
        return None
    value = _plain(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bool | int | str | dict | list) or value is None:
        return value
    if isinstance(value, numbers.Real):
        return float(value)
    return str(value)


def text_value(value: Any) -> str:
    """``value`` in a CSV or TSV cell: the exact double, ``true``/``false``, '' for missing."""
    if is_missing(value):
        return ""
    value = _plain(value)
    if _is_bool(value):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def table_value(value: Any, digits: int = 4) -> str:
    """``value`` in a table cell: rounded to ``digits`` decimals, ``yes``/``no``, '' if missing.

    A non-zero number that would round to zero keeps two significant digits in scientific
    notation (``1.2e-14``).
    """
    if is_missing(value):
        return ""
    value = _plain(value)
    if _is_bool(value):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != 0 and math.isfinite(value) and abs(value) < 0.5 * 10.0**-digits:
            return f"{value:.1e}"
        return f"{value:.{digits}f}"
    return str(value)
