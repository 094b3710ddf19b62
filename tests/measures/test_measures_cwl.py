"""The C/W/L measures of cwl_eval (INST, INSQ, BPM, SDCG, NERR8-NERR11) and ir_measures'
Accuracy: ir_measures' own test cases (tests/test_cwl_eval.py, tests/test_accuracy.py, its
files copied to tests/golden/cwl.*), values by hand, and the home tools' providers in
ir_measures on generated qrels and runs (ties, unjudged documents, grades -1 to 3, queries
missing on either side).

cwl_eval keeps tied documents in the order it reads them, and so does ir_measures' accuracy
provider; rankhouse ranks ties as trec_eval does (score descending, then doc id descending).
The providers are given each run already in that order, so that both rank alike.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import BACKENDS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from measure_helpers import (
    RANKINGS,
    assert_same_numbers,
    collections,
    ranking_path,
    stored_values,
)

import rankhouse
from rankhouse.errors import MeasureError
from rankhouse.measures import parse_measure, parse_measures

ir_measures = pytest.importorskip("ir_measures")

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# ir_measures' tests/test_cwl_eval.py: "based on a manual execution of cwl-eval" (4 decimals)
CWL_EVAL_CASES = {
    "BPM(T=1.0,max_rel=1)@20": (1.0000, 1.0000, 0.1667),
    "BPM(T=2.0,max_rel=1)@10": (0.6667, 1.0000, 0.2857),
    "INSQ(T=1.0,max_rel=1)": (0.5872, 0.6629, 0.0880),
    "INSQ(T=2.0,max_rel=1)": (0.4513, 0.5068, 0.1292),
    "INST(T=1.0,max_rel=1)": (0.7934, 0.9226, 0.0888),
    "INST(T=2.0,max_rel=1)": (0.5994, 0.6924, 0.1397),
    "SDCG(max_rel=1)@10": (0.5645, 0.6531, 0.2848),
    "NERR8(max_rel=1)@10": (1.0000, 1.0000, 0.1667),
    "NERR9(max_rel=1)@10": (1.0000, 1.0000, 0.0680),
    "NERR10(p=0.8,max_rel=1)": (1.0000, 1.0000, 0.0888),
    "NERR11(T=2.0,max_rel=1)": (1.0000, 1.0000, 0.0691),
}


def _per_query(qrels, run, names) -> dict[tuple[str, str], float]:
    with warnings.catch_warnings():  # generated runs may answer few of the queries
        warnings.simplefilter("ignore")
        result = rankhouse.evaluate(qrels, run, names, allow_no_overlap=True)
    return {(r.measure, r.query): r.value for r in result.per_query.itertuples()}


def _frame(pairs, columns) -> pd.DataFrame:
    return pd.DataFrame(pairs, columns=columns)


@pytest.mark.parametrize("backend_target", BACKENDS, indirect=True)
def test_ir_measures_cwl_eval_cases(any_warehouse, file_twin):
    """On each backend (a server stores the same doubles as a DuckDB file)."""
    qrels, run = GOLDEN / "cwl.qrels", GOLDEN / "cwl.run"
    names = [parse_measure(name).name for name in CWL_EVAL_CASES]  # T=1.0, the default, left out
    ours = stored_values(any_warehouse, qrels, run, names, "cwl")
    for name, expected in zip(names, CWL_EVAL_CASES.values(), strict=True):
        found = tuple(ours[(name, query)] for query in ("T1", "T2", "T3"))
        assert found == pytest.approx(expected, abs=1e-4), name
    assert_same_numbers(any_warehouse, file_twin, qrels, run, names + ["Accuracy", "Compat"])


# qrels a=2, b=1 (max_rel=2: gains 1 and 0.5); ranked x (unjudged), a, b
BY_HAND = {
    # P(i) = 1/log2(i+1) for i <= 3: (1/log2 3 + 0.5/2) / (1 + 1/log2 3 + 1/2)
    "SDCG(max_rel=2)@3": (1 / 1.584962500721156 + 0.25) / (1 + 1 / 1.584962500721156 + 0.5),
    # G reaches T = 1 at rank 2: G(2) / 2
    "BPM(max_rel=2)@3": 1 / 2,
    # the cutoff stops first: G(1) / 1
    "BPM(max_rel=2)@1": 0.0,
    # C = 1, 0 (a gains 1): P = 1, 1, 0, so (0 + 1) / 2
    "NERR8(max_rel=2)@3": 1 / 2,
    # C(1) = 1/2 * 1, C(2) = 0: P = 1, 1/2, 0, so (1/2) / (3/2)
    "NERR9(max_rel=2)@3": 1 / 3,
    # min_rel=1: a gains 1, b 0 (grade 1 is min_rel)
    "NERR8(min_rel=1,max_rel=2)@3": 1 / 2,
    # x, a past k = 1
    "SDCG(max_rel=2)@1": 0.0,
}


def test_values_by_hand():
    qrels = _frame([("q", "a", 2), ("q", "b", 1)], ["query_id", "doc_id", "grade"])
    run = _frame(
        [("q", "x", 3.0), ("q", "a", 2.0), ("q", "b", 1.0)], ["query_id", "doc_id", "score"]
    )
    ours = _per_query(qrels, run, list(BY_HAND))
    assert {name: ours[(name, "q")] for name in BY_HAND} == pytest.approx(BY_HAND, abs=1e-12)


def test_nerr10_by_hand_over_1000_ranks():
    """One document, relevant at rank 1: C(1) = p * 0, so NERR10 = 1; at rank 2 (x first):
    P = 1, p, 0, ... so p / (1 + p). NERR10 reads 1000 ranks whatever the run's length."""
    qrels = _frame([("q", "a", 1)], ["query_id", "doc_id", "grade"])
    run = _frame([("q", "x", 2.0), ("q", "a", 1.0)], ["query_id", "doc_id", "score"])
    ours = _per_query(qrels, run, ["NERR10(max_rel=1)", "NERR10(p=0.5,max_rel=1)"])
    assert ours[("NERR10(max_rel=1)", "q")] == pytest.approx(0.9 / 1.9, abs=1e-12)
    assert ours[("NERR10(p=0.5,max_rel=1)", "q")] == pytest.approx(0.5 / 1.5, abs=1e-12)


