"""Warehouse.evaluate and rankhouse.evaluate: results, query bookkeeping, stored evaluations."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
import pytrec_eval

import rankhouse
from rankhouse import MeasureError, NotFoundError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

QRELS = EXAMPLES / "qrels.txt"
BM25 = EXAMPLES / "run.bm25.txt"
DENSE = EXAMPLES / "run.dense.txt"
# our canonical name -> pytrec_eval's measure
REFERENCE = {"nDCG@10": "ndcg_cut_10", "AP": "map", "P@5": "P_5", "RR": "recip_rank"}


def _read_qrels(path):
    qrels = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
    return qrels


def _read_run(path):
    run = {}
    for line in path.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    return run


def _reference(run_path, relevance_level=1):
    """Per-query values from pytrec_eval (queries missing from the run are absent)."""
    evaluator = pytrec_eval.RelevanceEvaluator(
        _read_qrels(QRELS), set(REFERENCE.values()), relevance_level=relevance_level
    )
    return evaluator.evaluate(_read_run(run_path))


def _count(wh, table):
    with wh.connect() as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").scalar_one()


def test_values_match_pytrec_eval_and_missing_queries_score_zero(warehouse):
    result = warehouse.evaluate(QRELS, [BM25, DENSE], list(REFERENCE))
    qrels_queries = set(_read_qrels(QRELS))
    for run_name, path in (("bm25", BM25), ("dense", DENSE)):
        expected = _reference(path)
        ours = result.per_query[result.per_query["run"] == run_name]
        assert set(ours["query"]) == qrels_queries
        for row in ours.itertuples():
            want = expected.get(row.query, {}).get(REFERENCE[row.measure], 0.0)
            assert row.value == pytest.approx(want, abs=1e-9), (run_name, row.query, row.measure)
        summary = result.summary.set_index("run").loc[run_name]
        for measure, theirs in REFERENCE.items():
            mean = sum(v[theirs] for v in expected.values()) / len(qrels_queries)
            assert summary[measure] == pytest.approx(mean, abs=1e-9)
    assert list(result.summary.columns) == ["run", *REFERENCE]
    assert list(result.per_query.columns) == ["run", "query", "measure", "value"]


def test_skip_policy_averages_over_answered_queries(warehouse):
    result = warehouse.evaluate(QRELS, DENSE, ["AP"], missing_queries="skip")
    expected = _reference(DENSE)
    mean = sum(v["map"] for v in expected.values()) / len(expected)
    # the column is the label, as the CLI prints it: the policy is part of what was computed
    assert result.summary.loc[0, "AP [missing_queries=skip]"] == pytest.approx(mean, abs=1e-9)
    counts = result.query_counts["dense"]
    assert counts.evaluated == len(expected) == 7
    assert counts.missing_from_run == 1


def test_relevance_level_is_passed_to_binary_measures(warehouse):
    result = warehouse.evaluate(QRELS, BM25, ["AP", "AP(rel=2)"], relevance_level=1)
    at_two = _reference(BM25, relevance_level=2)
    n = len(_read_qrels(QRELS))
    assert result.summary.loc[0, "AP(rel=2)"] == pytest.approx(
        sum(v["map"] for v in at_two.values()) / n, abs=1e-9
    )
    assert result.summary.loc[0, "AP"] != result.summary.loc[0, "AP(rel=2)"]


def test_query_counts_ignored_queries_and_ties(warehouse):
    run = pd.DataFrame(
        {
            "qid": ["q1", "q1", "q1", "q1", "zz", "zz"],
            "docid": ["doc023", "a", "b", "c", "x", "y"],
            "score": [3.0, 2.0, 2.0, 2.0, 1.0, 1.0],
            "tag": "tied",
        }
    )
    result = warehouse.evaluate(QRELS, run, ["P@5"])
    counts = result.query_counts["tied"]
    assert counts.ignored == 1  # zz has no judgments
    assert counts.missing_from_run == 7
    assert counts.tied_pairs == 3  # (a,b), (b,c) in q1 and (x,y) in zz
    assert counts.evaluated == 8


def test_second_evaluation_is_reused_unless_recompute(warehouse):
    first = warehouse.evaluate(QRELS, [BM25, DENSE], ["AP", "nDCG@10"])
    stored = _count(warehouse, "evaluations")
    values = _count(warehouse, "evaluation_values")
    assert stored == 4 and values == 4 * 8
    assert first.num_reused == 0

    again = warehouse.evaluate("qrels", ["bm25", "dense"], ["AP", "nDCG@10"])
    assert again.num_reused == 4
    assert list(again.aggregates["evaluation_id"]) == list(first.aggregates["evaluation_id"])
    pd.testing.assert_frame_equal(again.summary, first.summary)
    # values read back from storage come in the same order and types as freshly computed ones
    pd.testing.assert_frame_equal(
        again.per_query.astype({"run": object, "query": object, "measure": object}),
        first.per_query.astype({"run": object, "query": object, "measure": object}),
    )
    assert list(first.per_query["query"].head(2)) == ["q1", "q1"]

    recomputed = warehouse.evaluate("qrels", "bm25", ["AP"], recompute=True)
    assert recomputed.num_reused == 0
    assert _count(warehouse, "evaluations") == stored  # replaced, not duplicated
    assert _count(warehouse, "evaluation_values") == values  # the old values went with them
    assert recomputed.summary.loc[0, "AP"] == first.summary.loc[0, "AP"]

    other_level = warehouse.evaluate("qrels", "bm25", ["AP"], relevance_level=2)
    assert other_level.num_reused == 0
    assert _count(warehouse, "evaluations") == stored + 1


def test_evaluations_inserted_several_to_a_statement_keep_their_own_values(
    any_warehouse, monkeypatch
):
    from rankhouse.evaluation import computing as evaluation

    monkeypatch.setattr(evaluation, "_INSERT_ROWS", 3)  # 8 evaluations: 3 + 3 + 2 rows
    measures = ["AP", "nDCG@10", "P@5", "RR"]
    first = any_warehouse.evaluate(QRELS, [BM25, DENSE], measures)
    again = any_warehouse.evaluate("qrels", ["bm25", "dense"], measures, recompute=True)
    for result in (first, again):
        assert _count(any_warehouse, "evaluations") == 8
        with any_warehouse.connect() as conn:
            stored = conn.execute(
                "SELECT r.name, e.measure, e.value, avg(v.value), count(v.value) "
                "FROM evaluations AS e JOIN runs AS r ON r.id = e.run_id "
                "JOIN evaluation_values AS v ON v.evaluation_id = e.id "
                "GROUP BY r.name, e.measure, e.value"
            ).all()
        assert len(stored) == 8
        summary = result.summary.set_index("run")
        for run, measure, value, mean, count in stored:
            assert count == 8
            assert value == pytest.approx(mean, abs=1e-12)  # its own per-query values
            assert value == pytest.approx(summary.loc[run, measure], abs=1e-12)
        assert len({(run, measure) for run, measure, *_ in stored}) == 8


def test_stored_evaluation_records_what_produced_it(warehouse):
    warehouse.evaluate(QRELS, BM25, ["nDCG@10"], relevance_level=2, missing_queries="skip")
    with warehouse.connect() as conn:
        row = conn.execute("SELECT * FROM evaluations").mappings().one()
        sha = conn.execute("SELECT content_sha256 FROM qrels_sets").scalar_one()
    assert row["measure"] == "nDCG@10"
    assert row["relevance_level"] == 2
    assert row["missing_queries"] == "skip"
    assert row["qrels_sha256"] == sha
    assert row["rankhouse_version"] == rankhouse.__version__
    assert row["aggregate"] == "mean"
    assert row["num_q"] == 8
    assert json.loads(row["parameters"])["cutoff"] == 10


def test_unknown_measure_and_unknown_run(warehouse):
    with pytest.raises(MeasureError, match=r"unknown measure 'nDGC@10'; did you mean nDCG@10\?"):
        warehouse.evaluate(QRELS, BM25, ["nDGC@10"])
    with pytest.raises(NotFoundError, match="no-such-run"):
        warehouse.evaluate(QRELS, "no-such-run", ["AP"])


def test_evaluate_frames_with_any_column_names():
    qrels = pd.DataFrame({"QUERY": ["1", "1", "2"], "DOC": ["a", "b", "c"], "LABEL": [1, 0, 2]})
    run = pd.DataFrame(
        {"QUERY": ["1", "1", "2", "2"], "DOC": ["a", "b", "c", "d"], "SIM": [0.2, 0.9, 0.5, 0.7]}
    )
    result = rankhouse.evaluate(
        qrels,
        run,
        ["RR", "P@2"],
        columns={"qid": "QUERY", "docid": "DOC", "score": "SIM"},
        qrels_columns={"qid": "QUERY", "docid": "DOC", "rel": "LABEL"},
    )
    values = result.per_query.set_index(["query", "measure"])["value"]
    # query 1: b (0.9, non-relevant) then a (relevant) -> RR 1/2; query 2: d then c -> 1/2
    assert values[("1", "RR")] == 0.5 and values[("2", "RR")] == 0.5
    assert values[("1", "P@2")] == 0.5 and values[("2", "P@2")] == 0.5
    assert result.summary.loc[0, "RR"] == 0.5


# --- the CLI, in a subprocess ----------------------------------------------------------------


def test_cli_eval_table_then_reuse(run_cli):
    first = run_cli("eval", QRELS, BM25, DENSE, "-m", "AP", "-m", "nDCG@10")
    assert first.exit_code == 0, first.stderr
    assert "bm25" in first.stdout and "dense" in first.stdout and "nDCG@10" in first.stdout
    assert "1 qrels query not in the run (scored as empty rankings)" in first.stderr
    again = run_cli("eval", "qrels", "bm25", "dense", "-m", "AP", "-m", "nDCG@10")
    assert again.exit_code == 0
    assert "4 of 4 results reused from storage" in again.stderr


def test_cli_eval_json_and_tsv_values(run_cli):
    reference = _reference(BM25)
    expected_ap = sum(v["map"] for v in reference.values()) / 8
    as_json = run_cli("eval", QRELS, BM25, "-m", "AP", "--format", "json")
    assert as_json.exit_code == 0, as_json.stderr
    records = json.loads(as_json.stdout)
    assert records[0]["run"] == "bm25"
    assert records[0]["AP"] == pytest.approx(expected_ap, abs=1e-12)

    as_tsv = run_cli("eval", "qrels", "bm25", "-m", "AP", "--per-query", "--format", "tsv")
    lines = as_tsv.stdout.splitlines()
    assert lines[0] == "run\tquery\tAP"
    rows = {line.split("\t")[1]: line.split("\t")[2] for line in lines[1:]}
    # machine formats carry the exact double (its shortest round-trip spelling)
    assert rows["q1"] == repr(float(rows["q1"]))
    assert float(rows["q1"]) == pytest.approx(reference["q1"]["map"], abs=1e-15)
    assert len(rows) == 8


def test_cli_eval_errors(run_cli):
    unknown = run_cli("eval", QRELS, BM25, "-m", "nDGC@10")
    assert unknown.exit_code == 1
    assert unknown.stderr.startswith("Error: ")
    assert "did you mean nDCG@10?" in unknown.stderr  # the closest known name is suggested
    missing = run_cli("eval", QRELS, "no-such-run")
    assert missing.exit_code == 1
    assert "no-such-run" in missing.stderr
    usage = run_cli("eval")
    assert usage.exit_code == 2


def test_cli_eval_csv_is_full_precision(run_cli):
    result = run_cli("eval", QRELS, BM25, "-m", "nDCG@10", "--format", "csv")
    header, row = result.stdout.splitlines()
    assert header == "run,num_q,nDCG@10,nDCG@10 low,nDCG@10 high"
    value = float(row.split(",")[2])
    expected = sum(v["ndcg_cut_10"] for v in _reference(BM25).values()) / 8
    assert math.isclose(value, expected, abs_tol=1e-15)


def test_tied_pairs_are_counted_at_ingest_and_recounted_when_absent(warehouse):
    run = pd.DataFrame(
        {
            "qid": ["q1", "q1", "q1", "q2", "q2"],
            "docid": ["a", "b", "c", "a", "b"],
            "score": [1.0, 1.0, 1.0, 2.0, 1.0],
            "tag": "ties",
        }
    )
    [stored] = warehouse.ingest_run(run)
    with warehouse.connect() as conn:
        at_ingest = conn.execute(
            "SELECT tied_pairs FROM runs WHERE id = :i", {"i": stored.id}
        ).scalar_one()
    assert at_ingest == 2  # (a, b) and (b, c) in q1
    with warehouse.transaction() as conn:  # as a run stored before migration 0004
        conn.execute("UPDATE runs SET tied_pairs = NULL")
    result = warehouse.evaluate(QRELS, "ties", ["P@5"])
    assert result.query_counts["ties"].tied_pairs == 2


def test_without_per_query_the_means_are_the_same_and_per_query_values_are_refused(warehouse):
    full = warehouse.evaluate(QRELS, BM25, ["AP", "RR"])
    lean = warehouse.evaluate(QRELS, BM25, ["AP", "RR"], recompute=True, with_per_query=False)
    assert lean.summary_rows() == full.summary_rows()
    with pytest.raises(rankhouse.RankhouseError, match="with_per_query=False"):
        lean.per_query  # noqa: B018
    with pytest.raises(rankhouse.RankhouseError, match="with_per_query=False"):
        lean.per_query_rows()
    again = warehouse.evaluate(QRELS, BM25, ["AP", "RR"])  # what was stored is all there
    assert again.num_reused == 2
    assert again.per_query_rows() == full.per_query_rows()
