"""examples/nightly.sh: a good night passes, a worse night fails the job with exit 1, a
night the queries cannot judge exits 3, and anything else that stops the gate (bad input, a
failed step) exits 2, never 1. Nights are weighed against the system's pinned reference; a
night that changes nothing passes; a renamed run tag is said.

The nights run in a warehouse prepared as the README's tour prepares it: the qrels stored
under a name of their own (``--name dl19``), which the script must find by the file's
content rather than look for a qrels set named after the file.
"""

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

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "nightly.sh"
EXAMPLES = SCRIPT.parent
RANKHOUSE = f"{sys.executable} -m rankhouse"
needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "RANKHOUSE": RANKHOUSE,
        "RANKHOUSE_DB": str(tmp_path / "rankhouse.duckdb"),
        "REPORT_DIR": str(tmp_path / "reports"),
        "MEASURES": "nDCG@10 AP",
        **extra,
    }


def _nightly(tmp_path: Path, run: Path | str, qrels: Path | str, **extra: str):
    return subprocess.run(
        ["bash", str(SCRIPT), str(run), str(qrels)],
        env=_env(tmp_path, **extra),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )


def _rankhouse(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "rankhouse", *args],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def tour_warehouse(tmp_path: Path) -> Path:
    """A warehouse as the README's tour makes it: qrels stored as ``dl19``, a run of the
    ``bm25`` system stored and evaluated."""
    _rankhouse(tmp_path, "ingest", "qrels", str(EXAMPLES / "qrels.txt"), "--name", "dl19")
    _rankhouse(
        tmp_path,
        "ingest", "run", str(EXAMPLES / "run.bm25.txt"),
        "--name", "bm25-1121", "--meta", "commit=3f2a9c1",
    )  # fmt: skip
    _rankhouse(tmp_path, "eval", "dl19", "bm25-1121", "-m", "nDCG@10", "-m", "AP")
    return tmp_path / "rankhouse.duckdb"


@needs_bash
def test_nights_in_the_tours_warehouse_are_gated_against_the_pinned_reference(
    tour_warehouse, tmp_path
):
    # night -> exit status; night 3 regresses. The reference is pinned on the first night:
    # the run the tour stored (the newest earlier run of bm25; none was ever gated), and it
    # stays, whatever the nights do
    expected = {1: 0, 2: 0, 3: 1, 4: 0}
    for night, code in expected.items():
        done = _nightly(
            tmp_path,
            EXAMPLES / "nights" / f"bm25.night{night}.txt",
            EXAMPLES / "qrels.txt",
            RUN_NAME=f"bm25-night{night}",
            COMMIT=f"c{night}",
            MAX_DROP="0.1",  # 8 queries: non-inferiority is shown to within 0.1 at best
        )
        assert done.returncode == code, done.stderr
        report = json.loads((tmp_path / "reports" / "regress.json").read_text())
        assert (report["run"], report["baseline"], report["qrels"]) == (
            f"bm25-night{night}",
            "bm25-1121",
            "dl19",
        )
        assert report["passed"] is (code == 0)
        assert report["settings"]["baseline_rule"] == "reference"
    with Warehouse(tour_warehouse) as wh:
        assert wh.qrels_sets()["name"].tolist() == ["dl19"]  # no set named after the file
        history = wh.history(system="bm25", measures=["nDCG@10", "AP"])
        with wh.connect() as conn:
            pinned = conn.execute("SELECT run_name, reason FROM gate_references").all()
    assert [row[0] for row in pinned] == ["bm25-1121"]
    assert pinned[0][1].startswith("pinned automatically")
    assert list(history["run"]) == ["bm25-1121"] + [f"bm25-night{n}" for n in range(1, 5)]
    assert list(history["gate"])[1:] == ["pass", "pass", "fail", "pass"]  # every night gated


@needs_bash
def test_the_first_night_stores_qrels_it_has_not_seen(tmp_path):
    done = _nightly(tmp_path, EXAMPLES / "nights" / "bm25.night1.txt", EXAMPLES / "qrels.txt")
    assert done.returncode == 0, done.stderr
    with Warehouse(tmp_path / "rankhouse.duckdb") as wh:
        assert wh.qrels_sets()["name"].tolist() == ["qrels"]  # as eval names a file's


def _broken_run(tmp_path: Path) -> Path:
    path = tmp_path / "broken.run"
    path.write_text("q1 Q0 doc1 1 not-a-score bm25\n")
    return path


def _qrels_as_run(tmp_path: Path) -> Path:
    return EXAMPLES / "qrels.txt"


def _missing(tmp_path: Path) -> Path:
    return tmp_path / "missing.run"


@needs_bash
@pytest.mark.parametrize("run", [_broken_run, _qrels_as_run, _missing])
def test_bad_input_exits_2_never_1(tour_warehouse, tmp_path, run):
    done = _nightly(tmp_path, run(tmp_path), EXAMPLES / "qrels.txt", RUN_NAME="bad")
    assert done.returncode == 2, done.stderr
    assert "FAIL" not in done.stderr