def _trec_ordered(run: pd.DataFrame) -> list:
    """The run as ir_measures ScoredDocs in trec_eval's order (score descending, doc id
    descending): the order cwl_eval and ir_measures' accuracy keep for tied scores."""
    ranked = run.sort_values(["query_id", "score", "doc_id"], ascending=False)
    return [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in ranked.itertuples(index=False)]


def _judgments(qrels: pd.DataFrame) -> list:
    return [ir_measures.Qrel(q, d, int(g)) for q, d, g in qrels.itertuples(index=False)]


@st.composite
def cwl_names(draw) -> list[str]:
    """Every C/W/L measure with drawn parameters (the grade range, T, p, the cutoff)."""
    pytest.importorskip("cwl")
    min_rel = draw(st.integers(0, 1))
    max_rel = draw(st.integers(min_rel + 1, 3))
    goal = draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]))
    k = draw(st.integers(1, 13))
    p = draw(st.sampled_from([0.0, 0.5, 0.8, 0.95, 1.0]))
    grades = f"min_rel={min_rel},max_rel={max_rel}"
    return [
        f"INST(T={goal},{grades})",
        f"INSQ(T={goal},{grades})",
        f"NERR11(T={goal},{grades})",
        f"NERR10(p={p},{grades})",
        f"BPM(T={goal},{grades})@{k}",
        f"SDCG({grades})@{k}",
        f"NERR8({grades})@{k}",
        f"NERR9({grades})@{k}",
    ]


@given(data=collections(), names=cwl_names(), ranking=st.sampled_from(RANKINGS))
@SETTINGS
def test_cwl_measures_are_cwl_evals(data, names, ranking):
    qrels, run = data
    with ranking_path(ranking):
        ours = _per_query(qrels, run, names)
    judgments, scored = _judgments(qrels), _trec_ordered(run)
    for name in names:
        theirs = {
            m.query_id: m.value
            for m in ir_measures.cwl_eval.iter_calc(
                [ir_measures.parse_measure(name)], judgments, scored
            )
        }
        canonical = parse_measure(name).name
        for query in qrels.query_id.unique():
            # cwl_eval computes in floating point, as here: the same numbers to 1e-9
            expected = theirs.get(query, 0.0)  # a query the run lacks: ir_measures' 0
            assert ours[(canonical, query)] == pytest.approx(expected, abs=1e-9), (name, query)


