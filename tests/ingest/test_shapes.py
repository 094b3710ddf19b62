"""Runs and qrels in the shapes people already have: several runs in a list or a dict,
pytrec_eval / ranx dicts of dicts, ir_measures' Qrel / ScoredDoc tuples, PyTerrier frames.

Every shape must give the numbers the same data gives as TREC files, which pytrec_eval
computes for the bundled examples.
"""

from __future__ import annotations

import ir_measures
import pandas as pd
import pytest
from report_helpers import EXAMPLES, QRELS, read_trec

import rankhouse
from rankhouse import InputError, Warehouse

RUNS = {name: EXAMPLES / f"run.{name}.txt" for name in ("bm25", "dense")}
MEASURES = ["AP", "nDCG@10", "P@5"]


@pytest.fixture(scope="module")
def expected(pytrec):
    """pytrec_eval's means of the example runs (queries the run misses count 0)."""
    qrels = read_trec(QRELS, 4)
    means = {}
    for name, path in RUNS.items():
        found = pytrec.evaluate(qrels, read_trec(path, 6), ["map", "ndcg_cut_10", "P_5"])
        means[name] = {
            measure: sum(found.get(q, {}).get(key, 0.0) for q in qrels) / len(qrels)
            for measure, key in (("AP", "map"), ("nDCG@10", "ndcg_cut_10"), ("P@5", "P_5"))
        }
    return means


def _means(result) -> dict[str, dict[str, float]]:
    return result.summary.set_index("run")[MEASURES].to_dict("index")


def _assert_means(result, expected, names=("bm25", "dense")):
    found = _means(result)
    assert list(found) == list(names)
    for shown, source in zip(names, ("bm25", "dense"), strict=True):
        assert found[shown] == pytest.approx(expected[source], abs=1e-12)


