"""Means with their intervals in a terminal table: ``0.1326 ±0.1335`` in one cell.

Machine formats (CSV, TSV, JSON) print ``AP``, ``AP low`` and ``AP high`` as three exact
numbers (compare's ``--wide`` names); a table folds them into the mean and the half-width of
its interval (Student's t intervals are symmetric about the mean), so that the table stays
as narrow as it can be. The number of queries is its own column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...cells import is_missing, table_value
from ...columns import INTERVAL_SUFFIXES

DIGITS = 4
"""Decimals of a mean, and of the half-width beside it."""


def level_words(level: float) -> str:
    """What a folded cell holds, for a table's title: ``mean ±95% CI (t)``."""
    return f"mean ±{level * 100:g}% CI (t)"


def folded(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], measures: Sequence[str]
) -> tuple[list[str], list[list[Any]], list[bool]]:
    """``columns`` and ``rows`` with each measure's ``low`` and ``high`` folded into its cell.

    Args:
        columns: the wide columns: each measure followed by ``<measure> low`` and
            ``<measure> high``.
        rows: the rows, one value per column.
        measures: the measure columns.

    Returns:
        (the columns without the bounds, the rows with the measures as text, which columns
        are numbers).
    """
    position = {name: i for i, name in enumerate(columns)}
    bounds = {measure + suffix for measure in measures for suffix in INTERVAL_SUFFIXES}
    kept = [name for name in columns if name not in bounds]
    table = []
    for row in rows:
        line = []
        for name in kept:
            value = row[position[name]]
            if name in measures:
                low = row[position[name + INTERVAL_SUFFIXES[0]]]
                high = row[position[name + INTERVAL_SUFFIXES[1]]]
                value = cell(value, low, high)
            line.append(value)
        table.append(line)
    numeric = [name in measures or name == "num_q" for name in kept]
    return kept, table, numeric


def cell(mean: Any, low: Any, high: Any) -> str:
    """``0.1326 ±0.1335``; the mean alone without an interval; empty without a mean."""
    text = table_value(mean, DIGITS)
    if not text or is_missing(low) or is_missing(high):
        return text
    half = (float(high) - float(low)) / 2
    # a half-width of 16 digits or more is written as a large mean is (1.0000e+174)
    shown = table_value(half, DIGITS) if abs(half) >= 1e16 else f"{half:.{DIGITS}f}"
    return f"{text} ±{shown}"
