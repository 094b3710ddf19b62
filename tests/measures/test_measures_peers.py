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


def test_rbp_is_ir_measures_and_rbp_gains_trec_evals():
    qrels, run = _qrels([("a", 2), ("b", 1)]), _run(["a", "b"])
    # the grade is the gain: 0.2 * (2 + 0.8 * 1)
    assert _ours(qrels, run, "RBP(p=0.8)") == [pytest.approx(0.56)]
    # trec_eval's rbp_p=0.8 divides by the highest grade: 0.2 * (1 + 0.8 * 0.5)
    assert _ours(qrels, run, "rbp_p=0.8") == _ours(qrels, run, "RBP_gains")
    assert _ours(qrels, run, "RBP_gains") == [pytest.approx(0.28)]
    # binary: 0.2 * (1 + 0.8)
    assert _ours(qrels, run, "RBP(rel=1)") == [pytest.approx(0.36)]
    assert _peer("trectools", qrels, run, "RBP(p=0.8)") == [pytest.approx(0.56)]
    assert _ranx_rbp({"a": 2, "b": 1}, {"a": 2.0, "b": 1.0}) == pytest.approx(0.56)
    assert _peer("cwl_eval", qrels, run, "RBP(rel=1)") == [pytest.approx(0.36)]


def test_set_measures_at_k_are_of_the_top_k():
    qrels, run = _qrels([("a", 1), ("b", 1), ("x", 0)]), _run(["a", "x", "b"])
    assert _ours(qrels, run, "SetP@2") == [0.5]
    with pytest.raises(AssertionError, match="unsupported params found: \\['cutoff'\\]"):
        ir_measures.calc_aggregate([ir_measures.parse_measure("SetP@2")], qrels, run)
    # its pytrec_eval provider, called directly, leaves the cutoff out: a, b of 3
    assert _peer("pytrec_eval", qrels, run, "SetP@2") == [pytest.approx(2 / 3)]
    assert _ours(qrels, run, "SetP@10") == [pytest.approx(2 / 3)]
    assert _ours(qrels, run, "P@10") == [pytest.approx(0.2)]


def _peer(provider, qrels, run, name):
    """The values of ir_measures' ``provider`` (skips when its package is not installed)."""
    pytest.importorskip({"cwl_eval": "cwl"}.get(provider, provider))
    found = getattr(ir_measures, provider).iter_calc([ir_measures.parse_measure(name)], qrels, run)
    return [m.value for m in found]


def _ranx_rbp(judgments: dict, scores: dict) -> float:
    """ranx's RBP with p = 0.8 on one query (skips when ranx is not installed)."""
    ranx = pytest.importorskip("ranx")
    qrels, run = ranx.Qrels.from_dict({"q": judgments}), ranx.Run.from_dict({"q": scores})
    return ranx.evaluate(qrels, run, "rbp.8")


def test_rbp_ties_share_their_weights_as_trectools_does_and_ranx_does_not():
    """a and b tie at ranks 1 and 2: trectools (ir_measures' RBP) gives each the mean weight,
    0.2 * (1 + 0.8) / 2 = 0.18, so b (grade 1) gains 0.18; ranx ranks one of them first."""
    qrels, run = _qrels([("b", 1)]), [ir_measures.ScoredDoc("q", d, 1.0) for d in "ab"]
    assert _ours(qrels, run, "RBP(p=0.8)") == [pytest.approx(0.18)]
    assert _peer("trectools", qrels, run, "RBP(p=0.8)") == [pytest.approx(0.18)]
    assert _ranx_rbp({"b": 1}, {"a": 1.0, "b": 1.0}) in (pytest.approx(0.2), pytest.approx(0.16))


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
