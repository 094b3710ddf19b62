"""Each system's series of runs, as the report's trends draw it: means with their intervals,
the gate's verdicts, and where the inputs of the series change.

A trend line joins the runs of one system in ingest order. Its values are history's
(:func:`rankhouse.history.history`: the stored means and their t intervals, for every run of
the series in a few set-based statements, however many nights it holds), each interval cut
to the range its measure declares (:func:`clipped`). Each run is placed at its date: the
``night`` metadata nightly runs carry (``--meta night=20261127T121314Z``), else its ingest
time (:func:`run_time`), and labelled by its date and commit (:func:`run_labels`), never by
its name. Where history says the inputs
changed (its column ``new_inputs``: the signature of what the values were computed from differs
from the run before of the same system and qrels set, or is unknown), the line is broken:
points computed from other inputs are not comparable, and a line between them would say they
are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..history import history
from ..lazy import numpy as np
from ..lazy import pandas as pd
from ..measures.best import value_range

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
        times: each run's date (:func:`run_time`), same order as ``runs``.
        labels: each run's x label (:func:`run_labels`), same order.
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
    times: list[datetime] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)


NIGHT_KEY = "night"
"""The metadata key of a nightly run's date (examples/nightly.sh: ``--meta night=<UTC stamp>``)."""
COMMIT_KEY = "commit"
"""The metadata key of the commit a run was made from."""
COMMIT_SHOWN = 7
"""A commit is labelled by its first 7 characters, as git abbreviates it."""

_STAMP = re.compile(r"(\d{4})-?(\d\d)-?(\d\d)(?:[T ](\d\d):?(\d\d)(?::?(\d\d))?)?")


def run_time(info: RunInfo) -> datetime:
    """When ``info`` ran (UTC, naive): its ``night`` metadata when it parses as a date
    (``20261127T121314Z``, ``2026-11-27``, ``2026-11-27T12:13:14Z``), else its ingest time."""
    night = info.metadata.get(NIGHT_KEY)
    found = _STAMP.fullmatch(str(night).strip().rstrip("Z")) if night is not None else None
    if found:
        try:
            return datetime(*(int(part) for part in found.groups(default="0")))
        except ValueError:
            pass
    when = info.ingested_at
    if isinstance(when, str):
        when = datetime.fromisoformat(when)
    if isinstance(when, datetime) and when.tzinfo is not None:
        when = when.astimezone(UTC).replace(tzinfo=None)
    return when


def run_labels(runs: Sequence[RunInfo], times: Sequence[datetime]) -> list[str]:
    """The x label of each run: its date (``11-27``; ``2025-11-27`` when the series spans
    more than a year) when the series spans several days, and its commit's first 7
    characters when it has one; a run with neither (runs of one day, no commit) keeps its
    name, cut to 12 characters.

        >>> day = datetime(2026, 11, 27)
        >>> one = RunInfo(1, "a", "s", day, 8, {"commit": "3f2a9c1e"})
        >>> run_labels([one, RunInfo(2, "b", "s", day, 8, {})], [day, day])
        ['3f2a9c1', 'b']
    """
    days = {t.date() for t in times if isinstance(t, datetime)}
    dated = len(days) > 1
    long = dated and (max(days) - min(days)).days > 365
    labels = []
    for info, when in zip(runs, times, strict=True):
        parts = []
        if dated and isinstance(when, datetime):
            parts.append(when.strftime("%Y-%m-%d" if long else "%m-%d"))
        commit = info.metadata.get(COMMIT_KEY)
        if commit:
            parts.append(str(commit)[:COMMIT_SHOWN])
        labels.append(" ".join(parts) if parts else _cut(info.name, 12))
    return labels


