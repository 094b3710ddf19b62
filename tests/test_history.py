"""History: stored evaluations over time, one row per run, newest last."""

from __future__ import annotations

import csv
import io
import warnings
from pathlib import Path

import pytest
from conftest import EXAMPLES
from series_helpers import make_runs, qrels_path
from statement_helpers import record_statements

from rankhouse import NotFoundError, RankhouseError, Warehouse

MEASURES = ["nDCG@10", "AP"]
NIGHTS = ["night-1", "night-2", "night-3"]


@pytest.fixture(scope="module")
def run_files(shared_dir, tmp_path_factory) -> dict[str, Path]:
    return make_runs(shared_dir, tmp_path_factory.mktemp("runs"))


def _load(wh: Warehouse, shared_dir: Path, run_files: dict[str, Path]) -> None:
    wh.ingest_qrels(qrels_path(shared_dir), name="dl19")
    for i, name in enumerate(NIGHTS, start=1):
        wh.ingest_run(run_files[name], name=name, meta={"commit": f"c{i}"})
    wh.ingest_run(run_files["bm25-old"], name="bm25-old")
    wh.evaluate("dl19", [*NIGHTS, "bm25-old"], MEASURES)


def test_a_series_in_ingest_order_with_metadata_and_values(warehouse, shared_dir, run_files):
    _load(warehouse, shared_dir, run_files)
    history = warehouse.history(system="nightly")
    assert list(history.columns) == [
        "ingested_at",
        "run",
        "system",
        "qrels",
        "commit",
        "num_q",
        "AP",
        "AP low",
        "AP high",
        "nDCG@10",
        "nDCG@10 low",
        "nDCG@10 high",
        "inputs",
        "new_inputs",
        "gate",
    ]
    assert list(history["run"]) == NIGHTS
    assert list(history["commit"]) == ["c1", "c2", "c3"]
    assert history["ingested_at"].is_monotonic_increasing
    assert set(history["system"]) == {"nightly"} and set(history["qrels"]) == {"dl19"}
    summary = warehouse.evaluate("dl19", NIGHTS, MEASURES).summary.set_index("run")
    for measure in MEASURES:
        assert list(history[measure]) == list(summary.loc[NIGHTS, measure])
    assert list(history["gate"]) == [None, None, None]


def test_measure_columns_follow_the_request_in_any_spelling(warehouse, shared_dir, run_files):
    _load(warehouse, shared_dir, run_files)
    history = warehouse.history(measures=["map", "ndcg_cut_10", "P@10"])
    assert [c for c in history.columns[-13:] if not c.endswith(("low", "high"))] == [
        "num_q",
        "AP",
        "nDCG@10",
        "P@10",
        "inputs",
        "new_inputs",
        "gate",
    ]
    assert history["P@10"].isna().all()  # never evaluated: an empty column, not an error
    assert list(history["run"]) == [*NIGHTS, "bm25-old"]


def test_filters(warehouse, shared_dir, run_files):
    _load(warehouse, shared_dir, run_files)
    assert list(warehouse.history(run="night-2")["run"]) == ["night-2"]
    assert list(warehouse.history(system="bm25")["run"]) == ["bm25-old"]
    assert list(warehouse.history(qrels="dl19", since="2000-01-01")["run"]) == [
        *NIGHTS,
        "bm25-old",
    ]
    later = warehouse.history(since="2999-01-01")
    assert later.empty
    assert list(later.columns[:4]) == ["ingested_at", "run", "system", "qrels"]
    with pytest.raises(RankhouseError, match="not a date"):
        warehouse.history(since="last tuesday")
    with pytest.raises(NotFoundError):
        warehouse.history(run="nope")


def test_history_never_evaluates(warehouse, shared_dir, run_files):
    warehouse.ingest_qrels(qrels_path(shared_dir), name="dl19")
    warehouse.ingest_run(run_files["night-1"], name="night-1")
    assert warehouse.history().empty


