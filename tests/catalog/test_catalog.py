"""The catalogue: lookups by name or id, and removal with the stored evaluations."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES

from rankhouse import NotFoundError
from rankhouse.catalog import run_query_counts


def _add_evaluation(wh, run_id: int, qrels_id: int) -> None:
    with wh.transaction() as conn:
        eid = conn.execute(
            (
                "INSERT INTO evaluations (run_id, qrels_id, qrels_sha256, measure, parameters, "
                "relevance_level, missing_queries, options, aggregate, value, num_q, "
                "rankhouse_version, created_at) VALUES (:r, :q, 'x', 'AP', '{}', 1, 'zero', '{}', "
                "'mean', 0.5, 1, 'test', now()) RETURNING id"
            ),
            {"r": run_id, "q": qrels_id},
        ).scalar_one()
        conn.execute("INSERT INTO evaluation_values VALUES (:e, '1', 0.5)", {"e": eid})


def _count(wh, table: str) -> int:
    with wh.connect() as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").scalar()


def test_lookup_and_remove_with_evaluations(warehouse, tmp_path):
    (tmp_path / "r.txt").write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n2 Q0 a 1 1.0 t\n")
    (tmp_path / "q.txt").write_text("1 0 a 1\n")
    [run] = warehouse.ingest_run(tmp_path / "r.txt")
    qrels = warehouse.ingest_qrels(tmp_path / "q.txt")
    assert warehouse.run("t")["id"] == warehouse.run(run.id)["id"] == run.id
    assert run_query_counts(warehouse, "t").values.tolist() == [["1", 2], ["2", 1]]
    _add_evaluation(warehouse, run.id, qrels.id)
    warehouse.remove_run("t")
    assert [
        _count(warehouse, t) for t in ("runs", "run_rows", "evaluations", "evaluation_values")
    ] == [0, 0, 0, 0]
    with pytest.raises(NotFoundError, match="no run named 't'"):
        warehouse.run("t")
    [run] = warehouse.ingest_run(tmp_path / "r.txt")
    _add_evaluation(warehouse, run.id, qrels.id)
    warehouse.remove_qrels("q")
    assert [_count(warehouse, t) for t in ("qrels_sets", "judgments", "evaluations", "runs")] == [
        0,
        0,
        0,
        1,
    ]


QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq2 0 d 1\n"
OLD = "q1 Q0 b 1 2.0 sys\nq1 Q0 a 2 1.0 sys\nq2 Q0 c 1 2.0 sys\n"  # AP (0.5 + 0.5) / 2
NEW = "q1 Q0 a 1 2.0 sys\nq2 Q0 c 1 2.0 sys\nq2 Q0 d 2 1.0 sys\n"  # AP (1 + 1) / 2


def test_removing_a_baseline_keeps_the_checks_that_used_it(run_cli, tmp_path):
    """`runs rm BASELINE` deleted the other runs' gate verdicts; they belong to those runs."""
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "old.run").write_text(OLD)
    (tmp_path / "new.run").write_text(NEW)
    assert run_cli("ingest", "qrels", "qrels.txt", "--name", "q").exit_code == 0
    assert run_cli("ingest", "run", "old.run", "--name", "old").exit_code == 0
    assert run_cli("ingest", "run", "new.run", "--name", "new").exit_code == 0
    gate = run_cli(
        "regress", "new", "--baseline", "previous", "--qrels", "q", "-m", "AP",
        "--mode", "significance",
    )  # fmt: skip
    assert gate.exit_code == 0, gate.stderr
    assert run_cli("runs", "rm", "old").exit_code == 0

    query = (
        "SELECT run_name, baseline_name, baseline_spec, baseline_deleted, measure, "
        "baseline_value, run_value, status FROM regress_results"
    )
    kept = run_cli("sql", query, "--format", "csv")
    assert kept.exit_code == 0, kept.stderr
    assert kept.stdout.splitlines()[1:] == ["new,old,previous,true,AP,0.5,1.0,improved"]
    history = run_cli("history", "--run", "new", "-m", "AP", "--format", "csv")
    row = history.stdout.splitlines()[1].split(",")
    assert (row[-4], row[-2:]) == ("1.0", ["false", "pass"])  # the value, no boundary, the gate

    # deleting the run under test deletes its own checks
    assert run_cli("runs", "rm", "new").exit_code == 0
    counts = run_cli(
        "sql",
        "SELECT (SELECT count(*) FROM regress_checks), (SELECT count(*) FROM regress_verdicts)",
        "--format",
        "csv",
    )
    assert counts.stdout.splitlines()[1] == "0,0"


