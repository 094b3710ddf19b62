"""The gate's modes, margins, baselines, input checks and drift bounds, on runs whose
per-query values are known by construction.

Ten queries, each with one relevant document ``r`` and one judged non-relevant ``n``. A run
ranks ``r`` first (RR 1, P@1 1) or, on the queries it *demotes*, second (RR 0.5, P@1 0).
Expected numbers come from scipy (``ttest_rel(...).confidence_interval``) and hand
computation over those values, and from the ranked-overlap package for RBO.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from ranked_overlap import rbo as ranked_overlap_rbo
from scipy import stats as scipy_stats

from rankhouse import Warehouse
from rankhouse.regress import InputChangeError

QUERIES = [f"q{i:02d}" for i in range(1, 11)]


def _qrels(path: Path, extra: str = "") -> Path:
    path.write_text("".join(f"{q} 0 r 1\n{q} 0 n 0\n" for q in QUERIES) + extra)
    return path


def _run(folder: Path, name: str, demoted: set[str], tag: str = "sys", skip=()) -> Path:
    """``r`` first except on ``demoted``; the name in the scores keeps each file's content
    its own (a run is its content)."""
    salt = sum(map(ord, name)) / 1e6
    lines = []
    for q in QUERIES:
        if q in skip:
            continue
        first, second = ("n", "r") if q in demoted else ("r", "n")
        lines += [f"{q} Q0 {first} 1 {2 + salt} {tag}", f"{q} Q0 {second} 2 {1 + salt} {tag}"]
    path = folder / f"{name}.run"
    path.write_text("\n".join(lines) + "\n")
    return path


def _rr(demoted: set[str]) -> list[float]:
    return [0.5 if q in demoted else 1.0 for q in QUERIES]


@pytest.fixture
def stocked(tmp_path, run_cli):
    _qrels(tmp_path / "qrels.txt")
    assert run_cli("ingest", "qrels", "qrels.txt", "--name", "q").exit_code == 0
    for name, demoted in (("good", set()), ("dip3", set(QUERIES[:3]))):
        _ok(run_cli("ingest", "run", str(_run(tmp_path, name, demoted)), "--name", name))
    return tmp_path


def _ok(done) -> None:
    assert done.exit_code == 0, done.stderr


def _gate(run_cli, *args: str):
    done = run_cli("regress", *args, "--qrels", "q", "--format", "json")
    report = json.loads(done.stdout) if done.stdout.strip() else None
    return done, report


def _measure(report, name: str) -> dict:
    return next(m for m in report["measures"] if m["measure"] == name)


def test_non_inferiority_fails_a_drop_the_t_test_cannot_show(stocked, run_cli):
    done, report = _gate(run_cli, "dip3", "-b", "good", "-m", "RR", "--max-drop", "0.01")
    assert done.exit_code == 1, done.stderr
    run, base = _rr(set(QUERIES[:3])), _rr(set())
    test = scipy_stats.ttest_rel(run, base)
    ninety = test.confidence_interval(confidence_level=0.90)
    assert test.pvalue > 0.05  # not significant two-sided ...
    assert ninety.high < 0  # ... but the one-sided 5% test shows the drop: regressed
    assert done.stderr.splitlines()[-1] == (
        f"FAIL: RR regressed (-0.1500: the 90% interval of the difference lies below zero and "
        f"its bound {ninety.low:+.4f} below -0.0100) against good"
    )
    # 0.01 cannot be shown with ten queries this noisy: the gate says how often it fails
    assert "a margin of 0.01 fails unchanged runs about 94% of the time" in done.stderr
    row = _measure(report, "RR")
    bound = ninety.low  # one-sided at 0.05
    assert row["bound"] == pytest.approx(bound, abs=1e-12) and bound < -0.01
    interval = test.confidence_interval(confidence_level=0.95)
    assert row["delta_low"] == pytest.approx(interval.low, abs=1e-12)
    assert row["delta_high"] == pytest.approx(interval.high, abs=1e-12)
    d = [r - b for r, b in zip(run, base, strict=True)]
    mean = sum(d) / 10
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 9)
    assert row["hedges_gz"] == pytest.approx(mean / sd * (1 - 3 / (4 * 9 - 1)), rel=1e-12)
    assert row["p_value"] == pytest.approx(test.pvalue, rel=1e-9)
    assert (row["num_q"], row["margin"], row["status"], row["verdict"]) == (
        10,
        0.01,
        "regressed",
        "inconclusive",  # neither significant two-sided nor inside the margin
    )
    assert (row["fails"], row["regressed"], row["margin_source"]) == (True, True, "given")
    assert report["settings"]["mode"] == "non_inferiority"

    # the significance gate lets it through: a drop of 0.15, not significant
    done, report = _gate(run_cli, "dip3", "-b", "good", "-m", "RR", "--mode", "significance")
    assert done.exit_code == 0, done.stderr
    assert _measure(report, "RR")["status"] == "not_significant"
    assert math.isnan(_measure(report, "RR")["bound"] or math.nan)


def test_not_shown_is_no_regression(stocked, run_cli):
    """One query of ten loses 0.5: the 90% interval reaches above zero, so no drop is shown,
    and below -0.01, so non-inferiority is not shown either: exit 3, not 1."""
    _ok(run_cli("ingest", "run", str(_run(stocked, "dip1", {QUERIES[0]})), "--name", "dip1"))
    done, report = _gate(run_cli, "dip1", "-b", "good", "-m", "RR", "--max-drop", "0.01")
    assert done.exit_code == 3, done.stderr
    test = scipy_stats.ttest_rel(_rr({QUERIES[0]}), _rr(set()))
    ninety, interval = test.confidence_interval(0.90), test.confidence_interval(0.95)
    assert ninety.low < -0.01 < 0 < ninety.high  # by hand: -0.05 -+ 1.833 * 0.05
    last = done.stderr.splitlines()[-1]
    assert last.startswith(
        f"FAIL: RR not shown non-inferior (-0.0500: its bound {ninety.low:+.4f} lies below "
        f"-0.0100, but the interval [{interval.low:+.4f}, {interval.high:+.4f}] reaches above "
        "zero: no drop is shown either; these queries can show a margin of about "
    ), last
    assert last.endswith(" against good")
    assert (report["outcome"], report["not_shown"], report["regressed"]) == (
        "not_shown",
        ["RR"],
        [],
    )
    row = _measure(report, "RR")
    assert (row["status"], row["fails"], row["regressed"]) == ("not_shown", True, False)
    junit = ET.fromstring(
        run_cli("regress", "dip1", "-b", "good", "--qrels", "q", "-m", "RR", "--max-drop",
                "0.01", "--junit", "-").stdout
    )  # fmt: skip
    assert junit.find(".//failure").get("type") == "not_shown"

    # --not-shown pass: the same night passes, said so
    done, report = _gate(
        run_cli, "dip1", "-b", "good", "-m", "RR", "--max-drop", "0.01", "--not-shown", "pass"
    )
    assert done.exit_code == 0, done.stderr
    assert "RR not shown non-inferior, passed as asked" in done.stderr
    assert (report["passed"], report["outcome"], _measure(report, "RR")["fails"]) == (
        True,
        "passed",
        False,
    )


@pytest.mark.parametrize(
    ("measures", "options", "exit_code", "margins"),
    [
        (["RR:0.3"], [], 0, {"RR": 0.3}),  # the 90 % interval's low end: -0.29
        (["RR:0.25"], [], 1, {"RR": 0.25}),
        (["RR:30%"], [], 0, {"RR": 0.3}),  # of the baseline's mean, 1.0
        (["RR:20%"], [], 1, {"RR": 0.2}),
        (["RR"], ["--max-drop", "0.3", "--relative"], 0, {"RR": 0.3}),
        (["P@1:0.5", "RR"], ["--max-drop", "0.3"], 1, {"P@1": 0.5, "RR": 0.3}),
    ],
)
def test_margins_per_measure(stocked, run_cli, measures, options, exit_code, margins):
    args = [a for m in measures for a in ("-m", m)]
    done, report = _gate(run_cli, "dip3", "-b", "good", *args, *options)
    assert done.exit_code == exit_code, done.stderr
    assert {m["measure"]: m["margin"] for m in report["measures"]} == pytest.approx(margins)
    for row in report["measures"]:  # the status follows the bound against -margin
        assert row["regressed"] is (row["bound"] < -row["margin"])
    if "P@1:0.5" in measures:  # three queries lose 1: -0.3 +- 1.833 * 0.153 reaches -0.58
        assert report["regressed"] == ["P@1"]


def test_last_passed_and_best_skip_the_night_that_failed(tmp_path, run_cli):
    _qrels(tmp_path / "qrels.txt")
    assert run_cli("ingest", "qrels", "qrels.txt", "--name", "q").exit_code == 0
    nights = {
        "s1": {"q01"},  # RR 0.95
        "s2": set(),  # 1.0: the best
        "s3": set(QUERIES),  # 0.5: broken
        "s4": {"q02"},
        "s5": {"q03"},
    }
    for name, demoted in nights.items():
        _ok(run_cli("ingest", "run", str(_run(tmp_path, name, demoted)), "--name", name))
    gate = ["-m", "RR:0.2"]  # one query losing 0.5 stays within it (bound -0.142)
    expected = [
        ("s1", "last-passed", 0, None),
        ("s2", "last-passed", 0, "s1"),
        ("s3", "last-passed", 1, "s2"),
        ("s4", "last-passed", 0, "s2"),  # not s3, which failed
    ]
    for run, rule, code, baseline in expected:
        done, report = _gate(run_cli, run, "-b", rule, *gate, "--allow-missing-baseline")
        assert done.exit_code == code, done.stderr
        assert report["baseline"] == baseline
        assert report["settings"]["baseline_rule"] == "last-passed"
    # best: the passed run with the highest mean RR (s2's 1.0; s1 and s4 have 0.95)
    done, report = _gate(run_cli, "s5", "-b", "best", *gate)
    assert (done.exit_code, report["baseline"]) == (0, "s2"), done.stderr
    done, report = _gate(run_cli, "s5", "-b", "last-passed", *gate)
    assert (done.exit_code, report["baseline"]) == (0, "s4"), done.stderr
    done, report = _gate(run_cli, "s5", "-b", "previous", *gate)
    assert (done.exit_code, report["baseline"]) == (0, "s4"), done.stderr


def test_last_passed_when_no_earlier_run_passed_exits_2(tmp_path, run_cli):
    _qrels(tmp_path / "qrels.txt")
    assert run_cli("ingest", "qrels", "qrels.txt", "--name", "q").exit_code == 0
    for name, demoted in (("good", set()), ("o1", set(QUERIES)), ("o2", set())):
        tag = "sys" if name == "good" else "other"
        _ok(run_cli("ingest", "run", str(_run(tmp_path, name, demoted, tag)), "--name", name))
    assert _gate(run_cli, "o1", "-b", "good", "-m", "RR")[0].exit_code == 1
    done, _ = _gate(run_cli, "o2", "-b", "last-passed", "-m", "RR", "--allow-missing-baseline")
    assert done.exit_code == 2
    assert done.stderr.startswith("Error: no earlier run of system 'other' passed its gate")
    assert len(done.stderr.splitlines()) == 1


def _counts(db_path: Path) -> dict[str, int]:
    with Warehouse(db_path, read_only=True) as wh, wh.connect() as conn:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").scalar_one()
            for table in ("evaluations", "evaluation_values", "regress_checks", "runs")
        }


def test_a_baseline_judged_on_other_qrels_stops_the_gate(tmp_path, run_cli, db_path):
    _qrels(tmp_path / "v1.txt")
    _qrels(tmp_path / "v2.txt", extra="q10 0 z 1\n")  # one more judgment: other content
    for name in ("v1", "v2"):
        assert run_cli("ingest", "qrels", f"{name}.txt", "--name", name).exit_code == 0
    for name in ("i1", "i2", "i3", "i4"):
        _ok(run_cli("ingest", "run", str(_run(tmp_path, name, set())), "--name", name))
    gate = ["-b", "last-passed", "-m", "RR", "-m", "P@1"]
    _ok(run_cli("regress", "i1", *gate, "--qrels", "v1", "--allow-missing-baseline"))
    assert run_cli("regress", "i2", *gate, "--qrels", "v1").exit_code == 0
    before = _counts(db_path)
    done = run_cli("regress", "i3", *gate, "--qrels", "v2")
    assert done.exit_code == 2
    assert done.stderr.startswith(
        "Error: the baseline 'i2' was judged on other inputs than the run is evaluated on: "
        "RR, P@1: qrels content (the run's qrels 'v2' "
    ), done.stderr
    assert "the baseline's 'v1'" in done.stderr and "--allow-input-change" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert _counts(db_path) == before  # nothing evaluated or checked stays behind

    allowed = run_cli("regress", "i3", *gate, "--qrels", "v2", "--allow-input-change", "-f", "json")
    assert allowed.exit_code == 0, allowed.stderr
    report = json.loads(allowed.stdout)
    assert report["input_change"].startswith("RR, P@1: qrels content")
    assert "note: inputs changed, compared anyway: RR, P@1: qrels content" in allowed.stderr
    with Warehouse(db_path) as wh, wh.connect() as conn:
        stored = conn.execute(
            "SELECT input_change FROM regress_checks WHERE id = :id", {"id": report["check_id"]}
        ).scalar_one()
    assert stored == report["input_change"]
    # the next night is gated against i3, judged on v2: nothing differs
    done = run_cli("regress", "i4", *gate, "--qrels", "v2", "-f", "json")
    assert done.exit_code == 0, done.stderr
    assert (json.loads(done.stdout)["baseline"], json.loads(done.stdout)["input_change"]) == (
        "i3",
        None,
    )


def test_another_query_set_is_another_input(tmp_path, warehouse):
    warehouse.ingest_qrels(_qrels(tmp_path / "qrels.txt"), name="q")
    warehouse.ingest_run(_run(tmp_path, "all", set()), name="all")
    warehouse.ingest_run(_run(tmp_path, "fewer", set(), skip={"q10"}), name="fewer")
    gate = dict(baseline="all", qrels="q", measures=["RR"], missing_queries="skip")
    with pytest.raises(InputChangeError, match=r"RR \[missing_queries=skip\]: queries \(0 "):
        warehouse.regress("fewer", **gate)
    result = warehouse.regress("fewer", **gate, allow_input_change=True)
    assert result.input_change == (
        "RR [missing_queries=skip]: queries (0 queries only in the run's, 1 query only in the "
        "baseline's)"
    )
    assert result.passed and result.verdicts["num_q"].tolist() == [9]


def _top(path: Path) -> dict[str, list[str]]:
    found: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text().splitlines():
        q, _, doc, _, score, _ = line.split()
        found.setdefault(q, []).append((-float(score), doc))
    return {q: [d for _, d in sorted(rows)] for q, rows in found.items()}


def test_drift_bounds(stocked, run_cli):
    good, dip3 = _top(stocked / "good.run"), _top(stocked / "dip3.run")
    overlap = sum(good[q][0] == dip3[q][0] for q in QUERIES) / 10  # overlap@1 by hand: 0.7
    rbo = sum(ranked_overlap_rbo(dip3[q], good[q], 0.9) for q in QUERIES) / 10
    gate = ["dip3", "-b", "good", "-m", "RR:1"]  # a margin no drop exceeds: drift decides
    junit = stocked / "drift.xml"
    done, report = _gate(
        run_cli,
        *gate,
        "--max-drift",
        "overlap@1:0.7",
        "--max-drift",
        "rbo@2:0.98",
        "--junit",
        str(junit),
    )
    assert done.exit_code == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"FAIL: order drift rbo@2 {report['drift'][1]['value']:.4f} below its bound 0.9800 "
        "against good"
    )
    rows = {row["measure"]: row for row in report["drift"]}
    assert rows["overlap@1"]["value"] == pytest.approx(overlap) and overlap == 0.7
    assert rows["overlap@1"]["passed"] is True  # at least the bound
    assert rows["rbo@2"]["value"] == pytest.approx(rbo, abs=1e-12) and rbo < 0.98
    assert (rows["rbo@2"]["passed"], rows["rbo@2"]["num_q"], report["drifted"]) == (
        False,
        10,
        ["rbo@2"],
    )
    with Warehouse(stocked / "warehouse.duckdb") as wh, wh.connect() as conn:
        stored = conn.execute(
            "SELECT d.measure, d.value, d.passed, e.rbo FROM regress_drift d "
            "JOIN drift_evaluations e ON e.id = d.drift_id ORDER BY d.measure"
        ).all()
    assert [(m, passed) for m, _, passed, _ in stored] == [("overlap@1", True), ("rbo@2", False)]
    assert stored[1][1] == pytest.approx(rbo) and stored[1][3] == pytest.approx(rbo)
    # the JUnit file: one case a bound, the one below it failed as drift
    cases = ET.parse(junit).getroot().find("testsuite").findall("testcase")
    drift = {c.get("name"): c for c in cases if c.get("classname").endswith(".drift")}
    assert set(drift) == {"overlap@1", "rbo@2"}
    assert drift["overlap@1"].find("failure") is None
    assert drift["overlap@1"].find("system-out").text
    failure = drift["rbo@2"].find("failure")
    assert (failure.get("type"), failure.get("message")) == ("drift", "order drift rbo@2 failed")


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["-m", "RR:-1"], "Error: the margin of 'RR:-1' is neither a number at least 0"),
        (["-m", "RR", "--max-drift", "rbo@10:2"], "Error: --max-drift 'rbo@10:2' is not a drift"),
        (["-m", "RR", "--max-drift", "nope:0.5"], "Error: --max-drift 'nope:0.5' is not a drift"),
        (["-m", "RR", "--mode", "never"], "Invalid value for '--mode'"),
        (["-m", "RR", "--alpha", "0.6"], "Error: alpha must be below 0.5 in the non-inferiority"),
    ],
)
def test_bad_gate_options_exit_2(stocked, run_cli, options, said):
    done = run_cli("regress", "dip3", "-b", "good", "--qrels", "q", *options)
    assert done.exit_code == 2
    assert said in done.stderr


def test_the_python_api_takes_the_same_options(stocked, run_cli, db_path):
    done, report = _gate(
        run_cli, "dip3", "-b", "good", "-m", "RR:0.3", "--level", "0.9", "--max-drift", "tau@2:0"
    )
    with Warehouse(db_path) as wh:
        result = wh.regress(
            "dip3",
            baseline="good",
            qrels="q",
            measures=["RR:0.3"],
            level=0.9,
            max_drift="tau@2:0",
        )
    assert result.passed is (done.exit_code == 0) is True
    ours = result.verdict_rows[0]
    theirs = report["measures"][0]
    for key in ("delta_low", "delta_high", "bound", "hedges_gz", "margin", "verdict", "status"):
        assert ours[key] == theirs[key], key
    assert result.drift_rows[0]["value"] == report["drift"][0]["value"]