@needs_bash
def test_bad_qrels_exit_2(tour_warehouse, tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 doc1 relevant\n")
    done = _nightly(tmp_path, EXAMPLES / "nights" / "bm25.night1.txt", qrels)
    assert done.returncode == 2, done.stderr


@needs_bash
def test_a_regress_that_fails_without_a_verdict_exits_2(tour_warehouse, tmp_path):
    # regress exits 1 for an internal error too (a lost connection, an unwritable report):
    # without its JSON verdict, the job says error, not regression
    fake = tmp_path / "rankhouse-fake"
    fake.write_text(
        "#!/usr/bin/env bash\n"
        f'if [[ "$1" == regress ]]; then echo "Error: lost" >&2; exit 1; fi\n'
        f'exec {RANKHOUSE} "$@"\n'
    )
    fake.chmod(0o755)
    done = _nightly(
        tmp_path, EXAMPLES / "nights" / "bm25.night1.txt", EXAMPLES / "qrels.txt",
        RANKHOUSE=str(fake),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "not a regression" in done.stderr


@needs_bash
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
    assert "first run of system 'nightly'" in first.stderr

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
    # the page's comparison uses the gate's margins and says what the gate said
    assert "<th>gate</th>" in html
    assert html.count('<td class="text worse">regressed</td>') == 2

    with Warehouse(db) as wh:
        history = wh.history(system="nightly")
    assert list(history["run"]) == ["nightly-good", "nightly-bad"]
    assert list(history["commit"]) == ["aaa111", "bbb222"]
    assert list(history["gate"]) == ["first run", "fail"]


def test_nightly_usage(tmp_path):
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2
    assert "usage" in done.stderr


def _nights(tmp_path: Path, *files_and_names, **extra: str):
    """Run the recipe on each (file, RUN_NAME); the exit statuses and the last stderr."""
    codes, done = [], None
    for run, name in files_and_names:
        done = _nightly(tmp_path, run, EXAMPLES / "qrels.txt", RUN_NAME=name, **extra)
        codes.append(done.returncode)
    return codes, done


@needs_bash
def test_a_night_that_changes_nothing_passes(tmp_path):
    night = EXAMPLES / "nights"
    codes, done = _nights(
        tmp_path,
        (night / "bm25.night1.txt", "n1"),
        (night / "bm25.night2.txt", "n2"),
        (night / "bm25.night1.txt", "n3"),  # byte-identical to night 1: the reference
        (night / "bm25.night2.txt", "n4"),  # byte-identical to night 2
    )
    assert codes == [0, 0, 0, 0], done.stderr
    assert "PASS" in done.stderr
    with Warehouse(tmp_path / "rankhouse.duckdb") as wh:
        assert wh.run("n3")["name"] == "n1" and wh.run("n4")["name"] == "n2"


@needs_bash
def test_a_renamed_run_tag_warns_or_fails(tmp_path):
    _nights(tmp_path, (EXAMPLES / "nights" / "bm25.night1.txt", "n1"))
    renamed = tmp_path / "renamed.txt"
    text = (EXAMPLES / "nights" / "bm25.night2.txt").read_text()
    renamed.write_text(text.replace(" bm25\n", " bm25-v2\n"))
    codes, done = _nights(tmp_path, (renamed, "v2"), NEW_SYSTEM="fail")
    assert codes == [2], done.stderr
    assert "nearest known system is 'bm25'" in done.stderr
    codes, done = _nights(tmp_path, (renamed, "v2b"))
    assert codes == [0], done.stderr
    assert "warning: 'bm25-v2' is a new system" in done.stderr
    assert "the nearest known system is 'bm25'" in done.stderr


@needs_bash
def test_a_lasting_drop_fails_every_night_until_accepted(tmp_path):
    night = EXAMPLES / "nights"
    broken = night / "bm25.night3.txt"
    second = tmp_path / "broken-again.txt"  # another broken night: other content, same drop
    second.write_text(broken.read_text() + "\n")  # one more line end: other bytes, same run
    codes, done = _nights(
        tmp_path, (night / "bm25.night2.txt", "n1"), (broken, "n2"), (second, "n3")
    )
    assert codes == [0, 1, 1], done.stderr
    report = json.loads((tmp_path / "reports" / "regress.json").read_text())
    assert (report["baseline"], report["outcome"]) == ("n1", "regressed")
    accepted = _rankhouse(
        tmp_path, "gate", "accept", "n3", "--qrels", str(EXAMPLES / "qrels.txt"),
        "--reason", "the new tokenizer: accepted",
    )  # fmt: skip
    assert "n3 is now the reference of system 'bm25'" in accepted.stderr
    codes, done = _nights(tmp_path, (broken, "n4"))  # the broken level, now accepted
    assert codes == [0], done.stderr
    status = _rankhouse(tmp_path, "gate", "status", "--history", "--format", "csv").stdout
    assert "the new tokenizer: accepted" in status and "n3" in status
