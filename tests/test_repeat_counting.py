"""Repeated (query, document) pairs and tied scores are counted two ways, chosen by size:
DuckDB counts distinct hashes for small inputs, a numpy sort of the hashes does it for large
ones. Both must find the same duplicates and the same ties; these tests run each input
through both by moving the threshold."""

from __future__ import annotations

import io

import pytest

from rankhouse import InputError
from rankhouse.ingest import direct_run, hashing
from rankhouse.trec_eval import main as trec_eval

# q1 has three documents at score 2 (two tied pairs), q2 two at score 1 (one tied pair)
RUN = (
    "q1 Q0 a 1 2 sys\nq1 Q0 b 2 2 sys\nq1 Q0 c 3 2 sys\nq1 Q0 d 4 1 sys\n"
    "q2 Q0 a 1 1 sys\nq2 Q0 b 2 1 sys\n"
)
QRELS = "q1 0 a 1\nq1 0 d 1\nq2 0 b 1\n"


@pytest.fixture(params=["duckdb", "numpy"])
def counted_by(request, monkeypatch) -> str:
    """Count repeats in DuckDB (the default for small inputs) or in numpy (threshold 0)."""
    if request.param == "numpy":
        monkeypatch.setattr(direct_run, "NUMPY_FROM", 0)
        monkeypatch.setattr(hashing, "NUMPY_FROM", 0)
    return request.param


def test_ties_and_queries_of_a_direct_ingest(warehouse, tmp_path, counted_by):
    path = tmp_path / "run.txt"
    path.write_text(RUN)
    [result] = warehouse.ingest_run(path)
    assert (result.num_rows, result.num_queries) == (6, 2)
    with warehouse.connect() as conn:
        tied = conn.execute("SELECT tied_pairs FROM runs WHERE id = :i", {"i": result.id})
        assert tied.scalar_one() == 3


def test_a_repeated_document_is_named_by_both_ways(warehouse, tmp_path, counted_by):
    path = tmp_path / "run.txt"
    path.write_text(RUN + "q2 Q0 a 3 0.5 sys\n")
    duplicate = "document 'a' appears twice for query 'q2'.*first at line 5 .*line 7"
    with pytest.raises(InputError, match=duplicate):
        warehouse.ingest_run(path)
    assert warehouse.runs().empty


def test_trec_eval_finds_the_same_duplicate_both_ways(tmp_path, counted_by):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(QRELS)
    run.write_text(RUN + "q1 Q0 a 5 0.5 sys\n")
    out, err = io.StringIO(), io.StringIO()
    code = trec_eval(["-m", "map", str(qrels), str(run)], out=out, err=err)
    # trec_eval aborts on a document retrieved twice for a topic
    assert code == 4
    assert err.getvalue().startswith("trec_eval.form_res_qrels: duplicate docs a")
