"""trec_eval's gains, built in Python where SQL cannot follow trec_eval: the gain table of
the measures with ``level=gain`` parameters (spec 8.10), and the rank weights of its RBP.

The gain table of a query depends only on the measure's pairs and the query's highest grade
V, and its order comes from glibc's merge sort with trec_eval's comparison
``trunc(g_a - g_b)`` (gains closer than 1 compare equal, a quirk that can even make nDCG
exceed 1). That sort is not expressible as an SQL ``ORDER BY``, so this module builds the tiny
tables in Python, one per distinct V of the qrels set, into the temporary table
``rh_gain_entries``; the family files (``gains.sql``, ``rbp_gains.sql``) do all per-query work
in SQL.

trec_eval's RBP (RBP_gains) and its residual weigh rank i by multiplying: ``w_1 = 1``,
``w_{i+1} = w_i * p``, which differs from ``pow(p, i - 1)`` in the last bits. A recursive SQL
query reproduces that but runs one step per rank; this module builds the weights once in
Python (the same IEEE double products) into the temporary table ``rh_rbp_weights (i, w)``,
long enough for every evaluated query.

Each ``prepare_*`` function is a family's ``prepare`` hook
(:class:`~rankhouse.measures.model.Family`), run by the engine before the family's file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import MeasureError

ENTRIES_TABLE = "rh_gain_entries"
WEIGHTS_TABLE = "rh_rbp_weights"


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


# --- RBP's rank weights ---------------------------------------------------------------------------


def rbp_weights(p: float, count: int) -> list[float]:
    """``[w_1, ..., w_count]`` with ``w_1 = 1`` and ``w_{i+1} = w_i * p``."""
    weights = []
    w = 1.0
    for _ in range(count):
        weights.append(w)
        w *= p
    return weights


def prepare_weights(duck, measures: Sequence[Any], binds: dict, built: dict) -> None:
    """Build ``rh_rbp_weights`` for ranks 1 .. (the deepest evaluated ranking + 1), unless
    ``built`` says it was built for the same persistence (the rankings do not change within
    a computation)."""
    purpose = float(binds["p"])
    if built.get(WEIGHTS_TABLE) == purpose:
        return
    deepest = duck.execute("SELECT coalesce(max(eval_n), 0) FROM rh_queries").fetchone()[0]
    weights = rbp_weights(float(binds["p"]), int(deepest) + 1)
    duck.execute(
        f"CREATE OR REPLACE TEMP TABLE {WEIGHTS_TABLE} AS "
        "SELECT CAST(generate_subscripts($w, 1) AS INTEGER) AS i, unnest($w) AS w",
        {"w": weights},
    )
    built[WEIGHTS_TABLE] = purpose


def prepare_rbp(duck, measures: Sequence[Any], binds: dict, built: dict) -> None:
    """RBP_gains needs the gain table and the weights."""
    prepare_gain_entries(duck, measures, binds, built)
    prepare_weights(duck, measures, binds, built)
