"""Evaluating a regenerated run file: a new version of the same system, never a conflict."""

from __future__ import annotations

import json

import pytest

from rankhouse import InputError, Warehouse

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq2 0 d 1\n"
NIGHT_1 = "q1 Q0 a 1 2.0 mysys\nq1 Q0 b 2 1.0 mysys\nq2 Q0 c 1 2.0 mysys\n"  # AP (1 + 0.5) / 2
NIGHT_2 = "q1 Q0 b 1 2.0 mysys\nq1 Q0 a 2 1.0 mysys\nq2 Q0 d 1 2.0 mysys\n"  # AP (0.5+0.5)/2
NIGHT_3 = "q1 Q0 a 1 2.0 mysys\nq2 Q0 d 1 2.0 mysys\nq2 Q0 c 2 1.0 mysys\n"  # AP (1 + 1) / 2


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path


def test_a_regenerated_file_is_the_next_version(files, run_cli):
    run = files / "run.txt"
    expected = {}
    for night, (text, ap) in enumerate([(NIGHT_1, 0.75), (NIGHT_2, 0.5), (NIGHT_3, 1.0)], 1):
        run.write_text(text)
        result = run_cli("eval", "qrels.txt", "run.txt", "-m", "AP", "-f", "csv")
        assert result.exit_code == 0, result.stderr
        name = "mysys" if night == 1 else f"mysys@{night}"
        header, row = result.stdout.splitlines()
        assert header == "run,num_q,AP,AP low,AP high"
        assert row.split(",")[:3] == [name, "2", repr(ap)]
        expected[name] = ap
    again = run_cli("eval", "qrels.txt", "run.txt", "-m", "AP", "-f", "csv")
    # same content: the stored run
    assert again.stdout.splitlines()[1].split(",")[:3] == ["mysys@3", "2", "1.0"]
    series = run_cli("history", "--system", "mysys", "-m", "AP", "-f", "json")
    assert series.exit_code == 0, series.stderr
    rows = json.loads(series.stdout)
    assert [(row["run"], row["system"], row["AP"]) for row in rows] == [
        (name, "mysys", ap) for name, ap in expected.items()
    ]


def test_eval_takes_name_and_meta(files, run_cli):
    run = files / "run.txt"
    run.write_text(NIGHT_1)
    args = ["eval", "qrels.txt", "run.txt", "-m", "AP", "--name", "nightly"]
    first = run_cli(*args, "--meta", "commit=abc", "--meta", "night=1")
    assert first.exit_code == 0, first.stderr
    run.write_text(NIGHT_2)
    second = run_cli(*args, "--meta", "commit=def", "--meta", "night=2")
    assert second.exit_code == 0, second.stderr
    series = json.loads(run_cli("history", "--system", "mysys", "-f", "json").stdout)
    assert [(r["run"], r["commit"], r["night"], r["AP"]) for r in series] == [
        ("nightly", "abc", "1", 0.75),
        ("nightly@2", "def", "2", 0.5),
    ]
    bad = run_cli("eval", "qrels.txt", "run.txt", "-m", "AP", "--meta", "nokey")
    assert bad.exit_code == 1
    assert bad.stderr.startswith("Error: --meta 'nokey' is not KEY=VALUE")


def test_the_python_api_takes_the_same_keywords(files, any_warehouse):
    run = files / "run.txt"
    wh = any_warehouse
    for text in (NIGHT_1, NIGHT_2):
        run.write_text(text)
        result = wh.evaluate(
            runs=str(run),
            qrels=str(files / "qrels.txt"),
            measures=["AP"],
            name="api",
            meta={"commit": "x"},
        )
    assert list(result.summary["run"]) == ["api@2"]
    assert wh.run("api@2")["metadata"]["commit"] == "x"
    assert wh.run("api@2")["system_tag"] == "mysys"
    with pytest.raises(InputError, match="apply to a run given as a file"):
        wh.evaluate(runs="api", qrels=str(files / "qrels.txt"), measures=["AP"], name="x")


def test_a_version_number_is_never_reused(files, db_path):
    run = files / "run.txt"
    with Warehouse(db_path) as wh:
        for text in (NIGHT_1, NIGHT_2, NIGHT_3):
            run.write_text(text)
            wh.evaluate(runs=str(run), qrels=str(files / "qrels.txt"), measures=["AP"])
        wh.remove_run("mysys@2")
        run.write_text(NIGHT_3.replace("2.0", "3.0"))
        result = wh.evaluate(runs=str(run), qrels=str(files / "qrels.txt"), measures=["AP"])
        assert result.summary["run"].tolist() == ["mysys@4"]


def test_ingest_run_still_refuses_a_taken_name(files, run_cli):
    run = files / "run.txt"
    run.write_text(NIGHT_1)
    assert run_cli("ingest", "run", "run.txt").exit_code == 0
    run.write_text(NIGHT_2)
    refused = run_cli("ingest", "run", "run.txt")
    assert refused.exit_code == 1
    assert "'mysys' is already used by different content" in refused.stderr


def test_the_nightly_gate_compares_a_version_with_the_one_before(files, run_cli):
    """`regress run.txt --baseline previous`: tonight's file is the next version, and the
    version before it is the baseline."""
    run = files / "run.txt"
    run.write_text(NIGHT_1)
    assert run_cli("eval", "qrels.txt", "run.txt", "-m", "AP").exit_code == 0
    run.write_text(NIGHT_3)
    gate = run_cli(
        "regress",
        "run.txt",
        "--baseline",
        "previous",
        "--qrels",
        "qrels.txt",
        "-m",
        "AP",
        "--mode",  # two queries: only the significance gate can pass an improvement
        "significance",
        "--json",
        "gate.json",
    )
    assert gate.exit_code == 0, gate.stderr
    report = json.loads((files / "gate.json").read_text())
    assert (report["run"], report["baseline"]) == ("mysys@2", "mysys")
    [verdict] = report["measures"]
    assert (verdict["baseline_value"], verdict["run_value"]) == (0.75, 1.0)
