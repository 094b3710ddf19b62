"""PyTerrier's Experiment frame in a notebook (:class:`~.frames.ExperimentFrame`).

PyTerrier highlights with a pandas Styler: in each mean column and ``<m> +`` column the
highest value, in each ``<m> -`` column the lowest, in bold (``highlight="bold"``) or on a
green background (``"color"``). rankhouse returns the frame itself and marks the same cells
when a notebook shows it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..lazy import pandas as pd
from .tables import DEFAULT_ROUND, best_class, cell, digits_for, p_value, table

_TESTS = (" +", " -", " p-value", " reject", " p-value corrected")


def experiment_html(
    frame: pd.DataFrame,
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002 (PyTerrier's name)
    highlight: str | None = "bold",
) -> str:
    """The frame of :func:`rankhouse.compare.pyterrier.pyterrier_experiment` as a table."""
    columns = list(frame.columns)
    tests = {f"{c}{suffix}" for c in columns for suffix in _TESTS}
    means = [c for c in columns[1:] if c not in tests]
    mark = best_class(highlight)
    best: dict[str, set[int]] = {}
    for column in columns[1:]:
        wanted = max if column in means or column.endswith(" +") else None
        wanted = min if column.endswith(" -") and column not in means else wanted
        values = [v for v in frame[column] if _number(v)]
        if wanted is None or not values or not mark:
            continue
        target = wanted(values)
        best[column] = {i for i, v in enumerate(frame[column]) if _number(v) and v == target}
    rows = []
    for i, record in enumerate(frame.itertuples(index=False)):
        parts = [cell(str(record[0]), classes=["text"])]
        for position, column in enumerate(columns[1:], start=1):
            value = record[position]
            classes = [mark] if i in best.get(column, ()) else []
            parts.append(cell(_text(value, column, means, round), classes=classes))
        rows.append("".join(parts))
    header = "<tr>" + "".join(
        cell(str(c), tag="th", classes=["text"] if i == 0 else []) for i, c in enumerate(columns)
    )
    return table(header + "</tr>", rows)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value)


def _text(value: Any, column: str, means: list[str], round: Any) -> str:  # noqa: A002
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool) or column.endswith(" reject"):
        return str(bool(value))
    if column.endswith((" p-value", " p-value corrected")):
        return p_value(value)
    if column in means:
        return f"{float(value):.{digits_for(round, column)}f}"
    return str(int(value))  # the counts of queries improved and degraded
