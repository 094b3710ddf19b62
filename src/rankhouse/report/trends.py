"""Each system's series of runs, as the report's trends draw it: means with their intervals,
the gate's verdicts, and where the inputs of the series change; and the trend panels that
draw it, on an axis whose range is stated and not exaggerated.

A trend line joins the runs of one system in ingest order. Its values are history's
(:func:`rankhouse.history.history`: the stored means and their t intervals, for every run of
the series in a few set-based statements, however many nights it holds), each interval cut
to the range its measure declares (:func:`clipped`). Each run is placed at its date: the
``night`` metadata nightly runs carry (``--meta night=20261127T121314Z``), else its ingest
time (:func:`run_time`), and labelled by its date and commit (:func:`run_labels`), never by
its name. Where history says the inputs changed (its column ``new_inputs``: the signature of
what the values were computed from differs from the run before of the same system and qrels
set, or is unknown), the line is broken (:func:`input_segments`): points computed from other
inputs are not comparable, and a line between them would say they are.

**The band** of a run is the interval of its mean (compare's, Student's t over the
per-query values at 95% unless the report was told otherwise): the shaded area between the
lower and upper bounds, joined from run to run as the line is. Where the inputs change the
line and the band break, and a dashed rule marks the change.

**The axis rule** (:func:`axis_range`). The y axis covers every mean and interval bound shown,
and spans at least :data:`MIN_SPAN` (0.05) or :data:`MIN_FRACTION` (10%) of the largest
absolute value shown, whichever is larger, centred on the values, plus 5% on each side; for
a measure whose means are not negative it never goes below 0 (a band reaching below 0 is
cut there: the measure cannot be negative). A change of 0.0006 on a mean of 0.4 is then
about 1% of the panel's height, not all of it as an autoscaled axis draws it; a change as
wide as the intervals fills the panel as it should. Each panel states its range in its top
right corner (``axis 0.350–0.450``), so a reader never has to guess how far apart the
points are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..defaults import RECENT_RUNS
from ..history import history
from ..lazy import numpy as np
from ..lazy import pandas as pd
from ..measures.model import value_range
from .figures import _RC, GREEN, GREY, RED, _figure, color, to_svg

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
    declares (:func:`rankhouse.measures.model.value_range`: [0, 1] for precision, recall, AP,
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


#: The gate's verdicts on the selected runs (``:run_ids``), oldest check first.
_VERDICTS = """
    SELECT c.id AS check_id, c.run_id, b.name AS baseline, v.measure, v.status,
           COALESCE(v.fails, v.regressed) AS fails
    FROM regress_checks c
    JOIN regress_verdicts v ON v.check_id = c.id
    JOIN runs b ON b.id = c.baseline_run_id
    WHERE c.qrels_id = :qrels_id AND c.run_id = ANY(:run_ids)
    ORDER BY c.created_at, c.id
    """

_FIRST_RUNS = (
    "SELECT run_id FROM regress_checks WHERE qrels_id = :qrels_id AND baseline_run_id IS NULL "
    "AND run_id = ANY(:run_ids)"
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
    selected = sorted(m.id for members in series.values() for m in members)
    stored = history(
        store,
        qrels=qrels_id,
        measures=measures,
        relevance_level=relevance_level,
        level=level,
        run_ids=selected,
    )
    stored = stored.drop_duplicates("run", keep="last").set_index("run", drop=False)
    params = {"qrels_id": qrels_id, "run_ids": selected}
    with store.connect() as conn:
        rows = conn.execute(_VERDICTS, params).mappings().all()
        first_runs = set(conn.execute(_FIRST_RUNS, params).scalars())
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


MIN_SPAN = 0.05
"""The smallest range of a trend's y axis (before the 5% margins)."""
MIN_FRACTION = 0.10
"""... or this fraction of the largest absolute value shown, whichever is larger."""
MARGIN = 0.05
"""Room added above and below, as a fraction of the range."""
BAND_ALPHA = 0.18


def axis_range(values: Iterable[float], means: Iterable[float] = ()) -> tuple[float, float]:
    """The y limits of a trend panel showing ``values`` (means and interval bounds; NaN
    ignored): see the module for the rule. When every one of ``means`` is at least 0 (a
    measure that cannot be negative), the axis stops at 0 and a band below it is cut."""
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not finite:
        return 0.0, 1.0
    shown = [float(v) for v in means if v is not None and math.isfinite(float(v))]
    floor = 0.0 if shown and min(shown) >= 0 else -math.inf
    finite = [max(v, floor) for v in finite]
    low, high = min(finite), max(finite)
    need = max(MIN_SPAN, MIN_FRACTION * max(abs(low), abs(high)))
    if high - low < need:
        centre = (low + high) / 2
        low, high = centre - need / 2, centre + need / 2
        if low < 0 <= min(finite):  # widening never shows room for values that cannot be
            low, high = 0.0, need
    pad = (high - low) * MARGIN
    return max(low - pad, floor), high + pad


