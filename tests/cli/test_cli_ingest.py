"""The real CLI in a subprocess: ingest, list, show, rm, and exit codes 0/1/2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from rankhouse import Warehouse

RUN = "1 Q0 a 1 2.0 sysA\n1 Q0 b 2 1.0 sysA\n2 Q0 a 1 3.0 sysA\n"


def test_ingest_list_show_rm(run_cli, tmp_path):
    (tmp_path / "r.txt").write_text(RUN)
    (tmp_path / "q.txt").write_text("1 0 a 1\n2 0 b 0\n")
    done = run_cli("ingest", "run", "r.txt", "--name", "mine", "--meta", "model=bm25")
    assert done.exit_code == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr.strip() == "stored run 'mine' (id 1): 2 queries, 3 rows"
    again = run_cli("ingest", "run", "r.txt", "--name", "mine")
    assert again.stderr.strip() == "already stored as run 'mine' (id 1), nothing new"
    assert run_cli("ingest", "qrels", "q.txt").stderr.strip() == (
        "stored qrels set 'q' (id 1): 2 queries, 2 judgments"
    )
    listing = run_cli("runs", "list", "--format", "json")
    [row] = json.loads(listing.stdout)
    assert (row["id"], row["name"], row["tag"], row["queries"], row["rows"]) == (
        1,
        "mine",
        "sysA",
        2,
        3,
    )
    assert run_cli("runs", "list", "--format", "csv").stdout.startswith("id,name,tag,queries,rows")
    assert "mine" in run_cli("runs", "list").stdout
    assert run_cli("qrels", "list", "--format", "csv").stdout.startswith(
        "id,name,queries,judgments,relevant,min_grade,max_grade,ingested_at,aliases,version,follows\n"
    )
    assert "judgments" in run_cli("qrels", "list").stdout
    show = json.loads(run_cli("runs", "show", "mine", "--format", "json").stdout)
    assert show["metadata"]["model"] == "bm25" and show["max_rows_per_query"] == 2
    assert "metadata.model" in run_cli("runs", "show", "mine").stdout
    assert run_cli("runs", "rm", "mine").exit_code == 0
    assert json.loads(run_cli("runs", "list", "--format", "json").stdout) == []
    assert run_cli("qrels", "rm", "q", "--yes").exit_code == 0


@pytest.mark.parametrize(
    ("args", "content", "pattern"),
    [
        (
            ("ingest", "run", "bad.txt"),
            "1 Q0 a 1 x t\n",
            "score 'x' is not a number (bad.txt, line 1, field 'score')",
        ),
        (
            ("ingest", "qrels", "bad.txt"),
            "1 0 a 1.5\n",
            "grade '1.5' is not an integer (bad.txt, line 1, field 'rel')",
        ),
        (("ingest", "run", "missing.txt"), None, "no such file (missing.txt)"),
        (("runs", "rm", "nothing"), None, "no run named 'nothing'"),
    ],
)
def test_errors_exit_1_with_one_error_line(run_cli, db_path, tmp_path, args, content, pattern):
    if content is not None:
        (tmp_path / "bad.txt").write_text(content)
    Warehouse(db_path).close()  # an empty warehouse (reading commands never create one)
    done = run_cli(*args)
    assert done.exit_code == 1
    assert done.stderr.startswith("Error: ") and pattern in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_usage_errors_exit_2(run_cli, tmp_path):
    (tmp_path / "r.txt").write_text(RUN)
    assert run_cli("ingest", "run", "r.txt", "--order", "sideways").exit_code == 2
    assert run_cli("ingest", "run").exit_code == 2


def test_sigkill_during_ingest_leaves_warehouse_unchanged(run_cli, tmp_path, db_path):
    (tmp_path / "small.txt").write_text(RUN)
    assert run_cli("ingest", "run", "small.txt").exit_code == 0
    before = run_cli("runs", "list", "--format", "json").stdout
    big = tmp_path / "big.run"
    with big.open("w") as out:
        for q in range(2000):
            out.write("".join(f"{q} Q0 doc{d} {d + 1} {1000 - d} big\n" for d in range(1000)))
    env = {**os.environ}
    env.pop("RANKHOUSE_DB", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "rankhouse", "--db", str(db_path), "ingest", "run", str(big)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    wal = db_path.with_name(db_path.name + ".wal")
    size_before = db_path.stat().st_size
    deadline = time.time() + 120
    while time.time() < deadline and process.poll() is None:
        if db_path.stat().st_size > size_before or wal.exists():
            break  # it has started writing the run's rows
        time.sleep(0.01)
    assert process.poll() is None, "the ingest ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert run_cli("runs", "list", "--format", "json").stdout == before
    import duckdb

    with duckdb.connect(str(db_path), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM run_rows").fetchone()[0] == 3
