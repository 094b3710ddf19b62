"""The report of the bundled examples in a real browser: it loads offline, requests nothing
but itself, logs no error, and its figures are drawn.

Needs Chromium (Debian's ``chromium`` package; ``.ci/run`` installs it). Without one the tests
skip, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from browser import Browser, find_chromium

ROOT = Path(__file__).resolve().parents[1]
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
    # every figure is drawn at a readable size: one trend, five runs against bm25, one PR
    sizes = browser.evaluate(
        "[...document.querySelectorAll('.figure svg')]"
        ".map(s => [s.getBoundingClientRect().width, s.getBoundingClientRect().height])"
    )
    assert len(sizes) == 1 + 5 + 1
    assert all(width > 400 and height > 200 for width, height in sizes), sizes
    failed = browser.evaluate("[...document.querySelectorAll('td.fail')].map(c => c.innerText)")
    assert failed == ["fail: nDCG@10, AP, P@5 (vs bm25-night2)"]
    shot = browser.screenshot()
    assert shot.startswith(b"\x89PNG\r\n\x1a\n") and len(shot) > 20_000
    (tmp_path / "report.png").write_bytes(shot)