def _frame(path) -> pd.DataFrame:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return pd.DataFrame(
        {"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows]}
        | {"score": [float(r[4]) for r in rows]}
    )


def test_dicts_of_dicts_as_pytrec_eval_and_ranx_take_them(expected):
    qrels = read_trec(QRELS, 4)
    runs = {name: read_trec(path, 6) for name, path in RUNS.items()}
    _assert_means(rankhouse.evaluate(qrels, runs, MEASURES), expected)
    # one run as a bare dict of dicts
    single = rankhouse.evaluate(qrels, runs["dense"], MEASURES)
    assert list(_means(single).values())[0] == pytest.approx(expected["dense"], abs=1e-12)


def test_a_list_of_frames_and_a_dict_of_named_frames(expected):
    frames = [_frame(path) for path in RUNS.values()]
    by_list = rankhouse.evaluate(QRELS, frames, MEASURES)
    assert [v for v in _means(by_list).values()] == [
        pytest.approx(expected[n], abs=1e-12) for n in ("bm25", "dense")
    ]
    _assert_means(
        rankhouse.evaluate(QRELS, {"BM25": frames[0], "Dense": frames[1]}, MEASURES),
        expected,
        names=("BM25", "Dense"),
    )
    # files and frames mix
    mixed = rankhouse.evaluate(QRELS, {"a": RUNS["bm25"], "b": frames[1]}, MEASURES)
    assert list(_means(mixed)) == ["a", "b"]


def test_ir_measures_qrel_and_scored_doc_tuples(expected):
    # the example qrels start with a comment line, which read_trec_qrels does not take
    qrels = (
        ir_measures.Qrel(q, d, grade)
        for q, docs in read_trec(QRELS, 4).items()
        for d, grade in docs.items()
    )
    runs = {name: ir_measures.read_trec_run(str(path)) for name, path in RUNS.items()}
    result = rankhouse.evaluate(qrels, runs, MEASURES)
    _assert_means(result, expected)
    assert all(
        isinstance(d, ir_measures.ScoredDoc) for d in ir_measures.read_trec_run(str(RUNS["bm25"]))
    )
    as_list = list(ir_measures.read_trec_run(str(RUNS["dense"])))
    qrels = [
        ir_measures.Qrel(q, d, g)
        for q, docs in read_trec(QRELS, 4).items()
        for d, g in docs.items()
    ]
    single = rankhouse.evaluate(qrels, as_list, MEASURES)
    assert list(_means(single).values())[0] == pytest.approx(expected["dense"], abs=1e-12)


def _pyterrier_results() -> pd.DataFrame:
    """Two systems in one PyTerrier result frame: qid, docid (Terrier's internal number),
    docno, rank (from 0), score, query text and the system's name."""
    parts = []
    for name, path in (("BM25", RUNS["bm25"]), ("Dense", RUNS["dense"])):
        frame = _frame(path).rename(columns={"query_id": "qid", "doc_id": "docno"})
        frame = frame.sort_values(["qid", "score"], ascending=[True, False])
        frame["rank"] = frame.groupby("qid").cumcount()
        frame["docid"] = range(len(frame))  # internal ids: never the document
        frame["query"] = "some query text"
        frame["name"] = name
        parts.append(frame[["qid", "docid", "docno", "rank", "score", "query", "name"]])
    return pd.concat(parts, ignore_index=True)


def test_pyterrier_frames_are_named_by_their_name_column(expected):
    results = _pyterrier_results()
    qrels = pd.DataFrame(
        [(q, d, grade) for q, docs in read_trec(QRELS, 4).items() for d, grade in docs.items()],
        columns=["qid", "docno", "label"],
    )
    untouched = results.copy()
    result = rankhouse.evaluate(qrels, results, MEASURES)
    _assert_means(result, expected, names=("BM25", "Dense"))
    pd.testing.assert_frame_equal(results, untouched)  # the caller's frame is not modified
    # one system's frame in a list, beside another shape
    one = results[results["name"] == "Dense"].drop(columns="name")
    both = rankhouse.evaluate(qrels, {"first": read_trec(RUNS["bm25"], 6), "second": one}, MEASURES)
    _assert_means(both, expected, names=("first", "second"))


def test_warehouse_evaluate_and_compare_take_the_shapes(warehouse, expected):
    qrels = read_trec(QRELS, 4)
    runs = {name: read_trec(path, 6) for name, path in RUNS.items()}
    result = warehouse.evaluate(qrels, runs, MEASURES)
    _assert_means(result, expected)
    assert sorted(warehouse.runs()["name"]) == ["bm25", "dense"]  # stored under their names
    compared = warehouse.compare(qrels, runs, ["AP"], baseline="bm25")
    assert compared["mean"].tolist() == pytest.approx(
        [expected["bm25"]["AP"], expected["dense"]["AP"]], abs=1e-12
    )


@pytest.mark.parametrize(
    ("qrels", "runs", "message"),
    [
        (QRELS, {"a": {"q1": ["d1", "d2"]}}, "the run 'a' given as a dict must be"),
        (QRELS, {}, "no run given: the dict of runs is empty"),
        (QRELS, [object()], "cannot read a run from object"),
        (QRELS, 3.5, "cannot read runs from float"),
        ({"q1": ["d1"]}, RUNS["bm25"], "qrels given as a dict must be"),
        ([("q1", "d1", 1)], RUNS["bm25"], "cannot read qrels from list"),
    ],
)
def test_shapes_that_are_none_of_these_are_explained(qrels, runs, message):
    with pytest.raises(InputError, match=message):
        rankhouse.evaluate(qrels, runs, ["AP"])


def test_in_memory_evaluation_leaves_no_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rankhouse.evaluate({"q": {"a": 1}}, {"r": {"q": {"a": 1.0}}}, ["AP"])
    assert list(tmp_path.iterdir()) == []
    with Warehouse(":memory:") as wh:
        assert wh.evaluate({"q": {"a": 1}}, {"r": {"q": {"a": 1.0}}}, "AP").summary["AP"][0] == 1
