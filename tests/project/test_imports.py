"""What a command imports: each heavy library costs start-up time on every call.

Each case runs the real command in a fresh Python process and reads ``sys.modules`` at exit.
The expectations are the design: help and the measure list need no DuckDB; trec-eval and
eval from TREC files, and the commands that read a DuckDB warehouse (history, the lists,
sql), need DuckDB's engine (``_duckdb``) but not the ``duckdb`` package's Python layer,
pandas, pyarrow or SQLAlchemy. Paths that scan Arrow data load the package
first, and the last tests run those in fresh processes too.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("_duckdb", "duckdb", "pandas", "pyarrow", "sqlalchemy")
#: What a paired test or a correction may need: only the other tests and corrections do.
STATISTICS = ("scipy.stats", "statsmodels")

# Runs the console script's main() with argv, then prints which of the modules named in
# $PROBED (HEAVY by default) were imported.
_PROBE = f"""
import atexit, json, os, sys
probed = os.environ.get("PROBED", ",".join({HEAVY!r})).split(",")
atexit.register(lambda: print(json.dumps([m for m in probed if m in sys.modules]),
                              file=sys.stderr))
from rankhouse.cli.entry import main
main(sys.argv[1:])
"""

engine_module = pytest.mark.skipif(
    importlib.util.find_spec("_duckdb") is None,
    reason="this duckdb (before 1.4) has no separate engine module",
)


def _imported(tmp_path: Path, *args: str, probed: tuple[str, ...] = HEAVY) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PROBED": ",".join(probed)},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1])


@pytest.fixture
def trec_files(tmp_path: Path) -> tuple[Path, Path]:
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    run = tmp_path / "r.txt"
    run.write_text("1 Q0 a 1 2.0 sys\n1 Q0 b 2 1.0 sys\n2 Q0 d 1 3.0 sys\n")
    return qrels, run


@pytest.mark.parametrize("args", [["--help"], ["measures"], ["--version"]])
def test_help_and_measures_import_no_engine(tmp_path, args):
    assert _imported(tmp_path, *args) == []


@engine_module
def test_trec_eval_imports_the_engine_alone(tmp_path, trec_files):
    qrels, run = trec_files
    assert _imported(tmp_path, "trec-eval", "-m", "all_trec", str(qrels), str(run)) == ["_duckdb"]


@engine_module
def test_eval_into_a_duckdb_file_imports_the_engine_alone(tmp_path, trec_files):
    qrels, run = trec_files
    db = str(tmp_path / "w.duckdb")
    for _ in range(2):  # a new warehouse, then the values stored
        imported = _imported(tmp_path, "--db", db, "eval", str(qrels), str(run), "-m", "P@1")
        assert imported == ["_duckdb"]


@engine_module
@pytest.mark.parametrize(
    "command",
    [
        ["history"],
        ["history", "-m", "P@1", "--format", "json"],
        ["runs", "list"],
        ["runs", "show", "sys"],
        ["qrels", "list", "--format", "csv"],
        ["sql", "SELECT run_name, value FROM latest_evaluations"],
    ],
    ids=" ".join,
)
def test_reading_a_duckdb_warehouse_imports_the_engine_alone(tmp_path, trec_files, command):
    """Listing what a warehouse holds prints its rows as they are: no DataFrame on the way."""
    qrels, run = trec_files
    db = str(tmp_path / "w.duckdb")
    _imported(tmp_path, "--db", db, "eval", str(qrels), str(run), "-m", "P@1")
    assert _imported(tmp_path, "--db", db, *command) == ["_duckdb"]


@pytest.mark.parametrize(
    "command",
    [
        ["history", "-m", "P@1"],
        ["eval", "q", "sys", "-m", "P@1"],
        ["eval", "q", "sys", "alt", "-m", "P@1"],
    ],
    ids=" ".join,
)
def test_reading_stored_values_loads_no_numpy_engine_or_readers(tmp_path, trec_files, command):
    """history and eval of stored values read and print what is stored (issue 36): their
    intervals are summed as numpy sums them, in plain Python; nothing is computed or read
    from a file, so neither the engine nor the ingest's readers load, and a measure named by
    its stored label needs no measure parser."""
    qrels, run = trec_files
    other = tmp_path / "other.txt"  # several runs: eval's holes check is made when it computes
    other.write_text("1 Q0 b 1 2.0 alt\n1 Q0 a 2 1.0 alt\n2 Q0 c 1 3.0 alt\n")
    db = str(tmp_path / "w.duckdb")
    _imported(tmp_path, "--db", db, "eval", str(qrels), str(run), str(other), "-m", "P@1")
    probed = ("numpy", "rankhouse.engine", "rankhouse.ingest", "rankhouse.stats.paired")
    probed += ("rankhouse.measures", "rankhouse.labels")
    # nor the statistics module (its normal quantile comes from its C half) nor the command
    # modules of ingest and the catalogue
    probed += ("statistics", "rankhouse.cli.commands.catalog")
    assert _imported(tmp_path, "--db", db, *command, probed=probed) == []


def test_the_t_test_and_no_correction_need_neither_scipy_stats_nor_statsmodels(
    tmp_path, trec_files
):
    """compare and regress with their defaults (the t-test; no correction, or the gate's Holm,
    computed here) import neither; another test or correction imports what it needs. regress
    imports no pandas."""
    qrels, run = trec_files
    other = tmp_path / "other.txt"
    other.write_text("1 Q0 b 1 2.0 alt\n1 Q0 a 2 1.0 alt\n2 Q0 c 1 3.0 alt\n")
    db = str(tmp_path / "w.duckdb")
    compare = ["--db", db, "compare", str(qrels), str(run), str(other), "-m", "P@1", "-b", "sys"]
    assert _imported(tmp_path, *compare, probed=STATISTICS) == []
    regress = ["--db", db, "regress", "alt", "--baseline", "sys", "--qrels", "q", "-m", "P@1"]
    regress += ["--max-drop", "10"]  # two queries: only so wide a margin shows non-inferiority
    assert _imported(tmp_path, *regress, probed=STATISTICS) == []
    # the nightly gate prints its verdicts as rows: no pandas either
    assert _imported(tmp_path, *regress, "-f", "csv") == ["_duckdb"]
    assert _imported(tmp_path, *compare, "--test", "wilcoxon", probed=STATISTICS) == ["scipy.stats"]
    assert _imported(tmp_path, *compare, "--correction", "holm", probed=STATISTICS) == []
    assert _imported(tmp_path, *compare, "--correction", "hommel", probed=STATISTICS) == [
        "scipy.stats",
        "statsmodels",
    ]


@engine_module
@pytest.mark.parametrize(
    "shape",
    [[], ["--long"], ["--wide"], ["--per-query"], ["-f", "json"], ["--drift"], ["-f", "latex"]],
    ids=lambda s: " ".join(s) or "compact",
)
def test_compare_prints_its_rows_without_pandas(tmp_path, trec_files, shape):
    """compare's tables are built from rows: a DataFrame only when the Python API asks
    (intervals, verdicts and drift included)."""
    qrels, run = trec_files
    other = tmp_path / "other.txt"
    other.write_text("1 Q0 b 1 2.0 alt\n1 Q0 a 2 1.0 alt\n2 Q0 c 1 3.0 alt\n")
    db = str(tmp_path / "w.duckdb")
    compare = ["--db", db, "compare", str(qrels), str(run), str(other), "-m", "P@1,AP", "-b", "sys"]
    assert _imported(tmp_path, *compare, *shape) == ["_duckdb"]


@engine_module
@pytest.mark.parametrize("shape", [[], ["-f", "json"]], ids=lambda s: " ".join(s) or "tables")
def test_all_pairs_prints_without_pandas_or_scipy_stats(tmp_path, trec_files, shape):
    """The randomised Tukey HSD, the ANOVA and the letters need numpy and scipy.special."""
    qrels, run = trec_files
    other = tmp_path / "other.txt"
    other.write_text("1 Q0 b 1 2.0 alt\n1 Q0 a 2 1.0 alt\n2 Q0 c 1 3.0 alt\n")
    third = tmp_path / "third.txt"
    third.write_text("1 Q0 a 1 2.0 new\n1 Q0 c 2 1.0 new\n2 Q0 d 1 3.0 new\n")
    db = str(tmp_path / "w.duckdb")
    files = [str(qrels), str(run), str(other), str(third)]
    compare = ["--db", db, "compare", *files, "-m", "AP", "--all-pairs", *shape]
    assert _imported(tmp_path, *compare) == ["_duckdb"]
    assert _imported(tmp_path, *compare, probed=STATISTICS) == []


@engine_module
def test_qrels_agreement_needs_numpy_alone(tmp_path, trec_files):
    """The agreement statistics are numpy's; the system rankings read stored values and take
    the t-test computed here: no pandas, scipy.stats or statsmodels."""
    db = str(tmp_path / "w.duckdb")
    written = {"other.qrels": "1 0 a 1\n1 0 b 1\n2 0 c 1\n", "alt.txt": "1 Q0 b 1 2.0 alt\n"}
    for name, text in written.items():
        (tmp_path / name).write_text(text)
    files = [str(path) for path in trec_files]
    _imported(tmp_path, "--db", db, "eval", *files, str(tmp_path / "alt.txt"), "-m", "P@1")
    _imported(tmp_path, "--db", db, "ingest", "qrels", "other.qrels", "--name", "other")
    agreement = ["--db", db, "qrels", "agreement", "q", "other"]
    probed = (*HEAVY, *STATISTICS)
    assert _imported(tmp_path, *agreement, probed=probed) == ["_duckdb"]
    runs = [*agreement, "--runs", "sys,alt", "-m", "P@1", "-f", "csv"]
    assert _imported(tmp_path, *runs, probed=probed) == ["_duckdb"]


@pytest.mark.parametrize(
    "command", [["--help"], ["ingest", "run", "r.txt"], ["eval", "q.txt", "r.txt", "-m", "P@1"]]
)
def test_ranx_and_ir_datasets_are_never_imported_to_start(tmp_path, trec_files, command):
    """Their objects are known by their class's module (ranx takes seconds to import: numba),
    and ir_datasets is imported only to read an ``irds:`` id."""
    db = str(tmp_path / "w.duckdb")
    assert _imported(tmp_path, "--db", db, *command, probed=("ranx", "ir_datasets")) == []
    script = "import sys, rankhouse; print(sorted({'ranx', 'ir_datasets'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_csv_ingest_in_a_fresh_process(tmp_path):
    """CSV rows reach DuckDB as Arrow tables: the package is loaded before they are scanned."""
    run = tmp_path / "run.csv"
    run.write_text("query_id,doc_id,score\n1,a,2.5\n1,b,1.5\n")
    db = str(tmp_path / "w.duckdb")
    assert "duckdb" in _imported(tmp_path, "--db", db, "ingest", "run", str(run))
    sql = "SELECT doc_id, score FROM run_rows ORDER BY doc_id"
    done = subprocess.run(
        [sys.executable, "-m", "rankhouse", "--db", db, "sql", sql, "--format", "csv"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.stdout.splitlines() == ["doc_id,score", "a,2.5", "b,1.5"]


def test_arrow_backed_frames_in_a_fresh_process(tmp_path):
    """rankhouse.evaluate scans a DataFrame whose columns are Arrow-backed."""
    script = """
import pandas as pd, pyarrow as pa, rankhouse
text = pd.ArrowDtype(pa.string())
qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
run = pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["b", "a", "c"],
                    "score": [3.0, 2.0, 1.0]})
qrels = qrels.astype({"query_id": text, "doc_id": text})
run = run.astype({"query_id": text, "doc_id": text, "score": pd.ArrowDtype(pa.float64())})
print(rankhouse.evaluate(qrels, run, ["P@2", "RR"]).summary.iloc[0, 1:].tolist())
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # a at rank 2 is the one relevant document: P@2 = 1/2, RR = 1/2
    assert done.stdout.strip() == "[0.5, 0.5]"