def _cut(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def clipped(values: pd.Series, measure: str) -> pd.Series:
    """``values`` (interval bounds of ``measure``'s means) cut to the range the measure
    declares (:func:`rankhouse.measures.best.value_range`: [0, 1] for precision, recall, AP,
    RR, nDCG...): a t interval of a mean near 1 reaches past 1 (RR 1.05), and the mean
    cannot; an unbounded measure's bounds are left as they are."""
    bounds = value_range(measure)
    if bounds is None:
        return values
    return values.clip(lower=bounds[0], upper=bounds[1])


def clipped_means(frame: pd.DataFrame) -> pd.DataFrame:
    """compare's frame with each mean's interval cut to its measure's range (the report's
    rule; compare itself prints the t interval as it is)."""
    if frame.empty or "mean_low" not in frame.columns:
        return frame
    frame = frame.copy()
    for measure in frame["measure"].unique():
        chosen = frame["measure"] == measure
        for column in ("mean_low", "mean_high"):
            frame.loc[chosen, column] = clipped(frame.loc[chosen, column].astype(float), measure)
    return frame


def clipped_row(row: dict[str, Any]) -> dict[str, Any]:
    """One of compare's rows with its mean's interval cut to its measure's range."""
    if "mean_low" not in row or "measure" not in row:
        return row
    bounds = value_range(str(row["measure"]))
    if bounds is None:
        return row
    found = dict(row)
    for key in ("mean_low", "mean_high"):
        value = found.get(key)
        if value is not None and value == value:  # NaN stays NaN
            found[key] = min(max(float(value), bounds[0]), bounds[1])
    return found


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
    SELECT c.id AS check_id, c.run_id, b.name AS baseline, v.measure, v.status,
           COALESCE(v.fails, v.regressed) AS fails
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
    store,
    qrels_id: int,
    runs: list[RunInfo],
    measures: list[str],
    *,
    relevance_level: int = 1,
    level: float = 0.95,
) -> list[Trend]:
    """Every system with at least two of the selected runs: its series, oldest first, with
    history's means and t intervals at ``level`` (cut to each measure's range) and the
    newest gate verdict of each run."""
    by_system: dict[str, list[RunInfo]] = {}
    for info in runs:
        by_system.setdefault(info.system, []).append(info)
    series = {s: members for s, members in by_system.items() if len(members) >= 2}
    if not series:
        return []
    stored = history(
        store, qrels=qrels_id, measures=measures, relevance_level=relevance_level, level=level
    )
    stored = stored.drop_duplicates("run", keep="last").set_index("run", drop=False)
    with store.connect() as conn:
        rows = conn.execute(_VERDICTS, {"qrels_id": qrels_id}).mappings().all()
        first_runs = set(conn.execute(_FIRST_RUNS, {"qrels_id": qrels_id}).scalars())
    verdicts: dict[tuple[int, str], str] = {}
    baselines: dict[int, str] = {}
    for row in rows:  # oldest first: the newest check of a run and measure wins
        # the gate's words: a measure that fails is "fail" (regressed) or "not shown"
        failed = "not shown" if row["status"] == "not_shown" else "fail"
        verdicts[(int(row["run_id"]), row["measure"])] = failed if row["fails"] else "pass"
        baselines[int(row["run_id"])] = row["baseline"]
    found = []
    for system, members in series.items():
        names = [m.name for m in members]
        rows_of = stored.reindex(names)
        tables = {
            key: pd.DataFrame(
                {m: _column(rows_of, m + suffix, m, clip=bool(suffix)) for m in measures}
            )
            for key, suffix in (("mean", ""), ("low", " low"), ("high", " high"))
        }
        ids = {m.id for m in members}
        times = [run_time(m) for m in members]
        found.append(
            Trend(
                system=system,
                runs=members,
                means=tables["mean"],
                low=tables["low"],
                high=tables["high"],
                segments=input_segments(stored.reset_index(drop=True), names),
                verdicts={k: v for k, v in verdicts.items() if k[0] in ids},
                baselines={k: v for k, v in baselines.items() if k in ids},
                first_runs=first_runs & ids,
                times=times,
                labels=run_labels(members, times),
            )
        )
    return found


def _column(frame: pd.DataFrame, column: str, measure: str, *, clip: bool) -> np.ndarray:
    if column not in frame.columns:
        return np.full(len(frame), math.nan)
    values = pd.to_numeric(frame[column], errors="coerce").astype(float).reset_index(drop=True)
    return (clipped(values, measure) if clip else values).to_numpy()