# --- qrels rm asks first, and says what goes with it ----------------------------------------

GONE = "144 judgments, 4 evaluations of 2 runs and 1 gate check"


@pytest.fixture
def judged(run_cli):
    """The example qrels 'ex' with 2 runs evaluated (AP, P@5) and one gate check."""
    runs = [str(EXAMPLES / "run.bm25.txt"), str(EXAMPLES / "run.dense.txt")]
    assert run_cli("ingest", "qrels", EXAMPLES / "qrels.txt", "--name", "ex").exit_code == 0
    assert run_cli("eval", "ex", *runs, "-m", "AP", "-m", "P@5").exit_code == 0
    gate = run_cli("regress", "dense", "--baseline", "bm25", "--qrels", "ex", "-m", "AP:0.2")
    assert gate.exit_code == 0, gate.stderr


def _stored(run_cli) -> str:
    return run_cli(
        "sql",
        "SELECT (SELECT count(*) FROM qrels_sets), (SELECT count(*) FROM evaluations), "
        "(SELECT count(*) FROM regress_checks), (SELECT count(*) FROM runs)",
        "-f",
        "csv",
    ).stdout.splitlines()[1]


def test_qrels_rm_without_a_terminal_needs_yes(judged, run_cli):
    refused = run_cli("qrels", "rm", "ex")
    assert refused.exit_code == 1
    assert refused.stderr == (
        f"Error: removing qrels set 'ex' (id 1) deletes {GONE}; pass --yes to remove it "
        "(there is no terminal to ask)\n"
    )
    assert _stored(run_cli) == "1,4,1,2"
    done = run_cli("qrels", "rm", "ex", "--yes")
    assert done.exit_code == 0
    assert done.stderr == f"removed qrels set 'ex' (id 1) with {GONE}\n"
    assert _stored(run_cli) == "0,0,0,2"  # the runs stay


def _on_a_terminal(db_path, tmp_path, args: list[str], answer: bytes):
    """The CLI with stdin and stderr on a pseudo-terminal, ``answer`` typed at its question."""
    import os
    import pty
    import select
    import subprocess
    import sys

    main, child = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "rankhouse", "--db", str(db_path), *args],
        stdin=child,
        stdout=subprocess.PIPE,
        stderr=child,
        cwd=tmp_path,
    )
    os.close(child)
    shown = b""
    while b"[y/N]" not in shown:
        ready, _, _ = select.select([main], [], [], 60)
        assert ready, shown
        shown += os.read(main, 4096)
    os.write(main, answer)
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    stdout = process.stdout.read()
    process.wait(timeout=120)
    assert stdout == b""  # the question and the answer are the terminal's, never data
    return process.returncode, shown.decode().replace("\r\n", "\n")


@pytest.mark.parametrize(
    ("answer", "code", "left"), [(b"n\n", 1, "1,4,1,2"), (b"y\n", 0, "0,0,0,2")]
)
def test_qrels_rm_on_a_terminal_asks_first(judged, run_cli, db_path, tmp_path, answer, code, left):
    returned, shown = _on_a_terminal(db_path, tmp_path, ["qrels", "rm", "ex"], answer)
    assert returned == code, shown
    assert f"Remove qrels set 'ex' (id 1) with {GONE}? [y/N] " in shown
    assert ("nothing removed" in shown) == (code == 1)
    assert _stored(run_cli) == left
