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
from .figures import _RC, GREEN, GREY, RED, _figure, _short, color, to_svg
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


def trend_figure(trend: Trend, measures: Sequence[str], index: int, salt: str) -> str:
    """One panel per measure: the mean of each of the system's runs, oldest first, with its
    interval as a band; a point whose gate failed on that measure in red, a passed one
    ringed in green. Bands carry the gid ``<salt>-band<panel>-<segment>``."""
    import matplotlib

    count = len(trend.runs)
    n = len(measures)
    columns = 1 if n <= 2 else 3 if n % 3 == 0 or n >= 5 else 2
    rows = -(-n // columns)
    # names under the panels while they have room; else numbers, the table's '#' column
    label_runs = count <= (12 if columns < 3 else 6)
    segments = trend.segments or [(0, count - 1)]
    tone = color(index)
    with matplotlib.rc_context(_RC):
        width = 10.5 if columns == 3 else 8.0
        fig = _figure(width, 0.6 + rows * 2.2 + (0.9 if label_runs else 0.2))
        axes = fig.subplots(rows, columns, squeeze=False).ravel()
        titles = {}
        x = np.arange(count)
        for panel, measure in enumerate(measures):
            ax = axes[panel]
            values = trend.means[measure].to_numpy(dtype=float)
            low = _bounds(trend.low, measure, count)
            high = _bounds(trend.high, measure, count)
            for number, (first, last) in enumerate(segments):
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
                        gid=f"{salt}-band{panel}-{number}",
                    )
                ax.plot(x[part], values[part], color=tone, linewidth=1.4, zorder=1)
                if number:
                    ax.axvline(first - 0.5, color=GREY, linestyle="--", linewidth=0.9)
            for i, info in enumerate(trend.runs):
                verdict = trend.verdicts.get((info.id, measure))
                face, edge, size = tone, tone, 5
                if verdict == "fail":
                    face, edge, size = RED, RED, 8
                elif verdict == "pass":
                    face, edge, size = "white", GREEN, 7
                gid = f"{salt}-p{panel}-{i}"
                ax.plot(
                    [x[i]],
                    [values[i]],
                    marker="o",
                    markersize=size,
                    markerfacecolor=face,
                    markeredgecolor=edge,
                    markeredgewidth=1.6,
                    linestyle="none",
                    zorder=2,
                    gid=gid,
                )
                titles[gid] = _point_title(info, measure, values[i], low[i], high[i], trend)
            bottom, top = axis_range([*values, *low, *high], values)
            ax.set_ylim(bottom, top)
            ax.set_title(measure, loc="left")
            ax.text(
                1,
                1.02,
                axis_caption(bottom, top),
                transform=ax.transAxes,
                ha="right",
                va="bottom",
                fontsize=7,
                color="#57606a",
            )
            ax.set_xlim(-0.5, count - 0.5)
            ax.set_xticks(x)
            last_in_column = panel + columns >= len(measures)
            if last_in_column and label_runs:
                ax.set_xticklabels(
                    [_short(i.name) for i in trend.runs], rotation=30, ha="right", fontsize=8
                )
            elif last_in_column:
                ax.set_xticklabels([str(i + 1) for i in x], fontsize=7)
                ax.set_xlabel("run # (ingest order; the table below names them)")
            else:
                ax.set_xticklabels([])
        for ax in axes[len(measures) :]:
            ax.set_visible(False)
        return to_svg(fig, salt, titles)


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