def test_cwl_eval_reads_1000_ranks():
    """Ranks past 1000 gain nothing; ranks past the run's end count in the weights."""
    pytest.importorskip("cwl")
    docs = [f"d{i:04d}" for i in range(1, 1004)]
    run = _frame([("q", d, float(-i)) for i, d in enumerate(docs)], ["query_id", "doc_id", "score"])
    qrels = _frame(
        [("q", docs[2], 1), ("q", docs[999], 2), ("q", docs[1001], 2)],
        ["query_id", "doc_id", "grade"],
    )
    names = ["INST(max_rel=2)", "INSQ(T=3.0,max_rel=2)", "NERR10(p=0.999,max_rel=2)"]
    names += ["NERR11(max_rel=2)", "BPM(T=2.0,max_rel=2)@2000", "SDCG(max_rel=2)@1200"]
    ours = _per_query(qrels, run, names)
    for name in names:
        theirs = ir_measures.cwl_eval.iter_calc(
            [ir_measures.parse_measure(name)], _judgments(qrels), _trec_ordered(run)
        )
        assert [ours[(parse_measure(name).name, "q")]] == [
            pytest.approx(m.value, abs=1e-9) for m in theirs
        ]


def test_ties_are_ranked_as_trec_eval_ranks_them():
    """a and b tie, b relevant: doc id descending puts b first (NERR8@1 = 1); cwl_eval keeps
    the run's order, a first (0)."""
    pytest.importorskip("cwl")
    qrels = _frame([("q", "b", 1)], ["query_id", "doc_id", "grade"])
    run = _frame([("q", "a", 1.0), ("q", "b", 1.0)], ["query_id", "doc_id", "score"])
    assert _per_query(qrels, run, ["NERR8(max_rel=1)@1"]) == {("NERR8(max_rel=1)@1", "q"): 1.0}
    theirs = ir_measures.cwl_eval.iter_calc(
        [ir_measures.parse_measure("NERR8(max_rel=1)@1")],
        _judgments(qrels),
        [ir_measures.ScoredDoc("q", d, 1.0) for d in "ab"],
    )
    assert [m.value for m in theirs] == [0.0]


@pytest.mark.parametrize(
    "name",
    [
        "INST(max_rel=1)",
        "INST(T=2.0,max_rel=3)",
        "INSQ(max_rel=2)",
        "BPM(T=2.0,max_rel=1)@10",
        "SDCG(max_rel=1)@10",
        "NERR8(min_rel=1,max_rel=3)@5",
        "NERR9(max_rel=1)@10",
        "NERR10(p=0.8,max_rel=1)",
        "NERR11(T=2.0,max_rel=1)",
        "Accuracy",
        "Accuracy(rel=2)@5",
        "Compat",
        "Compat(p=0.9)",
        "Compat(normalize=False)",
    ],
)
def test_names_are_ir_measures(name):
    assert parse_measure(name).name == name
    assert str(ir_measures.parse_measure(name)) == name
    # an ir_measures object is read through its string form
    assert [m.name for m in parse_measures([ir_measures.parse_measure(name)])] == [name]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("INST", "INST needs its max_rel parameter, e.g. INST(max_rel=...)"),
        ("SDCG(max_rel=1)", "SDCG needs its cutoff parameter, e.g. SDCG@10"),
        ("INST(min_rel=2,max_rel=2)", "INST: min_rel must be below max_rel"),
        ("BPM(T=0,max_rel=1)@5", "BPM: parameter T must be > 0, not 0.0"),
        ("NERR10(p=1.5,max_rel=1)", "NERR10: parameter p must be"),
        ("SDCG(dcg='exp-log2',max_rel=1)@5", "SDCG: parameter dcg must be one of 'log2'"),
        ("Compat(p=-0.1)", "Compat: parameter p must be"),
        ("Compat(normalize=1)", "Compat: parameter normalize must be"),
        ("INST(rel=1,max_rel=1)", "INST takes parameters T, min_rel, max_rel, not rel=1"),
    ],
)
def test_bad_parameters_are_refused(text, message):
    with pytest.raises(MeasureError) as caught:
        parse_measure(text)
    assert message in str(caught.value)


