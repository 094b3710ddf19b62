"""examples/nightly.sh: a good night passes, a worse night fails the job with exit 1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from series_helpers import RunSpec, make_runs, qrels_path

from rankhouse import Warehouse

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "nightly.sh"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_nightly_gate_twice(shared_dir, tmp_path):
    runs = make_runs(
        shared_dir,
        tmp_path / "runs",
        [RunSpec("good", "nightly", seed=2, signal=2.0), RunSpec("bad", "nightly", 3, 0.3)],
    )
    db = tmp_path / "nightly.duckdb"
    env = {
        **os.environ,
        "RANKHOUSE": f"{sys.executable} -m rankhouse",
        "RANKHOUSE_DB": str(db),
        "REPORT_DIR": str(tmp_path / "reports"),
        "MEASURES": "nDCG@10 AP",
    }

    def night(run: str, commit: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", str(SCRIPT), str(runs[run]), str(qrels_path(shared_dir))],
            env={**env, "RUN_NAME": f"nightly-{run}", "COMMIT": commit},
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=600,
        )

    first = night("good", "aaa111")
    assert first.returncode == 0, first.stderr
    assert "first of system 'nightly'" in first.stderr

    second = night("bad", "bbb222")
    assert second.returncode == 1, second.stderr
    assert "FAIL" in second.stderr

    report = json.loads((tmp_path / "reports" / "regress.json").read_text())
    assert report["baseline"] == "nightly-good"
    assert report["run"] == "nightly-bad"
    assert report["regressed"] == ["nDCG@10", "AP"]
    suite = ET.parse(tmp_path / "reports" / "regress.xml").getroot().find("testsuite")
    assert suite.get("failures") == "2"
    assert (
        (tmp_path / "reports" / "regress.md").read_text().startswith("## Regression check FAILED")
    )

    # the HTML report of the second night: tonight against the previous night, gate in red
    html = (tmp_path / "reports" / "report.html").read_text(encoding="utf-8")
    assert "<h4>nightly-bad vs nightly-good</h4>" in html
    assert '<td class="text fail">fail: nDCG@10, AP (vs nightly-good)</td>' in html

    with Warehouse(db) as wh:
        history = wh.history(system="nightly")
    assert list(history["run"]) == ["nightly-good", "nightly-bad"]
    assert list(history["commit"]) == ["aaa111", "bbb222"]
    assert list(history["gate"]) == ["first run", "fail"]


def test_nightly_usage(tmp_path):
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2
    assert "usage" in done.stderr