def test_cli(db_path, shared_dir, run_files, run_cli):
    with Warehouse(db_path) as wh:
        _load(wh, shared_dir, run_files)
    result = run_cli("history", "--system", "nightly", "-m", "AP", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [row["run"] for row in rows] == NIGHTS
    assert [row["commit"] for row in rows] == ["c1", "c2", "c3"]
    assert all(float(row["AP"]) > 0 for row in rows)
    table = run_cli("--read-only", "history", "-m", "nDCG@10")
    assert table.exit_code == 0, table.stderr
    assert "night-3" in table.stdout and "bm25-old" in table.stdout


# --- the default columns: what a command asked for ------------------------------------------

EXAMPLE_QRELS = str(EXAMPLES / "qrels.txt")
EXAMPLE_RUNS = [str(EXAMPLES / "run.bm25.txt"), str(EXAMPLES / "run.dense.txt")]
IPREC = [f"IPrec@{r / 10:.1f}" for r in range(11)]


@pytest.fixture
def reported(run_cli):
    """bm25 and dense evaluated with AP and nDCG@10, then a report (which stores the 11
    precision-recall points of its curves)."""
    done = run_cli("eval", EXAMPLE_QRELS, *EXAMPLE_RUNS, "-m", "AP", "-m", "nDCG@10")
    assert done.exit_code == 0, done.stderr
    assert run_cli("report", "-o", "report.html").exit_code == 0


def _header(done) -> list[str]:
    """The csv header without the intervals' bounds and the number of queries."""
    assert done.exit_code == 0, done.stderr
    header = done.stdout.splitlines()[0].split(",")
    return [name for name in header if name != "num_q" and not name.endswith((" low", " high"))]


def test_history_shows_the_measures_asked_for_and_the_rest_on_request(reported, run_cli):
    default = run_cli("history", "-f", "csv")
    assert _header(default) == [
        *("ingested_at", "run", "system", "qrels", "AP", "nDCG@10"),
        *("inputs", "new_inputs", "gate"),
    ]
    assert default.stderr == (
        "note: 11 stored labels not shown (IPrec@0.0 ... IPrec@1.0: no command asked for "
        "them, a report stored them for its curves); --all-measures shows them\n"
    )
    every = run_cli("history", "--all-measures", "-f", "csv")
    assert _header(every)[4:-3] == ["AP", *IPREC, "nDCG@10"] and every.stderr == ""
    asked = run_cli("history", "-m", "IPrec@0.5", "-f", "csv")
    assert _header(asked)[4:-3] == ["IPrec@0.5"] and asked.stderr == ""


def test_a_measure_asked_for_later_becomes_a_default_column(reported, run_cli):
    again = run_cli("eval", "qrels", "bm25", "-m", "IPrec@0.5")
    assert again.exit_code == 0, again.stderr
    assert "1 of 1 result reused from storage" in again.stderr  # reused, not computed again
    assert _header(run_cli("history", "-f", "csv"))[4:-3] == ["AP", "IPrec@0.5", "nDCG@10"]


def test_the_python_api_has_the_same_default(reported, db_path):
    with Warehouse(db_path) as wh:
        assert _measures(wh.history()) == ["AP", "nDCG@10"]
        assert _measures(wh.history(all_measures=True)) == ["AP", *IPREC, "nDCG@10"]


def _measures(frame) -> list[str]:
    return [c for c in frame.columns[5:-3] if not c.endswith((" low", " high"))]


def test_an_unknown_system_names_the_known_ones(reported, run_cli, db_path):
    done = run_cli("history", "--system", "nosuch")
    assert done.exit_code == 1 and done.stdout == ""
    assert done.stderr == (
        "Error: no run has the system tag 'nosuch'; the known systems are 'bm25', 'dense'\n"
    )
    with Warehouse(db_path) as wh, pytest.raises(NotFoundError, match="'bm25', 'dense'"):
        wh.history(system="nosuch")
    assert run_cli("history", "--system", "dense", "-f", "csv").stdout.count("\n") == 2


def test_history_shows_the_newest_stored_drift_of_each_run(run_cli):
    args = ["compare", EXAMPLE_QRELS, *EXAMPLE_RUNS, "-m", "AP", "--baseline", "bm25"]
    assert run_cli(*args, "--drift").exit_code == 0
    done = run_cli("history", "-m", "AP", "--drift", "-f", "csv")
    assert done.exit_code == 0, done.stderr
    rows = {row["run"]: row for row in csv.DictReader(io.StringIO(done.stdout))}
    assert list(rows["dense"])[-5:] == ["drift_from", "rbo", "kendall_tau", "tau_ap", "overlap"]
    assert rows["bm25"]["drift_from"] == ""  # the baseline has no drift of its own
    assert rows["dense"]["drift_from"] == "bm25 (top 100, p 0.9)"
    # each run ranks at most 20 documents a query, so the top 100 is all of them: overlap@100
    # is the shared documents over 100, averaged over the queries either run ranks
    docs: dict[str, dict[str, set[str]]] = {}
    for path in EXAMPLE_RUNS:
        for line in Path(path).read_text().splitlines():
            query, _, doc = line.split()[:3]
            docs.setdefault(query, {}).setdefault(path, set()).add(doc)
    shared = [
        len(set.intersection(*d.values())) / 100 if len(d) == 2 else 0.0 for d in docs.values()
    ]
    assert float(rows["dense"]["overlap"]) == pytest.approx(sum(shared) / len(shared), abs=1e-15)
    assert run_cli("history", "-m", "AP").stdout.count("rbo") == 0  # only on request


def test_one_systems_history_reads_its_own_gate_checks_only(warehouse, tmp_path, monkeypatch):
    """The gate column of ``history -s`` reads the checks of the system's runs, not every
    check of the warehouse (20 systems' years of nights: benchmarks/bench_growth.py)."""
    (tmp_path / "q.txt").write_text("1 0 a1 1\n2 0 b2 1\n")
    warehouse.ingest_qrels(tmp_path / "q.txt", name="q")
    for system in ("a", "b", "c"):
        path = tmp_path / f"{system}.txt"
        path.write_text(f"1 Q0 {system}1 1 2.0 {system}\n2 Q0 {system}2 1 1.0 {system}\n")
        warehouse.ingest_run(path, name=f"{system}-1")
        with warnings.catch_warnings():  # b and c: a new system tag beside stored ones
            warnings.simplefilter("ignore")
            warehouse.regress(f"{system}-1", qrels="q", measures="AP", allow_missing_baseline=True)
    seen = record_statements(monkeypatch)
    history = warehouse.history(system="a", measures=["AP"])
    assert list(history["run"]) == ["a-1"] and list(history["gate"]) == ["first run"]
    assert [s.rows for s in seen if "FROM regress_checks" in s.sql] == [1]  # of 3 stored
