"""docs/measures.md's "Where a peer computes a name differently", example by example, against
the peers themselves (ir_measures, its trectools provider, ranx), and ir_measures' names that
rankhouse reads as ir_measures means them."""

from __future__ import annotations

import warnings

import pytest

import rankhouse
from rankhouse.errors import MeasureError
from rankhouse.measures import parse_measure, parse_measures

ir_measures = pytest.importorskip("ir_measures")


def _ours(qrels, run, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = rankhouse.evaluate(qrels, run, [name], allow_no_overlap=True)
    return result.per_query["value"].tolist()


def _qrels(pairs):
    return [ir_measures.Qrel("q", doc, grade) for doc, grade in pairs]


def _run(docs):
    return [ir_measures.ScoredDoc("q", doc, float(len(docs) - i)) for i, doc in enumerate(docs)]


def test_rbp_graded():
    qrels, run = _qrels([("a", 2), ("b", 1)]), _run(["a", "b"])
    assert _ours(qrels, run, "RBP(p=0.8)") == [pytest.approx(0.28)]
    pytest.importorskip("trectools")
    theirs = ir_measures.trectools.iter_calc([ir_measures.parse_measure("RBP(p=0.8)")], qrels, run)
    assert [m.value for m in theirs] == [pytest.approx(0.56)]
    ranx = pytest.importorskip("ranx")
    value = ranx.evaluate(
        ranx.Qrels.from_dict({"q": {"a": 2, "b": 1}}),
        ranx.Run.from_dict({"q": {"a": 2.0, "b": 1.0}}),
        "rbp.8",
    )
    assert value == pytest.approx(0.56)
    with pytest.raises(MeasureError):
        parse_measure("RBP(rel=1)")


def test_judged_counts_a_negative_grade_as_ir_measures_does():
    qrels, run = _qrels([("a", -1), ("b", 0)]), _run(["a", "c", "b"])
    theirs = ir_measures.iter_calc([ir_measures.parse_measure("Judged@3")], qrels, run)
    assert [m.value for m in theirs] == [pytest.approx(2 / 3)]  # a and b judged, c not
    assert _ours(qrels, run, "Judged@3") == [pytest.approx(2 / 3)]


def test_iprec_of_trec_eval_9_and_10():
    qrels = _qrels([("a", 1), ("d", 1), ("e", 1), ("f", 1), ("b", 0), ("c", 0)])
    run = _run(["a", "b", "c", "d", "e", "f"])
    assert _ours(qrels, run, "IPrec@0.3") == [1.0]
    theirs = ir_measures.iter_calc([ir_measures.parse_measure("IPrec@0.3")], qrels, run)
    assert [m.value for m in theirs] == [pytest.approx(4 / 6)]


@pytest.mark.parametrize("given", ["NumRet(rel=1)", "NumRelRet(rel=1)"])
def test_numrelret_as_ir_measures_prints_it(given):
    """ir_measures' NumRelRet prints as NumRet(rel=1): the relevant documents retrieved."""
    assert parse_measure(given).name == "NumRelRet(rel=1)"
    assert [m.name for m in parse_measures([ir_measures.NumRelRet])] == ["NumRelRet(rel=1)"]
    qrels, run = _qrels([("a", 2), ("b", 0), ("c", 1)]), _run(["a", "b", "c", "x"])
    assert _ours(qrels, run, given) == [2.0]
    theirs = ir_measures.iter_calc([ir_measures.parse_measure(given)], qrels, run)
    assert [m.value for m in theirs] == [2.0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("P@5,", "'5,' is not an integer; one measure per name"),
        ("P@x", "'x' is not an integer"),
        ("P@5.5", "must be an integer, not 5.5"),
        ("nDCG(dcg=1)@10", "must be a string, not 1"),
        ("P5", "did you mean P, P@5"),
    ],
)
def test_measure_name_messages(text, message):
    with pytest.raises(MeasureError) as caught:
        parse_measure(text)
    assert message in str(caught.value)
    assert "(5,)" not in str(caught.value) and "a int" not in str(caught.value)
