"""The regression gate: verdicts, exit codes, stored checks and the report files."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from scipy import stats as scipy_stats
from series_helpers import make_runs, qrels_path
from statsmodels.stats.multitest import multipletests

from rankhouse import NotFoundError, Warehouse
from rankhouse.regress import NoBaselineError, regress

MEASURES = ["nDCG@10", "AP"]


@pytest.fixture(scope="module")
def run_files(shared_dir, tmp_path_factory) -> dict[str, Path]:
    return make_runs(shared_dir, tmp_path_factory.mktemp("runs"))


def _prepare(db_path: Path, shared_dir: Path, run_files: dict[str, Path], *names: str) -> None:
    """A warehouse holding qrels 'dl19' and the named runs, ingested in this order."""
    with Warehouse(db_path) as wh:
        wh.ingest_qrels(qrels_path(shared_dir), name="dl19")
        for name in names:
            wh.ingest_run(run_files[name], name=name)


def _reference(wh: Warehouse, run: str, baseline: str, measure: str) -> tuple[float, float]:
    """(mean difference, scipy's paired t-test p-value) from evaluate's per-query values."""
    per_query = wh.evaluate("dl19", [run, baseline], [measure]).per_query
    wide = per_query.pivot(index="query", columns="run", values="value")
    delta = wide[run].mean() - wide[baseline].mean()
    return delta, scipy_stats.ttest_rel(wide[run], wide[baseline]).pvalue


# (run, extra options, expected exit code, expected status per measure)
CASES = [
    ("better", [], 0, {"nDCG@10": "improved", "AP": "improved"}),
    ("copy", [], 0, {"nDCG@10": "unchanged", "AP": "unchanged"}),
    ("night-3", [], 1, {"nDCG@10": "regressed", "AP": "regressed"}),
    (
        "slightly-worse",
        ["--max-drop", "0.02"],
        0,
        {"nDCG@10": "within_tolerance", "AP": "within_tolerance"},
    ),
    # no --max-drop: no tolerance in the significance mode, so AP's small drop is weighed too
    ("noisy-worse", [], 0, {"nDCG@10": "not_significant", "AP": "not_significant"}),
]


@pytest.mark.parametrize(
    ("run", "options", "exit_code", "statuses"), CASES, ids=[case[0] for case in CASES]
)
def test_exit_code_and_verdicts(
    run, options, exit_code, statuses, shared_dir, run_files, db_path, run_cli, tmp_path
):
    _prepare(db_path, shared_dir, run_files, "night-2", run)
    report = tmp_path / "report.json"
    args = ["regress", run, "--baseline", "night-2", "--qrels", "dl19", "--json", report]
    args += ["--mode", "significance"]  # the gate of these statuses
    for measure in MEASURES:
        args += ["-m", measure]
    result = run_cli(*args, *options)
    assert result.exit_code == exit_code, result.stderr
    verdicts = {m["measure"]: m for m in json.loads(report.read_text())["measures"]}
    assert {m: v["status"] for m, v in verdicts.items()} == statuses
    assert ("FAIL" if exit_code else "PASS") in result.stderr

    # The verdicts agree with the reference numbers: scipy on evaluate's per-query values.
    max_drop = float(options[1]) if options else 0.0
    with Warehouse(db_path) as wh:
        for measure, status in statuses.items():
            delta, p_value = _reference(wh, run, "night-2", measure)
            assert verdicts[measure]["delta"] == pytest.approx(delta, abs=1e-12)
            if status == "unchanged":
                assert delta == 0
                assert verdicts[measure]["p_value"] == 1.0
                continue
            assert verdicts[measure]["p_value"] == pytest.approx(p_value, rel=1e-9)
            if status == "improved":
                assert delta > 0
            elif status == "within_tolerance":
                assert 0 < -delta <= max_drop
            elif status == "not_significant":
                assert -delta > max_drop and p_value > 0.05
            else:
                assert -delta > max_drop and p_value <= 0.05


def test_previous_is_the_latest_earlier_run_of_the_same_system(shared_dir, run_files, warehouse):
    warehouse.ingest_qrels(qrels_path(shared_dir), name="dl19")
    for name in ("night-1", "copy", "night-2", "night-3"):  # copy has another tag
        warehouse.ingest_run(run_files[name], name=name)
    result = regress(warehouse, "night-3", baseline="previous", qrels="dl19", measures=MEASURES)
    assert result.baseline == "night-2"
    assert not result.passed
    assert result.regressed == ["nDCG@10", "AP"]
    assert regress(warehouse, "night-2", qrels="dl19", measures=MEASURES).baseline == "night-1"
    with pytest.raises(NoBaselineError, match="first of system 'nightly'"):
        regress(warehouse, "night-1", baseline="previous", qrels="dl19", measures=MEASURES)


def test_relative_tolerance(shared_dir, run_files, warehouse):
    warehouse.ingest_qrels(qrels_path(shared_dir), name="dl19")
    for name in ("night-2", "slightly-worse"):
        warehouse.ingest_run(run_files[name], name=name)
    summary = warehouse.evaluate("dl19", ["night-2", "slightly-worse"], MEASURES).summary
    base, run = (
        summary.set_index("run").loc["night-2"],
        summary.set_index("run").loc["slightly-worse"],
    )
    relative_drops = {m: (base[m] - run[m]) / base[m] for m in MEASURES}
    assert all(0.01 < drop < 0.05 for drop in relative_drops.values())

    def check(max_drop):
        return regress(
            warehouse,
            "slightly-worse",
            baseline="night-2",
            qrels="dl19",
            measures=MEASURES,
            max_drop=max_drop,
            relative=True,
        )

    loose = check(0.05)
    assert loose.passed
    assert list(loose.verdicts["drop"]) == pytest.approx(list(relative_drops.values()))
    assert not check(0.01).passed


def test_correction_over_the_measures_of_a_check(shared_dir, run_files, warehouse):
    warehouse.ingest_qrels(qrels_path(shared_dir), name="dl19")
    for name in ("night-2", "noisy-worse"):
        warehouse.ingest_run(run_files[name], name=name)
    result = regress(
        warehouse,
        "noisy-worse",
        baseline="night-2",
        qrels="dl19",
        measures=MEASURES,
        correction="holm",
    )
    p_values = [_reference(warehouse, "noisy-worse", "night-2", m)[1] for m in MEASURES]
    expected = multipletests(p_values, alpha=0.05, method="holm")[1]
    assert list(result.verdicts["p_corrected"]) == pytest.approx(list(expected))


def test_every_check_is_stored_and_shown_in_history(shared_dir, run_files, warehouse):
    warehouse.ingest_qrels(qrels_path(shared_dir), name="dl19")
    for name in ("night-1", "night-2", "night-3"):
        warehouse.ingest_run(run_files[name], name=name)
    first = regress(warehouse, "night-2", qrels="dl19", measures=MEASURES)
    second = regress(warehouse, "night-3", qrels="dl19", measures=MEASURES)
    with warehouse.connect() as conn:
        rows = conn.execute(
            "SELECT check_id, run_name, baseline_name, baseline_spec, measure, status, passed"
            " FROM regress_results ORDER BY check_id, measure"
        ).all()
    assert [tuple(r) for r in rows] == [
        (first.check_id, "night-2", "night-1", "previous", "AP", "non_inferior", True),
        (first.check_id, "night-2", "night-1", "previous", "nDCG@10", "non_inferior", True),
        (second.check_id, "night-3", "night-2", "previous", "AP", "regressed", False),
        (second.check_id, "night-3", "night-2", "previous", "nDCG@10", "regressed", False),
    ]
    history = warehouse.history(system="nightly", measures=MEASURES)
    assert list(history["run"]) == ["night-1", "night-2", "night-3"]
    assert list(history["gate"]) == [None, "pass", "fail"]


def test_report_files(shared_dir, run_files, db_path, run_cli, tmp_path):
    _prepare(db_path, shared_dir, run_files, "night-2", "night-3")
    files = {kind: tmp_path / f"report.{kind}" for kind in ("md", "json", "xml")}
    result = run_cli(
        "regress",
        "night-3",
        "--baseline",
        "previous",
        "--qrels",
        "dl19",
        "-m",
        "nDCG@10",
        "-m",
        "AP",
        "-m",
        "P@10",
        "--max-drop",
        "0.3",
        "--markdown",
        files["md"],
        "--json",
        files["json"],
        "--junit",
        files["xml"],
    )
    assert result.exit_code == 1, result.stderr
    report = json.loads(files["json"].read_text())
    assert report["passed"] is False
    assert report["baseline"] == "night-2"
    regressed = report["regressed"]
    statuses = {m["measure"]: m["status"] for m in report["measures"]}
    assert set(statuses) == {"nDCG@10", "AP", "P@10"}
    assert regressed == [m for m, s in statuses.items() if s == "regressed"]
    assert regressed and len(regressed) < 3  # the tolerance of 0.3 spares AP

    suite_root = ET.parse(files["xml"]).getroot()
    suite = suite_root.find("testsuite")
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == ["nDCG@10", "AP", "P@10"]
    assert suite.get("tests") == "3"
    assert suite.get("failures") == str(len(regressed))
    failed = [case.get("name") for case in cases if case.find("failure") is not None]
    assert failed == regressed

    markdown = files["md"].read_text()
    assert markdown.startswith("## Regression check FAILED (regressed): `night-3` vs `night-2`")
    for measure, status in statuses.items():
        cell = status.replace("_", " ")
        if status == "regressed":
            cell = f"**{cell}**"
        assert any(
            line.startswith(f"| `{measure}` |") and line.endswith(f"| {cell} |")
            for line in markdown.splitlines()
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no-such-run", "--baseline", "night-2"], "no-such-run"),
        (["night-2", "--baseline", "no-such-run"], "no-such-run"),
        (["night-2", "--baseline", "previous"], "no previous run"),
        (["night-2", "--baseline", "night-2", "-m", "bogus"], "bogus"),
        (["night-2", "--baseline", "night-2", "--max-drop", "-1"], "max-drop"),
        (["night-2", "--baseline", "night-2", "--test", "z"], "--test"),
    ],
)
def test_bad_input_exits_2(args, message, shared_dir, run_files, db_path, run_cli):
    _prepare(db_path, shared_dir, run_files, "night-2")
    result = run_cli("regress", *args, "--qrels", "dl19", "-m", "AP")
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr


def test_unknown_qrels_exits_2(shared_dir, run_files, db_path, run_cli):
    _prepare(db_path, shared_dir, run_files, "night-2")
    result = run_cli("regress", "night-2", "--baseline", "night-2", "--qrels", "nope", "-m", "AP")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: ") and "nope" in result.stderr


def test_first_run_of_a_series_may_pass(shared_dir, run_files, db_path, run_cli):
    _prepare(db_path, shared_dir, run_files, "night-1")
    result = run_cli(
        "regress",
        "night-1",
        "--baseline",
        "previous",
        "--qrels",
        "dl19",
        "-m",
        "AP",
        "--allow-missing-baseline",
    )
    assert result.exit_code == 0, result.stderr
    assert "first run of system 'nightly'" in result.stderr


def test_library_raises_typed_errors(shared_dir, run_files, warehouse):
    warehouse.ingest_qrels(qrels_path(shared_dir), name="dl19")
    with pytest.raises(NotFoundError, match="nope"):
        regress(warehouse, "nope", baseline="previous", qrels="dl19", measures=MEASURES)


def test_a_trec_eval_copy_is_never_the_previous_baseline(shared_dir, run_files, db_path, run_cli):
    """trec-eval keeps a copy of the run it read; the next regress must not gate against it."""
    _prepare(db_path, shared_dir, run_files, "night-1")
    copied = run_cli("trec-eval", "-m", "map", qrels_path(shared_dir), run_files["night-2"])
    assert copied.exit_code == 0, copied.stderr
    _prepare(db_path, shared_dir, run_files, "night-3")
    with Warehouse(db_path) as wh:
        result = regress(wh, "night-3", baseline="previous", qrels="dl19", measures=["AP"])
        assert result.baseline == "night-1"
        # named explicitly, the copy is a baseline like any run
        named = regress(wh, "night-3", baseline="nightly", qrels="dl19", measures=["AP"])
        assert named.baseline == "nightly"


def test_a_first_run_passed_is_stored_and_shown_as_first_run(any_warehouse):
    wh = any_warehouse
    examples = Path(__file__).resolve().parents[2] / "examples"
    wh.ingest_qrels(examples / "qrels.txt", name="q")
    wh.ingest_run(examples / "nights" / "bm25.night1.txt", name="n1")
    with pytest.raises(NoBaselineError, match="pass allow_missing_baseline=True to let"):
        regress(wh, "n1", baseline="previous", qrels="q", measures=["AP"])
    first = regress(
        wh, "n1", baseline="previous", qrels="q", measures=["AP"], allow_missing_baseline=True
    )
    assert (first.baseline, first.passed, len(first.verdicts)) == (None, True, 0)
    assert list(wh.history(system="bm25")["gate"]) == ["first run"]
    wh.ingest_run(examples / "nights" / "bm25.night2.txt", name="n2")
    second = regress(wh, "n2", baseline="previous", qrels="q", measures=["AP"])
    assert second.baseline == "n1"
    assert list(wh.history(system="bm25")["gate"]) == ["first run", "pass"]
    with wh.connect() as conn:  # a check without verdicts is not in regress_results
        assert conn.execute("SELECT count(*) FROM regress_results").scalar() == 1
