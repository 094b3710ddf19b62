"""The report of the bundled examples in a real browser: it loads offline, requests nothing
but itself, logs no error, and its figures are drawn.

Needs Chromium (Debian's ``chromium`` package; ``.ci/run`` installs it). Without one the tests
skip, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser import Browser, find_chromium

ROOT = Path(__file__).resolve().parents[2]
REPORT_SCRIPT = ROOT / "examples" / "report.sh"


@pytest.fixture(scope="module")
def browser():
    binary = find_chromium()
    if binary is None:
        reason = "no Chromium found (apt-get install chromium, or set $RANKHOUSE_CHROMIUM)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true and {reason}")
        pytest.skip(reason)
    with Browser(binary, width=1280, height=1600) as opened:
        yield opened


def test_the_probe_sees_requests_and_errors(browser):
    """The checks below can fail: a page that fetches and throws is caught."""
    page = (
        "data:text/html,<img src='http://127.0.0.1:9/x.png'>"
        "<script>console.error('boom'); undefinedFunction()</script>"
    )
    found = browser.load(page)
    assert "http://127.0.0.1:9/x.png" in found.requests
    assert any("boom" in e for e in found.errors)
    assert any(e.startswith("exception") for e in found.errors)


def test_example_report_opens_offline(browser, tmp_path):
    report = tmp_path / "report.html"
    done = subprocess.run(
        ["bash", str(REPORT_SCRIPT), str(report)],
        cwd=tmp_path,
        env={
            **os.environ,
            "RANKHOUSE": f"{sys.executable} -m rankhouse",
            "RANKHOUSE_DB": str(tmp_path / "example.duckdb"),
        },
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    url = report.as_uri()
    found = browser.load(url)
    assert found.requests == [url]  # the page itself, nothing else
    assert found.errors == []
    assert browser.evaluate("document.scripts.length") == 0
    headings = browser.evaluate("[...document.querySelectorAll('h3')].map(h => h.textContent)")
    assert headings[:4] == ["Runs", "Trends", "Comparison", "Precision-recall"]
    # every figure is drawn at a readable size: one trend, the newest three runs against bm25
    # (the older per-query sections hold their tables only), one PR
    sizes = browser.evaluate(
        "[...document.querySelectorAll('.figure svg')]"
        ".map(s => [s.getBoundingClientRect().width, s.getBoundingClientRect().height])"
    )
    assert len(sizes) == 1 + 3 + 1
    assert all(width > 400 and height > 200 for width, height in sizes), sizes
    # the paper's table is drawn, not only given as text: a header and one row per run
    paper = browser.evaluate(
        "[...document.querySelectorAll('table.paper')]"
        ".map(t => [t.getBoundingClientRect().height, t.rows.length])"
    )
    assert len(paper) == 1 and paper[0][0] > 60 and paper[0][1] > 2, paper
    failed = browser.evaluate("[...document.querySelectorAll('td.fail')].map(c => c.innerText)")
    # night 3 against bm25's reference: the bm25 run stored before the nights (pinned on
    # the first night as the newest earlier run of the system)
    assert failed == ["fail: nDCG@10, AP, P@5 (vs bm25)"]
    shot = browser.screenshot()
    assert shot.startswith(b"\x89PNG\r\n\x1a\n") and len(shot) > 20_000
    (tmp_path / "report.png").write_bytes(shot)


#: Set to 1 to write the screenshot the docs show (docs/report-10-runs.png):
#: RANKHOUSE_UPDATE_SCREENSHOT=1 python -m pytest tests/report/test_report_browser.py -k ten_runs
UPDATE_SCREENSHOT = os.environ.get("RANKHOUSE_UPDATE_SCREENSHOT") == "1"
SCREENSHOT = ROOT / "docs" / "report-10-runs.png"

#: Elements that stick out of the page's main column (ignoring what a closed <details> holds)
#: and scroll boxes that would have to scroll.
_OVERFLOW = """(() => {
  const main = document.querySelector('main').getBoundingClientRect();
  const shown = e => !e.closest('details:not([open])') && e.getBoundingClientRect().width > 0;
  const out = [...document.querySelectorAll('main *')].filter(shown)
    .filter(e => e.getBoundingClientRect().right > main.right + 0.5
              || e.getBoundingClientRect().left < main.left - 0.5)
    .map(e => e.tagName + '.' + e.className.baseVal + e.className);
  const scrolled = [...document.querySelectorAll('.scroll, .figure')].filter(shown)
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.className);
  return [document.documentElement.scrollWidth, window.innerWidth, out.slice(0, 10), scrolled];
})()"""


def test_ten_runs_and_five_measures_fit_the_page(browser, tmp_path):
    """A nightly series of 10 runs on 5 measures: nothing is wider than the page, every
    trend panel has its interval band and states its axis, and the per-query sections
    beyond the newest three are collapsed."""
    from report_helpers import TEN_MEASURES, TEN_NIGHTS, build_ten_night_warehouse

    from rankhouse import Warehouse
    from rankhouse.report.report import OPEN_PAIRS, write_report

    db = build_ten_night_warehouse(tmp_path / "ten.duckdb", tmp_path)
    report = tmp_path / "ten.html"
    with Warehouse(db) as wh:
        write_report(wh, report, baseline=TEN_NIGHTS[0], measures=TEN_MEASURES)
    found = browser.load(report.as_uri())
    assert found.errors == [] and found.requests == [report.as_uri()]
    width, viewport, outside, scrolled = browser.evaluate(_OVERFLOW)
    assert width <= viewport and outside == [] and scrolled == []
    # one band per trend panel, drawn with an area, and each panel's axis stated
    bands = browser.evaluate(
        "[...document.querySelectorAll('#s0-trends ~ .figure svg g[id*=\"-band\"] path')]"
        ".map(p => [p.closest('g[id]').id, p.getBBox().width, p.getBBox().height])"
    )
    assert sorted(b[0] for b in bands) == [f"s0t0-band{i}-0" for i in range(5)]
    assert all(w > 100 and h > 10 for _, w, h in bands), bands
    axes = browser.evaluate(
        "[...document.querySelectorAll('.figure svg text')].map(t => t.textContent)"
        ".filter(t => t.startsWith('axis '))"
    )
    assert len(axes) == 5 and all(re.fullmatch(r"axis \d\.\d+–\d\.\d+", a) for a in axes), axes
    # compare's panels: one table per measure, each run's verdict in words
    verdicts = browser.evaluate(
        "[...document.querySelectorAll('.rh-panels table')].map(t => t.rows.length)"
    )
    assert verdicts == [1 + 10] * 5  # the header and ten runs in each
    pairs = browser.evaluate(
        "[...document.querySelectorAll('details.pair')].map(d => "
        "[d.open, d.querySelector('summary').innerText, d.getBoundingClientRect().height])"
    )
    assert len(pairs) == 9
    assert [is_open for is_open, _, _ in pairs] == [True] * OPEN_PAIRS + [False] * (9 - OPEN_PAIRS)
    assert pairs[0][1] == f"{TEN_NIGHTS[-1]} vs {TEN_NIGHTS[0]}"  # newest first
    assert all(height < 60 for is_open, _, height in pairs if not is_open)  # the title only
    top = browser.evaluate(
        "document.getElementById('s0-trends').getBoundingClientRect().top + window.scrollY"
    )
    shot = browser.screenshot(clip={"x": 0, "y": top - 12, "width": 1280, "height": 1500})
    assert shot.startswith(b"\x89PNG\r\n\x1a\n") and len(shot) > 50_000
    if UPDATE_SCREENSHOT:
        SCREENSHOT.write_bytes(shot)
    else:
        assert SCREENSHOT.exists(), "RANKHOUSE_UPDATE_SCREENSHOT=1 writes the docs' screenshot"
