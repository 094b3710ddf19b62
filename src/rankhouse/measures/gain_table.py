"""trec_eval's gain table (spec 8.10) for the measures with ``level=gain`` parameters.

The table of a query depends only on the measure's pairs and the query's highest grade V,
and its order comes from glibc's merge sort with trec_eval's comparison ``trunc(g_a - g_b)``
(gains closer than 1 compare equal, a quirk that can even make nDCG exceed 1). That sort is
not expressible as an SQL ``ORDER BY``, so this module builds the tiny tables in Python, one
per distinct V of the qrels set, into the temporary table ``rh_gain_entries``; the family
files (``gains.sql``, ``rbp.sql``) do all per-query work in SQL.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import MeasureError

ENTRIES_TABLE = "rh_gain_entries"


def parse_gains(text: str | None) -> list[tuple[int, float]]:
    """``'1=3.0;2=9.0'`` -> ``[(1, 3.0), (2, 9.0)]`` (order and repeats kept).

    Raises:
        MeasureError: an item that is not ``level=gain`` with an integer level.
    """
    return _pairs(text)


def _pairs(text: str | None) -> list[tuple[int, float]]:
    pairs: list[tuple[int, float]] = []
    for item in (text or "").split(";"):
        if not item.strip():
            continue
        level, sep, gain = item.partition("=")
        try:
            pairs.append((int(level), float(gain)))
        except ValueError:
            sep = ""
        if not sep:
            raise MeasureError(
                f"gains: {item!r} is not level=gain; write e.g. gains='1=3;2=9'"
            ) from None
    return pairs


def check_gains(text: str) -> None:
    """Refuse a gain table that is not ``level=gain`` pairs of an integer level and a finite
    gain (the ``check`` of the ``gains`` parameter).

    Raises:
        MeasureError: naming the item and the form to write instead.
    """
    for level, gain in _pairs(text):
        if not math.isfinite(gain):
            raise MeasureError(
                f"gains: level {level} gains {gain!r}; a gain must be a finite number, "
                "e.g. gains='1=3;2=9'"
            )


def format_gains(pairs: Sequence[tuple[int, float]]) -> str | None:
    """The canonical text of ``pairs`` (``None`` for no pairs: the default gains)."""
    return ";".join(f"{level}={float(gain)!r}" for level, gain in pairs) or None


def gain_table(pairs: Sequence[tuple[int, float]], max_grade: int) -> list[dict[str, Any]]:
    """The sorted gain table of a query whose highest grade is ``max_grade``.

    Returns:
        Entries in trec_eval's sorted order, each ``{position, level, gain, counted,
        lookup}``: ``counted`` = this entry receives the query's count of ``level`` (the
        first entry of the level in input order, for levels 0..V); ``lookup`` = this entry
        gives the gain of a retrieved document of that level (the first in sorted order).
    """
    entries = [{"level": level, "gain": float(gain), "counted": False} for level, gain in pairs]
    for v in range(0, max_grade + 1):
        found = next((e for e in entries if e["level"] == v), None)
        if found is not None:
            found["counted"] = True
        else:
            entries.append({"level": v, "gain": float(v), "counted": True})
    ordered = _merge_sort(entries)
    seen: set[int] = set()
    for position, entry in enumerate(ordered, start=1):
        entry["position"] = position
        entry["lookup"] = entry["level"] not in seen
        seen.add(entry["level"])
    return ordered


def _merge_sort(items: list[dict]) -> list[dict]:
    # glibc msort: split at len // 2, take from the left while trunc(left - right) <= 0
    if len(items) <= 1:
        return items
    half = len(items) // 2
    left, right = _merge_sort(items[:half]), _merge_sort(items[half:])
    merged: list[dict] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if math.trunc(left[i]["gain"] - right[j]["gain"]) <= 0:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    return merged + left[i:] + right[j:]


def prepare_gain_entries(duck, measures: Sequence[Any], binds: dict, built: dict) -> None:
    """Build ``rh_gain_entries`` for the group's ``gains`` and every query's highest grade,
    unless ``built`` says it was built for the same qrels set and gains (see
    :class:`~rankhouse.measures.model.Family`).

    Columns: max_grade, position, level, gain, counted, lookup (see :func:`gain_table`).
    """
    purpose = (binds["qrels_id"], binds.get("gains"))
    if built.get(ENTRIES_TABLE) == purpose:
        return
    pairs = parse_gains(binds.get("gains"))
    grades = duck.execute(
        "SELECT DISTINCT max(grade) FROM judgments WHERE qrels_id = $qrels_id GROUP BY query_id",
        {"qrels_id": binds["qrels_id"]},
    ).fetchall()
    rows = [
        (
            int(v),
            entry["position"],
            entry["level"],
            entry["gain"],
            entry["counted"],
            entry["lookup"],
        )
        for (v,) in grades
        for entry in gain_table(pairs, int(v))
    ]
    columns = list(zip(*rows, strict=True)) if rows else [[]] * 6
    duck.execute(
        f"CREATE OR REPLACE TEMP TABLE {ENTRIES_TABLE} AS SELECT "
        "CAST(unnest($a) AS INTEGER) AS max_grade, CAST(unnest($b) AS INTEGER) AS position, "
        "CAST(unnest($c) AS INTEGER) AS level, CAST(unnest($d) AS DOUBLE) AS gain, "
        "CAST(unnest($e) AS BOOLEAN) AS counted, CAST(unnest($f) AS BOOLEAN) AS lookup",
        dict(zip("abcdef", (list(column) for column in columns), strict=True)),
    )
    built[ENTRIES_TABLE] = purpose
