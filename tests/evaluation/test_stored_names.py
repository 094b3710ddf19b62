"""eval of stored names by stored labels: the same result as the measure parser's path, and
every other input taken by that path (issue 36: `eval` of stored values loads no parser)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rankhouse import MeasureError
from rankhouse.evaluation import flow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MEASURES = ["AP", "nDCG@10", "P(rel=2)@5", "AP(rel=2)", "RR"]


def _comparable(result):
    rows = [
        {k: v for k, v in row.items() if not (isinstance(v, float) and math.isnan(v))}
        for row in result.rows
    ]
    per_query = result.per_query
    return (
        rows,
        result.query_counts,
        result.labels,
        result.measures,
        result.qrels,
        None if per_query is None else per_query.to_dict("records"),
    )


@pytest.fixture
def stocked(any_warehouse):
    wh = any_warehouse
    wh.ingest_qrels(EXAMPLES / "qrels.txt", name="ex")
    wh.ingest_run(EXAMPLES / "run.bm25.txt", name="bm25")
    wh.ingest_run(EXAMPLES / "run.dense.txt", name="dense")
    return wh


def _without_parser(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the measure parser was called")

    monkeypatch.setattr(flow, "requested", refuse)


def test_stored_labels_give_the_parsers_result_without_the_parser(stocked, monkeypatch):
    first = stocked.evaluate("ex", ["bm25", "dense"], MEASURES)
    assert not any(row["reused"] for row in first.rows)
    parsed = stocked.evaluate("ex", ["bm25", "dense"], MEASURES)  # the parser's path, reused
    with monkeypatch.context() as patch:
        _without_parser(patch)
        named = stocked.evaluate("ex", ["bm25", "dense"], MEASURES)
        named_ids = stocked.evaluate("ex", [1, 2, 1], MEASURES)  # ids, and a run twice
    assert all(row["reused"] for row in named.rows)
    assert _comparable(named) == _comparable(parsed)
    assert _comparable(named_ids) == _comparable(parsed)
    # the counts as the rows say: dense answers 7 of the 8 qrels queries
    assert named.query_counts["dense"].missing_from_run == 1
    assert named.query_counts["bm25"].missing_from_run == 0


def test_a_measure_stored_at_another_level_only_is_computed_at_the_default(stocked):
    """nDCG@10 computed with level 2 is labelled nDCG@10 too, but at level 1 it is another
    evaluation: asked at the defaults, it is computed, as the parser's path does."""
    stocked.evaluate("ex", ["bm25"], ["nDCG@10"], relevance_level=2)
    again = stocked.evaluate("ex", ["bm25"], ["nDCG@10"])
    assert [row["reused"] for row in again.rows] == [False]
    with stocked.connect() as conn:
        levels = conn.execute(
            "SELECT relevance_level FROM evaluations WHERE measure = 'nDCG@10' ORDER BY 1"
        ).scalars()
    assert levels == [1, 2]


def test_other_inputs_take_the_parsers_path(stocked, monkeypatch):
    stocked.evaluate("ex", ["bm25"], ["AP"])
    with monkeypatch.context() as patch:
        _without_parser(patch)
        for call in (
            lambda: stocked.evaluate("ex", ["bm25"], ["map"]),  # not a label: parsed
            lambda: stocked.evaluate("ex", ["bm25"], ["AP"], relevance_level=2),
            lambda: stocked.evaluate("ex", ["bm25"], ["AP"], missing_queries="skip"),
            lambda: stocked.evaluate("ex", ["bm25"], ["AP"], recompute=True),
            lambda: stocked.evaluate(EXAMPLES / "qrels.txt", ["bm25"], ["AP"]),  # a file
        ):
            with pytest.raises(AssertionError, match="parser was called"):
                call()
    with pytest.raises(MeasureError):  # an unknown name is the parser's to refuse
        stocked.evaluate("ex", ["bm25"], ["NotAMeasure"])
