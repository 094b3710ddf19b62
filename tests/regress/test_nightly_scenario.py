"""Six nights of one system on DL19 through examples/nightly.sh with ``BASELINE=last-passed``
(the non-inferiority gate, a margin of 0.01): exits 0, 0, 1, 0, 1, 0.

1. a good run (the first of its series: passes);
2. slightly better (passes against night 1);
3. broken (fails against night 2);
4. recovered: gated against night 2, the last night that passed, never the broken night 3;
5. a real drop of nDCG@10 (three queries' rankings reversed) that a two-sided paired t-test
   cannot show with 43 queries: the significance gate passes it; non-inferiority fails it:
   nDCG@10 regressed (its 90% interval lies below zero: the one-sided test shows the drop),
   AP not shown (its interval reaches above zero and below -0.01);
6. as good as night 4 (gated against night 4: night 5 failed).

The runs are built deterministically from ../shared/tools/make_run.py; the expected numbers
come from pytrec_eval's per-query values and scipy's paired t-test, not from rankhouse.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scipy import stats as scipy_stats
from series_helpers import RunSpec, make_runs, qrels_path

from rankhouse import Warehouse

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "nightly.sh"
MEASURES = "nDCG@10 AP"
MARGIN = 0.01
pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")

#: night -> (exit status, the baseline regress chose)
EXPECTED = {
    1: (0, None),
    2: (0, "night-1"),
    3: (1, "night-2"),
    4: (0, "night-2"),
    5: (1, "night-4"),
    6: (0, "night-4"),
}
#: The same nights with the significance gate (today's gate before this change)
SIGNIFICANCE = {1: 0, 2: 0, 3: 1, 4: 0, 5: 0, 6: 0}


def _reversed_queries(source: Path, target: Path, queries: set[str]) -> Path:
    """``source`` with the rankings of ``queries`` turned upside down (scores reversed)."""
    rows: dict[str, list[list[str]]] = {}
    for line in source.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        rows.setdefault(fields[0], []).append(fields)
    lines = []
    for query, found in rows.items():
        if query in queries:
            for fields, score in zip(found, reversed([f[4] for f in found]), strict=True):
                fields[4] = score
        lines += [" ".join(fields) for fields in found]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def nights(shared_dir, tmp_path_factory) -> dict[int, Path]:
    folder = tmp_path_factory.mktemp("nights")
    specs = [
        RunSpec("night-1", "nightly", seed=2, signal=2.0),
        RunSpec("night-2", "nightly", seed=2, signal=2.1),
        RunSpec("night-3", "nightly", seed=3, signal=0.3),
        RunSpec("night-4", "nightly", seed=2, signal=2.05),
        RunSpec("night-6", "nightly", seed=2, signal=2.08),
    ]
    runs = make_runs(shared_dir, folder, specs)
    queries = sorted({line.split()[0] for line in runs["night-4"].read_text().splitlines()})
    runs["night-5"] = _reversed_queries(
        runs["night-4"], folder / "night-5.run", set(queries[::7][:3])
    )
    return {night: runs[f"night-{night}"] for night in range(1, 7)}


def _night(tmp_path: Path, db: Path, run: Path, qrels: Path, name: str, **extra: str):
    reports = tmp_path / "reports"
    done = subprocess.run(
        ["bash", str(SCRIPT), str(run), str(qrels)],
        env={
            **os.environ,
            "RANKHOUSE": f"{sys.executable} -m rankhouse",
            "RANKHOUSE_DB": str(db),
            "REPORT_DIR": str(reports),
            "HTML_REPORT": "",
            "MEASURES": MEASURES,
            "MAX_DROP": str(MARGIN),
            "BASELINE": "last-passed",
            "RUN_NAME": name,
            "COMMIT": name,
            **extra,
        },
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    path = reports / "regress.json"
    report = json.loads(path.read_text()) if path.exists() else None
    return done, report


def _per_query(pytrec, qrels: Path, run: Path, measure: str) -> dict[str, float]:
    judged: dict[str, dict[str, int]] = {}
    for line in qrels.read_text().splitlines():
        query, _, doc, grade = line.split()
        judged.setdefault(query, {})[doc] = int(grade)
    ranked: dict[str, dict[str, float]] = {}
    for line in run.read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        ranked.setdefault(query, {})[doc] = float(score)
    found = pytrec.evaluate(judged, ranked, {measure})
    return {query: values[measure] for query, values in found.items()}


def test_six_nights_gated_against_the_last_passed_night(shared_dir, nights, tmp_path, pytrec):
    db = tmp_path / "rankhouse.duckdb"
    qrels = qrels_path(shared_dir)
    reports = {}
    for night, (code, baseline) in EXPECTED.items():
        done, report = _night(tmp_path, db, nights[night], qrels, f"night-{night}")
        assert done.returncode == code, (night, done.stderr)
        if baseline is None:
            assert "first run of system 'nightly'" in done.stderr
            continue
        assert (report["run"], report["baseline"], report["passed"]) == (
            f"night-{night}",
            baseline,
            code == 0,
        )
        reports[night] = report
    assert (reports[5]["regressed"], reports[5]["not_shown"]) == (["nDCG@10"], ["AP"])
    with Warehouse(db) as wh:
        history = wh.history(system="nightly", measures=["nDCG@10", "AP"])
    assert list(history["gate"]) == ["first run", "pass", "fail", "pass", "fail", "pass"]
    assert history["inputs"].nunique() == 1  # one qrels content, one query set, one setting
    assert not history["new_inputs"].any()

    # night 5: a drop beyond the margin that the t-test cannot show, and the numbers the
    # gate judged it by, from pytrec_eval's per-query values and scipy
    run = _per_query(pytrec, qrels, nights[5], "ndcg_cut_10")
    base = _per_query(pytrec, qrels, nights[4], "ndcg_cut_10")
    queries = sorted(base)
    test = scipy_stats.ttest_rel([run[q] for q in queries], [base[q] for q in queries])
    measure = next(m for m in reports[5]["measures"] if m["measure"] == "nDCG@10")
    delta = sum(run[q] - base[q] for q in queries) / len(queries)
    assert delta < -MARGIN and test.pvalue > 0.05
    assert test.confidence_interval(confidence_level=0.90).high < 0  # one-sided: a drop
    assert measure["p_value"] == pytest.approx(test.pvalue, rel=1e-9)
    bound = test.confidence_interval(confidence_level=0.90).low  # one-sided at alpha 0.05
    assert measure["bound"] == pytest.approx(bound, abs=1e-12) and bound < -MARGIN
    interval = test.confidence_interval(confidence_level=0.95)
    assert (measure["delta_low"], measure["delta_high"]) == (
        pytest.approx(interval.low, abs=1e-12),
        pytest.approx(interval.high, abs=1e-12),
    )
    assert (measure["num_q"], measure["status"], measure["verdict"]) == (
        43,
        "regressed",
        "inconclusive",
    )


def test_the_significance_gate_passes_night_5(shared_dir, nights, tmp_path):
    db = tmp_path / "rankhouse.duckdb"
    for night, code in SIGNIFICANCE.items():
        done, report = _night(
            tmp_path, db, nights[night], qrels_path(shared_dir), f"night-{night}",
            MODE="significance",
        )  # fmt: skip
        assert done.returncode == code, (night, done.stderr)
        if night == 5:  # not significant: passed, although the drop exceeds the margin
            measure = next(m for m in report["measures"] if m["measure"] == "nDCG@10")
            assert (measure["status"], -measure["delta"] > MARGIN) == ("not_significant", True)
    assert report["settings"]["mode"] == "significance"
    assert (report["run"], report["baseline"]) == ("night-6", "night-5")  # night 5 passed
