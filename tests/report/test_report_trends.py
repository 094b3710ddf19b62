"""The report's trends and comparison as issue 28 asks: interval bands, an axis whose range is
stated and not exaggerated, trend lines that break where the inputs change, compare's panels
with its verdict words, per-query sections collapsed beyond the first few; the notebook's
display of a comparison the same.

The rendering in a real browser (widths, bands drawn, sections collapsed) is
test_report_browser.py's.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
import scipy.stats
from report_helpers import EXAMPLES, QRELS, read_trec

from rankhouse.report.gather import gather
from rankhouse.report.report import OPEN_PAIRS, build_report
from rankhouse.report.trends import (
    RunInfo,
    Trend,
    axis_caption,
    axis_range,
    input_segments,
    trend_figure,
)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        # a change of 0.0006 on 0.4: the axis spans 0.05 (+5% each side), centred
        ([0.4, 0.4006], (0.4003 - 0.025 - 0.0025, 0.4003 + 0.025 + 0.0025)),
        # intervals wider than the minimum: their range, +5% each side
        ([0.1, 0.9], (0.1 - 0.04, 0.9 + 0.04)),
        # large values: 10% of the largest (201), not 0.05
        ([2000.0, 2010.0], (2005 - 100.5 - 10.05, 2005 + 100.5 + 10.05)),
        # near zero, widening stops at 0 (a mean cannot be negative)
        ([0.01, 0.012], (0.0, 0.05 + 0.0025)),
        ([float("nan"), 0.5, 0.5], (0.475 - 0.0025, 0.525 + 0.0025)),
    ],
)
def test_the_axis_rule(values, expected):
    assert axis_range(values, values) == pytest.approx(expected, abs=1e-12)


def test_a_band_below_zero_is_cut_at_zero_when_the_means_are_not_negative():
    low, high = axis_range([0.2, 0.3, -0.1, 0.6], means=[0.2, 0.3])
    assert low == 0.0 and high == pytest.approx(0.6 + 0.03)
    assert axis_range([-0.2, 0.3], means=[-0.2, 0.3])[0] == pytest.approx(-0.225)


def test_the_axis_caption_tells_its_ends_apart():
    assert axis_caption(0.3728, 0.4278) == "axis 0.3728–0.4278"
    assert axis_caption(0.06, 0.94) == "axis 0.060–0.940"
    assert axis_caption(1894.45, 2115.55) == "axis 1894.45–2115.55"


def _trend(means, low, high, segments=()) -> Trend:
    runs = [
        RunInfo(i, f"night-{i}", "nightly", f"2026-11-0{i + 1}", 8, {}) for i in range(len(means))
    ]
    return Trend(
        system="nightly",
        runs=runs,
        means=pd.DataFrame({"AP": means}),
        low=pd.DataFrame({"AP": low}),
        high=pd.DataFrame({"AP": high}),
        segments=list(segments),
    )


def test_a_tiny_change_is_drawn_on_the_stated_minimum_span():
    trend = _trend([0.4, 0.4006], [float("nan")] * 2, [float("nan")] * 2)
    svg = trend_figure(trend, ["AP"], 0, "x")
    assert "axis 0.3728–0.4278" in svg
    assert 'id="x-band' not in svg  # no interval, no band


def test_history_frame_inputs_break_the_trend(example_wh):
    """The real history frame marks no change of inputs in the bm25 series: one line; where
    its ``new_inputs`` says the inputs changed, the line and its band break."""
    frame = example_wh.history(qrels="qrels.txt", system="bm25")
    runs = list(frame["run"])
    assert len(runs) == 5
    assert not frame["new_inputs"].any()
    assert input_segments(frame, runs) == [(0, 4)]
    changed = frame.assign(new_inputs=[False, False, True, False, False])
    assert input_segments(changed, runs) == [(0, 1), (2, 4)]
    assert input_segments(changed, runs[2:]) == [(0, 2)]
    unknown = frame.assign(new_inputs=[False, True, False, True, True])  # an unknown in 2nd
    assert input_segments(unknown, runs) == [(0, 0), (1, 2), (3, 3), (4, 4)]
    (section,) = gather(example_wh, systems=["bm25"]).sections
    (trend,) = section.trends
    assert trend.segments == [(0, 4)]  # what history says today
    trend.segments = input_segments(changed, [r.name for r in trend.runs])
    svg = trend_figure(trend, ["AP"], 0, "y")
    assert 'id="y-band0-0"' in svg and 'id="y-band0-1"' in svg
    assert "stroke-dasharray" in svg  # the rule that marks the change


def test_the_bands_are_the_t_intervals_of_the_means(example_wh, pytrec):
    (section,) = gather(example_wh, systems=["bm25"], measures=["nDCG@10"]).sections
    (trend,) = section.trends
    qrels = read_trec(QRELS, 4)
    found = pytrec.evaluate(qrels, read_trec(EXAMPLES / "run.bm25.txt", 6), ["ndcg_cut_10"])
    values = [found.get(q, {}).get("ndcg_cut_10", 0.0) for q in qrels]
    mean = sum(values) / len(values)
    low, high = scipy.stats.t.interval(
        0.95, len(values) - 1, loc=mean, scale=scipy.stats.sem(values)
    )
    assert trend.runs[0].name == "bm25"
    assert trend.low.at[0, "nDCG@10"] == pytest.approx(low, abs=1e-14)
    assert trend.high.at[0, "nDCG@10"] == pytest.approx(high, abs=1e-14)
    text = build_report(example_wh, systems=["bm25"], measures=["nDCG@10"])
    assert f"bm25: nDCG@10 = {mean:.4f} [{low:.4f}, {high:.4f}]" in text  # the point's tip
    assert re.search(r"axis -?\d\.\d+–\d\.\d+", text)


def test_the_comparison_is_compares_panels_and_the_pairs_collapse(example_wh):
    text = build_report(example_wh, baseline="bm25", measures=["nDCG@10", "AP"])
    frame = example_wh.compare(
        qrels="qrels.txt",
        runs=["bm25", "dense", *[f"bm25-night{i}" for i in range(1, 5)]],
        measures=["nDCG@10", "AP"],
        baseline="bm25",
    )
    panels = text.split('<div class="rh-panels">', 1)[1].split("</div>", 1)[0]
    for row in frame.itertuples():
        if row.run == "bm25":
            continue
        line = panels.split(f'<td class="text">{row.run}</td>')[1 + (row.measure == "AP")]
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", line.split("</tr>", 1)[0])
        assert cells[0] == f"{row.mean:.4f}"
        sign = "+" if row.delta > 0 else "-"
        bounds = f"[{row.delta_low:.4f}, {row.delta_high:.4f}]"
        assert cells[1] == f"{sign}{abs(row.delta):.4f} {bounds}"
        assert cells[2] == f"{row.hedges_gz:+.2f}" and cells[3] == row.verdict
    assert "inconclusive: neither shown; MDE is the smallest true difference" in text
    opened = re.findall(r'<details class="pair"( open)?><summary><h4>([^<]*)</h4>', text)
    assert [bool(is_open) for is_open, _ in opened] == [True] * OPEN_PAIRS + [False] * 2
    assert opened[0][1] == "bm25-night4 vs bm25"  # newest first
    assert text.count("<svg") == 1 + OPEN_PAIRS + 1  # trends, the open pairs' pictures, PR
    assert '<details class="wide"><summary>every column' in text


def test_the_notebook_shows_the_same_panels(example_wh):
    frame = example_wh.compare(
        qrels="qrels.txt", runs=["bm25", "dense"], measures=["AP"], baseline="bm25"
    )
    html = frame._repr_html_()
    assert html.startswith("<style>") and '<div class="rh-panels">' in html
    row = frame.set_index("run").loc["dense"]
    assert f'<td class="text">{row["verdict"]}</td>' in html.split("<details>")[0]
    assert "<details><summary>every column" in html
    means_only = example_wh.compare(qrels="qrels.txt", runs=["bm25", "dense"], measures=["AP"])
    plain = means_only._repr_html_()
    assert "<th>95% CI</th>" in plain and "verdict" not in plain.split("<details>")[0]
