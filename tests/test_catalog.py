"""The catalogue: lookups by name or id, and removal with the stored evaluations."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from rankhouse import NotFoundError
from rankhouse.catalog import run_query_counts


def _add_evaluation(wh, run_id: int, qrels_id: int) -> None:
    with wh.transaction() as conn:
        eid = conn.execute(
            sa.text(
                "INSERT INTO evaluations (run_id, qrels_id, qrels_sha256, measure, parameters, "
                "relevance_level, missing_queries, options, aggregate, value, num_q, "
                "rankhouse_version, created_at) VALUES (:r, :q, 'x', 'AP', '{}', 1, 'zero', '{}', "
                "'mean', 0.5, 1, 'test', now()) RETURNING id"
            ),
            {"r": run_id, "q": qrels_id},
        ).scalar_one()
        conn.execute(sa.text("INSERT INTO evaluation_values VALUES (:e, '1', 0.5)"), {"e": eid})


def _count(wh, table: str) -> int:
    with wh.connect() as conn:
        return conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar()


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
