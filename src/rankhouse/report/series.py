"""Each system's series of runs, as the report's trends draw it: means with their intervals,
the gate's verdicts, and where the inputs of the series change.

A trend line joins the runs of one system in ingest order. Where history says the inputs
changed (its column ``new_inputs``: the signature of what the values were computed from differs
from the run before of the same system and qrels set, or is unknown), the line is broken:
points computed from other inputs are not comparable, and a line between them would say they
are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..history import history
from ..lazy import pandas as pd

NEW_INPUTS_COLUMN = "new_inputs"
"""History's column that marks a change of inputs: a trend breaks before such a run."""


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
    of each stretch of runs between which history's frame for one qrels set (``frame``) marks
    no change of inputs (``new_inputs``). A run absent from ``frame`` joins its neighbours.

        >>> input_segments(pd.DataFrame({"run": list("abc"), "new_inputs": [0, 0, 1]}), "abc")
        [(0, 1), (2, 2)]
    """
    if not runs:
        return []
    changed = (
        dict(zip(frame["run"], frame[NEW_INPUTS_COLUMN], strict=True))
        if NEW_INPUTS_COLUMN in frame.columns
        else {}
    )
    segments, start = [], 0
    for position in range(1, len(runs)):
        if changed.get(runs[position]) is True or changed.get(runs[position]) == 1:
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