def axis_caption(low: float, high: float) -> str:
    """``axis 0.350–0.450``: the panel's range, with the decimals that tell its ends apart."""
    span = high - low
    digits = max(2, min(8, math.ceil(-math.log10(span)) + 2)) if span > 0 else 2
    return f"axis {low:.{digits}f}–{high:.{digits}f}"


DETAIL = RECENT_RUNS
"""A series of more runs is drawn twice per measure: the whole span as a trend (line, band,
failed gates) and its newest :data:`DETAIL` runs in detail, one marked point each."""
MAX_TICKS = 14
"""At most this many x labels on a panel of points: every k-th run is labelled."""


def trend_figure(trend: Trend, measures: Sequence[str], index: int, salt: str) -> str:
    """One panel per measure: the mean of each of the system's runs, oldest first, with its
    interval as a band; a point whose gate failed on that measure in red, a passed one
    ringed in green. Bands carry the gid ``<salt>-band<panel>-<segment>``.

    A series of more than :data:`DETAIL` runs gets two panels per measure: the whole span
    at the runs' dates (line and band, failed gates as red dots, no point per run) and the
    newest :data:`DETAIL` runs in detail (as a short series is drawn)."""
    if len(trend.runs) > DETAIL:
        return _year_figure(trend, measures, index, salt)
    import matplotlib

    count = len(trend.runs)
    n = len(measures)
    columns = 1 if n <= 2 else 3 if n % 3 == 0 or n >= 5 else 2
    rows = -(-n // columns)
    labels = _labels(trend)
    tall = max(len(label) for label in labels) > 8
    tone = color(index)
    with matplotlib.rc_context(_RC):
        width = 10.5 if columns == 3 else 8.0
        fig = _figure(width, 0.6 + rows * 2.2 + (0.9 if tall else 0.5))
        axes = fig.subplots(rows, columns, squeeze=False).ravel()
        titles: dict[str, str] = {}
        for panel, measure in enumerate(measures):
            ax = axes[panel]
            _points(ax, trend, measure, range(count), tone, f"{salt}-", panel, titles)
            _caption(ax, measure)
            last_in_column = panel + columns >= len(measures)
            _ticks(ax, labels, range(count), 12 if columns < 3 else 6, show=last_in_column)
        for ax in axes[len(measures) :]:
            ax.set_visible(False)
        return to_svg(fig, salt, titles)


def _year_figure(trend: Trend, measures: Sequence[str], index: int, salt: str) -> str:
    """Per measure, a row of two panels: every run at its date, then the newest DETAIL."""
    import matplotlib
    from matplotlib import dates

    count = len(trend.runs)
    tone = color(index)
    times = trend.times or [None] * count
    dated = all(t is not None for t in times) and len({t.date() for t in times}) > 1
    x = dates.date2num(times) if dated else np.arange(count, dtype=float)
    recent = range(count - DETAIL, count)
    labels = _labels(trend)
    with matplotlib.rc_context(_RC):
        fig = _figure(10.5, 0.4 + len(measures) * 2.3 + 0.6)
        grid = fig.add_gridspec(len(measures), 2, width_ratios=[3, 2])
        titles: dict[str, str] = {}
        for panel, measure in enumerate(measures):
            whole = fig.add_subplot(grid[panel, 0])
            detail = fig.add_subplot(grid[panel, 1])
            values = trend.means[measure].to_numpy(dtype=float)
            low = _bounds(trend.low, measure, count)
            high = _bounds(trend.high, measure, count)
            _bands(whole, trend, x, values, low, high, tone, f"{salt}-", panel)
            failed = [
                i
                for i, info in enumerate(trend.runs)
                if trend.verdicts.get((info.id, measure)) in ("fail", "not shown")
            ]
            bottom, top = axis_range([*values, *low, *high], values)
            if failed:  # one path of short red strokes: a marker each costs 3 times the bytes
                tick = (top - bottom) * 0.04
                xs = np.repeat(x[failed], 3)
                ys = np.column_stack(
                    [values[failed] - tick, values[failed] + tick, np.full(len(failed), np.nan)]
                ).ravel()
                xs[2::3] = np.nan
                whole.plot(xs, ys, color=RED, linewidth=1.2, zorder=2, solid_capstyle="butt")
            first = x[recent.start]
            whole.axvspan(first, x[-1], color=GREY, alpha=0.12, linewidth=0, zorder=0)
            whole.set_ylim(bottom, top)
            whole.set_xlim(x[0], x[-1])
            span = f"all {count} runs" + (
                f", {times[0]:%Y-%m-%d} to {times[-1]:%Y-%m-%d}" if dated else ""
            )
            whole.set_title(f"{measure}: {span}", loc="left")
            _axis_text(whole, axis_caption(bottom, top))
            if dated:
                locator = dates.AutoDateLocator(minticks=4, maxticks=10)
                whole.xaxis.set_major_locator(locator)
                whole.xaxis.set_major_formatter(dates.ConciseDateFormatter(locator))
            else:
                whole.set_xlabel("run # (ingest order)")
            _points(detail, trend, measure, recent, tone, f"{salt}-d", panel, titles)
            detail.set_title(f"{measure}: the newest {DETAIL}", loc="left")
            _ticks(detail, labels, recent, MAX_TICKS, show=True)
        return to_svg(fig, salt, titles)


def _labels(trend: Trend) -> list[str]:
    return trend.labels or [str(i + 1) for i in range(len(trend.runs))]


def _bands(ax, trend: Trend, x, values, low, high, tone, prefix: str, panel: int) -> None:
    """The line and the interval band of each segment; a dashed rule where inputs change."""
    count = len(values)
    for number, (first, last) in enumerate(trend.segments or [(0, count - 1)]):
        part = slice(first, last + 1)
        shown = ~(np.isnan(low[part]) | np.isnan(high[part]))
        if shown.any():
            ax.fill_between(
                x[part],
                low[part],
                high[part],
                where=shown,
                color=tone,
                alpha=BAND_ALPHA,
                linewidth=0,
                zorder=0,
                gid=f"{prefix}band{panel}-{number}",
            )
        ax.plot(x[part], values[part], color=tone, linewidth=1.4 if count < 60 else 1.0, zorder=1)
        if number:
            ax.axvline((x[first - 1] + x[first]) / 2, color=GREY, linestyle="--", linewidth=0.9)


def _points(ax, trend: Trend, measure: str, shown: range, tone, prefix, panel, titles) -> None:
    """The runs at ``shown`` positions as points on their line and band, at x = 0, 1, ...,
    each with its hover text, on a stated axis."""
    count = len(trend.runs)
    values = trend.means[measure].to_numpy(dtype=float)
    low = _bounds(trend.low, measure, count)
    high = _bounds(trend.high, measure, count)
    first = shown.start
    x = np.arange(count, dtype=float) - first
    part = slice(first, shown.stop)
    segments = [
        (max(a, first) - first, b - first)
        for a, b in (trend.segments or [(0, count - 1)])
        if b >= first
    ]
    piece = Trend(trend.system, trend.runs[part], trend.means, segments=segments)
    _bands(ax, piece, x[part], values[part], low[part], high[part], tone, prefix, panel)
    for i in shown:
        info = trend.runs[i]
        verdict = trend.verdicts.get((info.id, measure))
        face, edge, size = tone, tone, 5
        if verdict in ("fail", "not shown"):
            face, edge, size = RED, RED, 8
        elif verdict == "pass":
            face, edge, size = "white", GREEN, 7
        gid = f"{prefix}p{panel}-{i}"
        ax.plot(
            [x[i]],
            [values[i]],
            marker="o",
            markersize=size if len(shown) <= 12 else size - 1.5,
            markerfacecolor=face,
            markeredgecolor=edge,
            markeredgewidth=1.6 if len(shown) <= 12 else 1.2,
            linestyle="none",
            zorder=2,
            gid=gid,
        )
        titles[gid] = _point_title(info, measure, values[i], low[i], high[i], trend)
    bottom, top = axis_range([*values[part], *low[part], *high[part]], values[part])
    ax.set_ylim(bottom, top)
    ax.set_xlim(-0.5, len(shown) - 0.5)
    _axis_text(ax, axis_caption(bottom, top))


def _caption(ax, measure: str) -> None:
    ax.set_title(measure, loc="left")


def _axis_text(ax, text: str) -> None:
    ax.text(
        1, 1.02, text, transform=ax.transAxes, ha="right", va="bottom", fontsize=7, color="#57606a"
    )


def _ticks(ax, labels: list[str], shown: range, room: int, *, show: bool) -> None:
    """The runs' date/commit labels under a panel of points (every k-th when more than
    ``room``), or none on a panel with another below it."""
    positions = np.arange(len(shown))
    step = max(1, -(-len(shown) // room))
    # the newest run is always labelled: count the steps back from it
    chosen = positions[(len(shown) - 1 - positions) % step == 0]
    ax.set_xticks(chosen)
    if not show:
        ax.set_xticklabels([])
        return
    texts = [labels[shown.start + int(i)] for i in chosen]
    long = max((len(t) for t in texts), default=0) > 6 or len(chosen) > 8
    ax.set_xticklabels(
        texts, rotation=35 if long else 0, ha="right" if long else "center", fontsize=7.5
    )


def _bounds(frame, measure: str, count: int) -> np.ndarray:
    if frame is None or measure not in frame.columns:
        return np.full(count, np.nan)
    return frame[measure].to_numpy(dtype=float)


def _point_title(info, measure: str, value: float, low: float, high: float, trend: Trend) -> str:
    lines = [f"{info.name}: {measure} = {value:.4f}"]
    if not (math.isnan(low) or math.isnan(high)):
        lines[0] += f" [{low:.4f}, {high:.4f}]"
    lines.append(f"ingested {info.ingested_at}")
    lines += [f"{key} = {val}" for key, val in info.metadata.items()]
    verdict = trend.verdicts.get((info.id, measure))
    if verdict:
        lines.append(f"gate {verdict} against {trend.baselines.get(info.id, '?')}")
    return "\n".join(lines)
