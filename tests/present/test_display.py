"""Notebook display: results render as HTML tables with the report's round and highlight."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from report_helpers import EXAMPLES, QRELS, build_example_warehouse

import rankhouse
from rankhouse import RankhouseError, Warehouse
from rankhouse.present.frames import ComparisonFrame, HistoryFrame


@pytest.fixture(scope="module")
def example_wh(tmp_path_factory):
    with Warehouse(build_example_warehouse(tmp_path_factory.mktemp("d") / "w.duckdb")) as wh:
        yield wh


def _cells(html: str) -> list[tuple[str, str]]:
    """(class, text) of each cell; a mean without the half-width of its interval."""
    return [
        (css, text.split(" ±")[0])
        for css, text in re.findall(r'<td(?: class="([^"]*)")?>([^<]*)</td>', html)
    ]


def test_evaluation_result(example_wh):
    result = example_wh.evaluate(
        qrels="qrels.txt", runs=["bm25", "dense"], measures=["nDCG@10", "AP"]
    )
    html = result._repr_html_()
    assert html.startswith('<table class="rh-table"><caption>qrels qrels.txt; 8 queries')
    summary = result.summary.set_index("run")
    cells = _cells(html)
    # dense has the higher mean of both measures: its cells are bold, 4 decimals
    assert ("best-bold", f"{summary.at['dense', 'nDCG@10']:.4f}") in cells
    assert ("", f"{summary.at['bm25', 'nDCG@10']:.4f}") in cells
    styled = result.styled(round={"AP": 2}, highlight="color")
    assert ("best-color", f"{summary.at['dense', 'AP']:.2f}") in _cells(str(styled))
    assert ("best-color", f"{summary.at['dense', 'nDCG@10']:.4f}") in _cells(str(styled))
    assert "best-" not in str(result.styled(highlight=None))


def test_evaluate_frames_result_displays():
    result = rankhouse.evaluate(run=EXAMPLES / "run.bm25.txt", qrels=QRELS, measures=["P@5"])
    # one run: nothing marked; the mean with the half-width of its 95% t interval
    assert '>bm25</td><td class="text">8</td><td>0.2250 ±0.1657</td>' in result._repr_html_()


def test_comparison(example_wh):
    frame = example_wh.compare(
        qrels="qrels.txt",
        runs=["bm25", "bm25-night3", "bm25-night4"],
        measures=["AP"],
        baseline="bm25",
    )
    assert isinstance(frame, ComparisonFrame)
    html = frame._repr_html_()
    assert '<th colspan="10" class="group">AP</th>' in html
    assert "<th>95% CI</th><th>delta</th><th>95% CI</th><th>g_z</th>" in html
    assert "bm25 (baseline)" in html
    night3 = frame.set_index("run").loc["bm25-night3"]
    night4 = frame.set_index("run").loc["bm25-night4"]
    assert ("", f"{night3['delta']:.4f}") in _cells(html)
    low, high = night3["delta_low"], night3["delta_high"]
    assert ("", f"[{low:.4f}, {high:.4f}]") in _cells(html)
    word = night3["verdict"]
    shown = f"inconclusive (MDE {night3['mde']:.4f})" if word == "inconclusive" else word
    tone = word if word in ("better", "worse") else ""
    assert (f"text {tone}".strip(), shown) in _cells(html)
    assert ("best-bold", f"{night4['mean']:.4f}") in _cells(html)
    assert f"+{night4['delta']:.4f}" in html
    # a selection of it is a plain DataFrame, shown the usual way
    assert type(frame[frame["run"] == "bm25"]) is pd.DataFrame
    assert type(frame.head(2)) is pd.DataFrame
    means_only = example_wh.compare(
        qrels="qrels.txt", runs=["bm25", "dense"], measures=["AP", "P@5"]
    )
    html = means_only.styled(round=1)._repr_html_()
    assert '<th colspan="2" class="group">AP</th><th colspan="2" class="group">P@5</th>' in html
    assert "p corr" not in html and "verdict" not in html
    assert ("best-bold", "0.1") in _cells(html) or ("best-bold", "0.3") in _cells(html)


def test_history(example_wh):
    frame = example_wh.history(system="bm25", measures=["nDCG@10"])
    assert isinstance(frame, HistoryFrame)
    html = frame._repr_html_()
    assert '<td class="text fail">fail</td>' in html
    assert '<th class="text">commit</th>' in html and ">c95b2fa<" in html
    best = frame["nDCG@10"].max()
    assert ("best-bold", f"{best:.4f}") in _cells(html)
    frame.attrs["display"] = {"round": 2, "highlight": "color"}
    assert ("best-color", f"{best:.2f}") in _cells(frame._repr_html_())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"round": "2"}, "round must be a number of decimals from 0 to 15, not '2'"),
        ({"round": {"AP": 99}}, "not 99"),
        ({"highlight": "underline"}, "highlight must be 'bold', 'color' ('colour') or None"),
    ],
)
def test_bad_display_options(example_wh, options, message):
    frame = example_wh.history(system="bm25", measures=["AP"])
    with pytest.raises(RankhouseError, match=re.escape(message)):
        frame.styled(**options)