# ir_measures' tests/test_accuracy.py
ACCURACY_QRELS = [
    ("0", "C0_1", 0),
    ("0", "B0_1", 1),
    ("0", "A0_1", 2),
    ("1", "A1_1", 2),
    ("1", "A1_2", 2),
    ("1", "B1_1", 1),
    ("1", "C1_2", 0),
    ("2", "B1_1", 1),
]
ACCURACY_RUN = [
    ("0", "C0_1", 0.4),
    ("0", "A0_1", 0.3),
    ("0", "C0_2", 0.2),
    ("0", "C0_3", 0.1),
    ("1", "C1_1", 0.8),
    ("1", "A1_1", 0.7),
    ("1", "C1_2", 0.6),
    ("1", "B1_1", 0.5),
    ("1", "C1_3", 0.4),
    ("2", "B1_1", 0.2),
    ("2", "C1_1", 0.1),
]


def test_ir_measures_accuracy_cases():
    qrels = _frame(ACCURACY_QRELS, ["query_id", "doc_id", "grade"])
    run = _frame(ACCURACY_RUN, ["query_id", "doc_id", "score"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = rankhouse.evaluate(qrels, run, ["Accuracy", "Accuracy(rel=2)"])
    ours = {(r.measure, r.query): r.value for r in result.per_query.itertuples()}
    expected = {
        ("Accuracy", "0"): 2 / 3,
        ("Accuracy", "1"): 0.5 * (2 / 3 + 1 / 3),
        ("Accuracy", "2"): 1.0,
        ("Accuracy(rel=2)", "0"): 2 / 3,
        ("Accuracy(rel=2)", "1"): 0.75,
        # nothing of grade 2 retrieved: ir_measures reports no value, rankhouse 0
        ("Accuracy(rel=2)", "2"): 0.0,
    }
    assert ours == pytest.approx(expected, abs=1e-9)
    # ir_measures' aggregate, the mean of its three values
    assert result.summary["Accuracy"].tolist() == [pytest.approx((2 / 3 + 1 / 2 + 1) / 3)]


def test_accuracy_of_a_top_k_without_non_relevant_documents_is_1():
    """ir_measures' provider divides by zero there; every relevant document is ranked before
    every non-relevant one (there is none), so 1: a perfect top k."""
    qrels = _frame([("q", "a", 1), ("q", "b", 1)], ["query_id", "doc_id", "grade"])
    run = _frame(
        [("q", "a", 3.0), ("q", "b", 2.0), ("q", "x", 1.0)], ["query_id", "doc_id", "score"]
    )
    ours = _per_query(qrels, run, ["Accuracy@2", "Accuracy", "Accuracy@1"])
    assert ours == {("Accuracy@2", "q"): 1.0, ("Accuracy", "q"): 1.0, ("Accuracy@1", "q"): 1.0}
    with pytest.raises(ZeroDivisionError):
        list(
            ir_measures.accuracy.iter_calc(
                [ir_measures.parse_measure("Accuracy@2")], _judgments(qrels), _trec_ordered(run)
            )
        )


@given(data=collections(), cutoff=st.integers(0, 13), level=st.sampled_from([1, 2]))
@SETTINGS
def test_accuracy_is_ir_measures(data, cutoff, level):
    """Query by query (the provider stops at its first division by zero): its value where it
    gives one, 1 where it divides by zero, 0 where it gives none."""
    qrels, run = data
    name = "Accuracy" + (f"(rel={level})" if level != 1 else "") + (f"@{cutoff}" if cutoff else "")
    ours = _per_query(qrels, run, [name])
    measure = ir_measures.parse_measure(name)
    for query in qrels.query_id.unique():
        judged = _judgments(qrels[qrels.query_id == query])
        scored = _trec_ordered(run[run.query_id == query])
        try:
            theirs = [m.value for m in ir_measures.accuracy.iter_calc([measure], judged, scored)]
        except ZeroDivisionError:
            theirs = [1.0]
        assert [ours[(parse_measure(name).name, query)]] == pytest.approx(theirs or [0.0], abs=1e-9)


# ir_measures' tests/test_compat.py: "based on a manual execution of
# https://github.com/claclark/Compatibility" (its files copied to tests/golden/compat.*)
COMPAT_CASES = {
    "Compat(p=0.95)": (0.51779512165509, 0.018400100569017922),
    "Compat(p=0.9)": (0.3761334522946854, 0.004344079941789211),
    "Compat(p=0.8)": (0.16723008845234535, 0.00022806427320561776),
}


def test_ir_measures_compat_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = rankhouse.evaluate(
            GOLDEN / "compat.qrels", GOLDEN / "compat.run", list(COMPAT_CASES)
        )
    ours = {(r.measure, r.query): r.value for r in result.per_query.itertuples()}
    for name, expected in COMPAT_CASES.items():
        canonical = parse_measure(name).name  # p=0.95 is the default: Compat
        found = (ours[(canonical, "31_1")], ours[(canonical, "31_2")])
        assert found == pytest.approx(expected, abs=1e-9), name
    assert result.summary["Compat"].tolist() == [pytest.approx(0.268097611, abs=1e-9)]


def test_compat_by_hand():
    """Ideal a (2), b (1); the run ranks b, x, a. O(1..3) = 0, 1, 2 against the ideal's 1, 2,
    2; with p = 0.5: (0 + 0.5 * 1/2 + 0.25 * 2/3) / (1 + 0.5 + 0.25 * 2/3); unnormalized over
    1 + 0.5 + 0.25. A query with nothing judged > 0 is 0."""
    qrels = _frame(
        [("q", "a", 2), ("q", "b", 1), ("q", "c", 0), ("z", "a", 0)],
        ["query_id", "doc_id", "grade"],
    )
    run = _frame(
        [("q", "b", 3.0), ("q", "x", 2.0), ("q", "a", 1.0), ("z", "a", 1.0)],
        ["query_id", "doc_id", "score"],
    )
    ours = _per_query(qrels, run, ["Compat(p=0.5)", "Compat(p=0.5,normalize=False)"])
    overlap = 0.5 * 1 / 2 + 0.25 * 2 / 3
    assert ours == pytest.approx(
        {
            ("Compat(p=0.5)", "q"): overlap / (1 + 0.5 + 0.25 * 2 / 3),
            ("Compat(p=0.5,normalize=False)", "q"): overlap / 1.75,
            ("Compat(p=0.5)", "z"): 0.0,
            ("Compat(p=0.5,normalize=False)", "z"): 0.0,
        },
        abs=1e-12,
    )


@given(
    data=collections(),
    p=st.sampled_from([0.0, 0.5, 0.8, 0.95, 1.0]),
    normalize=st.booleans(),
    ranking=st.sampled_from(RANKINGS),
)
@SETTINGS
def test_compat_is_ir_measures(data, p, normalize, ranking):
    """The provider ranks ties by doc id ascending and orders the ideal's documents of one
    grade by score, an unretrieved one scoring 0: it is given distinct positive scores in
    trec_eval's order, so that both rank alike."""
    qrels, run = data
    name = f"Compat(p={p},normalize={normalize})"
    with ranking_path(ranking):
        ours = _per_query(qrels, run, [name])
    ranked = run.sort_values(["query_id", "score", "doc_id"], ascending=False)
    scored = [
        ir_measures.ScoredDoc(q, d, float(len(ranked) - i))
        for i, (q, d) in enumerate(ranked[["query_id", "doc_id"]].itertuples(index=False))
    ]
    measure = ir_measures.parse_measure(name)
    theirs = {
        m.query_id: m.value
        for m in ir_measures.compat.iter_calc([measure], _judgments(qrels), scored)
    }
    canonical = parse_measure(name).name
    for query in qrels.query_id.unique():
        expected = theirs.get(query, 0.0)  # a query the run lacks: ir_measures' 0
        assert ours[(canonical, query)] == pytest.approx(expected, abs=1e-9), query


def test_compat_ranks_ties_as_trec_eval_ranks_them():
    """a and b tie, the ideal is b (2) then a (1): doc id descending ranks b, a, the ideal
    order (1.0); the provider ranks ties by doc id ascending, a, b: O(1) = 0, O(2) = 2, so
    with p = 0.5 (0.5 * 2/2) / (1 + 0.5 * 2/2) = 1/3."""
    qrels = _frame([("q", "a", 1), ("q", "b", 2)], ["query_id", "doc_id", "grade"])
    run = _frame([("q", "a", 1.0), ("q", "b", 1.0)], ["query_id", "doc_id", "score"])
    assert _per_query(qrels, run, ["Compat(p=0.5)"]) == {("Compat(p=0.5)", "q"): 1.0}
    theirs = ir_measures.compat.iter_calc(
        [ir_measures.parse_measure("Compat(p=0.5)")], _judgments(qrels), _trec_ordered(run)
    )
    assert [m.value for m in theirs] == [pytest.approx(1 / 3)]
