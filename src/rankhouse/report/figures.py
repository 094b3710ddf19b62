"""The report's pictures: matplotlib figures written as inline SVG (no script, no font file).

Figures are built with :class:`matplotlib.figure.Figure` directly (no pyplot, no global
backend state). Text stays text (``svg.fonttype = 'none'``): the browser draws it with a
local sans-serif font, so nothing is embedded or fetched and the file stays small. Every
figure gets its own id salt, so the ids of several SVGs in one page never collide.

Large query sets are drawn at a bounded cost: per-query differences sorted from worst to
best become one filled outline of at most :data:`MAX_CURVE_POINTS` points (a sorted curve
loses nothing visible at that density), and a scatter of more than :data:`MAX_SCATTER`
queries becomes a grid of counts.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Sequence

from ..errors import count
from ..lazy import numpy as np
from ..lazy import pandas as pd

MAX_LABELLED = 60
"""Up to this many queries, every delta bar carries its query id."""
MAX_BARS = 400
"""Up to this many queries, one bar per query; above, a filled outline."""
MAX_CURVE_POINTS = 300
MAX_SCATTER = 600
"""Up to this many queries, one dot per query; above, a grid of counts."""
GRID_BINS = 24

RED = "#c0182a"
GREEN = "#1a7f37"
GREY = "#8c959f"
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#7f7f7f",
    "#d62728",
)

_RC = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica", "Liberation Sans"],
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": "#e4e7eb",
    "grid.linewidth": 0.6,
}


def color(index: int) -> str:
    """The colour of the ``index``-th run or system."""
    return PALETTE[index % len(PALETTE)]


def _figure(width: float, height: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def to_svg(fig, salt: str, titles: dict[str, str] | None = None) -> str:
    """The figure as an ``<svg>`` element for inlining, with hover ``<title>`` texts.

    Args:
        fig: a matplotlib Figure.
        salt: makes the SVG's internal ids unique in the page.
        titles: artist gid -> tooltip text (an SVG ``<title>`` inside that artist's group).
    """
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({**_RC, "svg.hashsalt": salt}):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    text = _ATTRIBUTE.sub(lambda m: m[1] + _DECIMALS.sub(r"\1", m[2]) + '"', text)
    for gid, tip in (titles or {}).items():
        text = text.replace(f'<g id="{gid}">', f'<g id="{gid}"><title>{html.escape(tip)}</title>')
    return text


# Coordinates to 1/100 of a point: finer than any screen shows, and half the bytes.
_ATTRIBUTE = re.compile(r'(\s(?:d|x|y|width|height|transform)=")([^"]*)"')
_DECIMALS = re.compile(r"(\d\.\d\d)\d+")


def _short(name: str, width: int = 22) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def comparison_figure(
    run: str, baseline: str, pairs: dict[str, pd.DataFrame], index: int, salt: str
) -> str:
    """Per measure, the per-query difference run - baseline sorted from worst to best, and
    the baseline-vs-run scatter.

    The panels are placed at fixed positions (no layout engine): a report draws one of these
    figures per run, and matplotlib's constrained layout measured every tick label again for
    each, which cost more than drawing them.
    """
    import matplotlib
    from matplotlib.figure import Figure

    measures = list(pairs)
    most = max((len(p) for p in pairs.values()), default=0)
    # room under the panels: the query ids written upwards, else one axis label
    below = 0.45
    if most <= MAX_LABELLED:
        longest = max((len(str(q)) for p in pairs.values() for q in p["query_id"]), default=1)
        below = 0.22 + 0.065 * min(longest, 24)
    above, panel, width = 0.34, 1.9, 9.0
    row = above + panel + below
    height = row * len(measures) + 0.05
    titles: dict[str, str] = {}
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width, height))
        for number, measure in enumerate(measures):
            bottom = height - (number + 1) * row + below
            delta = fig.add_axes(_box(0.75, bottom, 5.6, panel, width, height))
            scatter = fig.add_axes(_box(7.05, bottom, panel, panel, width, height))
            frame = pairs[measure]
            titles |= _delta_axes(delta, frame, measure, run, baseline, f"{salt}-{number}")
            _scatter_axes(scatter, frame, measure, run, baseline, index)
        return to_svg(fig, salt, titles)


def _box(left: float, bottom: float, width: float, height: float, fig_w: float, fig_h: float):
    """An axes rectangle given in inches, as the figure fractions add_axes takes."""
    return [left / fig_w, bottom / fig_h, width / fig_w, height / fig_h]


def _title(ax, text: str, *, right: str | None = None) -> None:
    """A panel title as plain text above the axes (set_title re-measures the tick labels at
    every draw to place itself)."""
    ax.text(0, 1.04, text, transform=ax.transAxes, ha="left", va="bottom", fontsize=10)
    if right:
        ax.text(
            1,
            1.04,
            right,
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
            color="#57606a",
        )


def sorted_deltas(frame: pd.DataFrame) -> pd.DataFrame:
    """``query_id, run_value, baseline_value, delta`` from worst to best (query id breaks
    ties, so the order is stable)."""
    out = frame.assign(delta=frame["run_value"] - frame["baseline_value"])
    return out.sort_values(["delta", "query_id"], kind="stable").reset_index(drop=True)


def _delta_axes(
    ax, frame: pd.DataFrame, measure: str, run: str, baseline: str, salt: str
) -> dict[str, str]:
    """The sorted differences; returns the hover text of each bar (by gid)."""
    from matplotlib.patches import Polygon
    from matplotlib.ticker import MaxNLocator

    data = sorted_deltas(frame)
    deltas = data["delta"].to_numpy(dtype=float)
    n = len(deltas)
    better, worse = int(np.sum(deltas > 0)), int(np.sum(deltas < 0))
    _title(
        ax,
        f"{measure}: {run} − {baseline} per query ({worse} worse, {better} better, "
        f"{n - better - worse} tied)",
    )
    ax.axhline(0, color="#57606a", linewidth=0.8)
    ax.yaxis.set_major_locator(MaxNLocator(5))
    ax.set_ylabel("difference")
    titles: dict[str, str] = {}
    if n == 0:
        ax.set_xticks([])
        return titles
    if n <= MAX_BARS:
        colors = [RED if d < 0 else GREEN if d > 0 else GREY for d in deltas]
        bars = ax.bar(np.arange(n), deltas, width=0.8 if n <= MAX_LABELLED else 1.0, color=colors)
        for i, (bar, record) in enumerate(zip(bars, data.itertuples(), strict=True)):
            gid = f"{salt}-b{i}"
            bar.set_gid(gid)
            titles[gid] = (
                f"{record.query_id}: {baseline} {record.baseline_value:.4f}, "
                f"{run} {record.run_value:.4f} ({record.delta:+.4f})"
            )
        ax.set_xlim(-0.6, n - 0.4)
    else:
        positions = np.unique(np.linspace(0, n - 1, MAX_CURVE_POINTS).round().astype(int))
        xs, ys = positions, deltas[positions]
        for tone, side in ((RED, ys < 0), (GREEN, ys > 0)):
            if side.any():  # the outline of this side's points, closed along zero
                x, y = xs[side], ys[side]
                outline = np.column_stack([np.r_[x[0], x, x[-1]], np.r_[0, y, 0]])
                _add_shape(ax, Polygon(outline, closed=True, facecolor=tone, linewidth=0))
        ax.set_xlim(0, n - 1)
        spread = max(float(np.max(np.abs(deltas))), 1e-9) * 1.05
        ax.set_ylim(
            min(float(deltas.min()) * 1.05, 0), max(float(deltas.max()) * 1.05, 0) or spread
        )
    if n <= MAX_LABELLED:
        ax.set_xticks(np.arange(n))
        ax.set_xticklabels(data["query_id"].astype(str), rotation=90, fontsize=7)
        ax.grid(False, axis="x")
    else:
        ax.set_xticks([])
        ax.set_xlabel(f"{count(n, 'query')}, worst to best")
    return titles


def _scatter_axes(
    ax, frame: pd.DataFrame, measure: str, run: str, baseline: str, index: int
) -> None:
    from matplotlib.ticker import MaxNLocator

    xs = frame["baseline_value"].to_numpy(dtype=float)
    ys = frame["run_value"].to_numpy(dtype=float)
    low = float(min(np.min(xs, initial=0.0), np.min(ys, initial=0.0)))
    high = float(max(np.max(xs, initial=1.0), np.max(ys, initial=1.0)))
    pad = (high - low) * 0.04 or 0.04
    diagonal = [low - pad, high + pad]
    ax.plot(diagonal, diagonal, color="#57606a", linewidth=0.8, zorder=3)
    # One plot() per colour: SVG markers, a few bytes per dot (scatter() writes a group each).
    if len(xs) <= MAX_SCATTER:
        for tone, chosen in ((GREEN, ys > xs), (RED, ys < xs), (GREY, ys == xs)):
            ax.plot(xs[chosen], ys[chosen], "o", color=tone, alpha=0.75, markersize=3.8, mew=0)
    else:
        _count_grid(ax, xs, ys, low, high)
        ax.text(
            1,
            1.04,
            "queries per cell (log scale)",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
            color="#57606a",
        )
    ax.set_xlim(low - pad, high + pad)
    ax.set_ylim(low - pad, high + pad)
    ax.xaxis.set_major_locator(MaxNLocator(4, steps=[1, 2, 2.5, 5, 10]))
    ax.yaxis.set_major_locator(MaxNLocator(4, steps=[1, 2, 2.5, 5, 10]))
    ax.set_xlabel(f"{_short(baseline, 18)} {measure}", fontsize=8)
    ax.set_ylabel(f"{_short(run, 18)} {measure}", fontsize=8)


def _count_grid(ax, xs: np.ndarray, ys: np.ndarray, low: float, high: float) -> None:
    """Queries per cell of a GRID_BINS x GRID_BINS grid, darker for more (log scale): one SVG
    path per shade, its cells as sub-paths."""
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path as GeometryPath

    edges = np.linspace(low, high, GRID_BINS + 1)
    counts, _, _ = np.histogram2d(xs, ys, bins=[edges, edges])
    levels = np.ceil(np.log2(np.maximum(counts, 1))).astype(int)  # 1, 2, 3-4, 5-8, ...
    shades = _blues(int(levels.max()) + 1)
    step = edges[1] - edges[0]
    corners = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], dtype=float) * step
    codes = [GeometryPath.MOVETO, *[GeometryPath.LINETO] * 3, GeometryPath.CLOSEPOLY]
    for level in range(int(levels.max()) + 1):
        cx, cy = np.nonzero((counts > 0) & (levels == level))
        if len(cx) == 0:
            continue
        origins = np.column_stack([edges[cx], edges[cy]])
        vertices = (origins[:, None, :] + corners[None, :, :]).reshape(-1, 2)
        path = GeometryPath(vertices, codes * len(cx))
        _add_shape(ax, PathPatch(path, facecolor=shades[level], edgecolor="none", linewidth=0))


def _add_shape(ax, patch) -> None:
    """Add a patch in data coordinates without autoscaling to it: the caller sets the limits,
    and add_patch's walk over every vertex cost more than drawing."""
    patch.set_transform(ax.transData)
    patch.set_clip_path(ax.patch)
    ax.add_artist(patch)


def _blues(count: int) -> list[str]:
    """``count`` shades from light to dark blue."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps["Blues"]
    return [to_hex(cmap(0.3 + 0.7 * i / max(count - 1, 1))) for i in range(count)]


def precision_recall_figure(frame: pd.DataFrame, runs: Sequence[str], salt: str) -> str:
    """Mean interpolated precision at the 11 recall points, one curve per run."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        fig = _figure(7.0, 4.2)
        ax = fig.add_subplot()
        for i, run in enumerate(runs):
            points = frame[frame["run"] == run].sort_values("recall")
            ax.plot(
                points["recall"],
                points["precision"],
                marker="o",
                markersize=3.5,
                linewidth=1.4,
                color=color(i),
                label=_short(run, 30),
            )
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(0, 1.02)
        ax.set_xticks(np.linspace(0, 1, 11))
        ax.set_xlabel("recall")
        ax.set_ylabel("interpolated precision")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return to_svg(fig, salt)
