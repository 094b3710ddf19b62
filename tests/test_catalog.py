"""The catalogue: lookups by name or id, and removal with the stored evaluations."""

from __future__ import annotations

import pytest

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
    gate = run_cli("regress", "new", "--baseline", "previous", "--qrels", "q", "-m", "AP")
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
    assert history.stdout.splitlines()[1].endswith(",1.0,pass")

    # deleting the run under test deletes its own checks
    assert run_cli("runs", "rm", "new").exit_code == 0
    counts = run_cli(
        "sql",
        "SELECT (SELECT count(*) FROM regress_checks), (SELECT count(*) FROM regress_verdicts)",
        "--format",
        "csv",
    )
    assert counts.stdout.splitlines()[1] == "0,0"
