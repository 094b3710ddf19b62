"""The trend panels: each run's mean in ingest order with its interval as a band, on an axis
whose range is stated and not exaggerated.

**The axis rule** (:func:`axis_range`). The y axis covers every mean and interval bound shown,
and spans at least :data:`MIN_SPAN` (0.05) or :data:`MIN_FRACTION` (10%) of the largest
absolute value shown, whichever is larger, centred on the values, plus 5% on each side; for
a measure whose means are not negative it never goes below 0 (a band reaching below 0 is
cut there: the measure cannot be negative). A change of 0.0006 on a mean of 0.4 is then
about 1% of the panel's height, not all of it as an autoscaled axis draws it; a change as
wide as the intervals fills the panel as it should. Each panel states its range in its top
right corner (``axis 0.350–0.450``), so a reader never has to guess how far apart the
points are.

**The band** of a run is the interval of its mean (compare's, Student's t over the
per-query values at 95% unless the report was told otherwise): the shaded area between the
lower and upper bounds, joined from run to run as the line is. Where the inputs of the
series change (history's ``new_inputs``, :func:`rankhouse.report.series.input_segments`) the
line and the band break, and a dashed rule marks the change.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ..lazy import numpy as np
from .figures import _RC, GREEN, GREY, RED, _figure, color, to_svg
from .series import Trend

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


DETAIL = 28
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
