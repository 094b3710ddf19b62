"""Each system's series of runs, as the report's trends draw it: means with their intervals,
the gate's verdicts, and where the inputs of the series change.

A trend line joins the runs of one system in ingest order. Where history says the inputs
changed (a column ``inputs`` of :func:`rankhouse.history.history`'s frame: a short signature
of what an evaluation was computed from), the line is broken: points computed from other
inputs are not comparable, and a line between them would say they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cells import is_missing
from ..history import history
from ..lazy import pandas as pd

INPUTS_COLUMN = "inputs"
"""History's column of the inputs' signature, when it has one: a trend breaks where it changes."""


@dataclass
class RunInfo:
    """A run as the report's header lists it."""

    id: int
    name: str
    system: str
    ingested_at: Any
    num_queries: int
    metadata: dict[str, Any]


@dataclass
class Trend:
    """One system's runs in ingest order, with their means, intervals and gate verdicts.

    Attributes:
        system: the system tag.
        runs: its runs, oldest first.
        means: one row per run (same order), one column per measure.
        low: the lower bounds of the means' intervals (compare's ``mean_low``), as ``means``.
        high: the upper bounds (``mean_high``), as ``means``.
        segments: (first, last) positions of the runs a line joins: one segment unless the
            inputs change (:func:`input_segments`).
        verdicts: (run id, measure) -> ``'fail'`` or ``'pass'``, from the newest
            ``regress`` check of that run against this qrels set that judged the measure.
        baselines: run id -> the name of the run that check compared it with.
        first_runs: ids of the runs the gate passed as the first of their series.
    """

    system: str
    runs: list[RunInfo]
    means: pd.DataFrame
    low: pd.DataFrame | None = None
    high: pd.DataFrame | None = None
    segments: list[tuple[int, int]] = field(default_factory=list)
    verdicts: dict[tuple[int, str], str] = field(default_factory=dict)
    baselines: dict[int, str] = field(default_factory=dict)
    first_runs: set[int] = field(default_factory=set)


def input_segments(frame: pd.DataFrame, runs: Sequence[str]) -> list[tuple[int, int]]:
    """Where a line may join ``runs`` (names, in the trend's order): (first, last) positions
        of each stretch of runs whose ``inputs`` are the same in ``frame`` (history's frame for
        one qrels set). Without an ``inputs`` column, one stretch; a run absent from it or without
    a signature joins its neighbours.

        >>> input_segments(pd.DataFrame({"run": ["a", "b", "c"], "inputs": [1, 1, 2]}), "abc")
        [(0, 1), (2, 2)]
    """
    if not runs:
        return []
    if INPUTS_COLUMN not in frame.columns:
        return [(0, len(runs) - 1)]
    signature = dict(zip(frame["run"], frame[INPUTS_COLUMN], strict=True))
    segments, start = [], 0
    for position in range(1, len(runs)):
        before, now = signature.get(runs[position - 1]), signature.get(runs[position])
        if not is_missing(before) and not is_missing(now) and before != now:
            segments.append((start, position - 1))
            start = position
    segments.append((start, len(runs) - 1))
    return segments


_VERDICTS = """
    SELECT c.id AS check_id, c.run_id, b.name AS baseline, v.measure, v.regressed
    FROM regress_checks c
    JOIN regress_verdicts v ON v.check_id = c.id
    JOIN runs b ON b.id = c.baseline_run_id
    WHERE c.qrels_id = :qrels_id
    ORDER BY c.created_at, c.id
    """

_FIRST_RUNS = (
    "SELECT run_id FROM regress_checks WHERE qrels_id = :qrels_id AND baseline_run_id IS NULL"
)


def trends(
    store, qrels_id: int, runs: list[RunInfo], comparison: pd.DataFrame, measures: list[str]
) -> list[Trend]:
    """Every system with at least two of the selected runs: its series, oldest first, with
    compare's means and intervals (``comparison``: compare's frame)."""
    by_system: dict[str, list[RunInfo]] = {}
    for info in runs:
        by_system.setdefault(info.system, []).append(info)
    pivots = {
        name: comparison.pivot_table(index="run", columns="measure", values=name, sort=False)
        for name in ("mean", "mean_low", "mean_high")
    }
    with store.connect() as conn:
        rows = conn.execute(_VERDICTS, {"qrels_id": qrels_id}).mappings().all()
        first_runs = set(conn.execute(_FIRST_RUNS, {"qrels_id": qrels_id}).scalars())
    verdicts: dict[tuple[int, str], str] = {}
    baselines: dict[int, str] = {}
    for row in rows:  # oldest first: the newest check of a run and measure wins
        verdicts[(int(row["run_id"]), row["measure"])] = "fail" if row["regressed"] else "pass"
        baselines[int(row["run_id"])] = row["baseline"]
    series = {s: members for s, members in by_system.items() if len(members) >= 2}
    stored = history(store, qrels=qrels_id, measures=measures[:1]) if series else None
    found = []
    for system, members in series.items():
        names = [m.name for m in members]
        tables = {
            name: pivot.reindex(index=names, columns=measures).reset_index(drop=True)
            for name, pivot in pivots.items()
        }
        ids = {m.id for m in members}
        found.append(
            Trend(
                system=system,
                runs=members,
                means=tables["mean"],
                low=tables["mean_low"],
                high=tables["mean_high"],
                segments=input_segments(stored, names),
                verdicts={k: v for k, v in verdicts.items() if k[0] in ids},
                baselines={k: v for k, v in baselines.items() if k in ids},
                first_runs=first_runs & ids,
            )
        )
    return found
