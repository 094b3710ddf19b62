"""Set measures with a cutoff (``SetP@k``, ``SetR@k``, ``SetF@k``, ``SetAP@k``, ``SetRelP@k``)
and ranx's ``hits@k`` (``Hits@k``): by hand, and against their home tools on generated qrels
and runs (ties, unjudged documents, queries missing on either side, grades -1 to 3).

ir_measures parses ``SetP@5`` but no provider computes it (its validation refuses the cutoff,
its providers called directly ignore it); the set measure of a ranking's top k is what
trec_eval computes under -M k, so the reference is ir_measures' set measure (pytrec_eval
provider) on the run cut to its top k in trec_eval's order (score descending, then doc id
descending), the order every measure here shares. ranx orders tied scores with numpy's
unstable argsort, so ranx is given the same order as distinct scores.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from measure_helpers import RANKINGS, collections, ranking_path

import rankhouse
from rankhouse.measures import parse_measure, trec_name

ir_measures = pytest.importorskip("ir_measures")

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# ir_measures' own test of its ranx provider (tests/test_ranx.py): D3 has grade 2, D1 and D2
# grade 1; ranked D0 D2 D3 D1 D4 (scores 0.8 0.7 0.4 0.3 0.1). Query m is judged, not run.
QRELS = pd.DataFrame(
    [("0", "D0", 0), ("0", "D1", 1), ("0", "D2", 1), ("0", "D3", 2), ("0", "D4", 0), ("m", "x", 1)],
    columns=["query_id", "doc_id", "grade"],
)
RUN = pd.DataFrame(
    [("0", "D0", 0.8), ("0", "D2", 0.7), ("0", "D1", 0.3), ("0", "D3", 0.4), ("0", "D4", 0.1)],
    columns=["query_id", "doc_id", "score"],
)
BY_HAND = {
    "SetP@2": 1 / 2,  # D0 D2: one relevant of 2
    "SetP(rel=2)@5": 1 / 5,  # ir_measures' test: D3 of 5
    "SetR(rel=2)@5": 1.0,  # ir_measures' test: D3, the only grade-2 document
    "SetP@10": 3 / 5,  # 5 retrieved: n = 5, not 10 (P@10 is 3/10)
    "P@10": 3 / 10,
    "SetR@2": 1 / 3,  # D2 of D1 D2 D3
    "SetF@2": 2 * (1 / 2) * (1 / 3) / (1 / 2 + 1 / 3),
    "SetF(beta=4.0)@3": 5 * (2 / 3) * (2 / 3) / (4 * (2 / 3) + 2 / 3),  # D2 D3 of 3
    "SetAP@2": (1 * 1) / (2 * 3),
    "SetRelP@2": 1 / 2,  # min(n, R) = min(2, 3)
    "SetRelP@10": 3 / 3,  # min(5, 3)
    "NumNonRelJudgedRet@2": 1.0,  # D0
    "Hits@2": 1.0,  # D2
    "Hits": 3.0,  # D2 D3 D1
    "Hits(rel=2)@3": 1.0,  # D3
}


def _per_query(qrels, run, names) -> dict[tuple[str, str], float]:
    with warnings.catch_warnings():  # generated runs may answer few of the queries
        warnings.simplefilter("ignore")
        result = rankhouse.evaluate(qrels, run, names, allow_no_overlap=True)
    return {(r.measure, r.query): r.value for r in result.per_query.itertuples()}


def test_values_by_hand():
    ours = _per_query(QRELS, RUN, list(BY_HAND))
    assert {name: ours[(name, "0")] for name in BY_HAND} == pytest.approx(BY_HAND, abs=1e-12)
    # a query the run did not answer: 0 (ir_measures' default, trec_eval -c)
    assert {name: ours[(name, "m")] for name in BY_HAND} == dict.fromkeys(BY_HAND, 0.0)


def test_ties_at_the_cutoff_are_cut_in_trec_evals_order():
    """b (relevant) and a tie at rank 1: doc id descending puts b first."""
    qrels = pd.DataFrame([("q", "b", 1)], columns=["query_id", "doc_id", "grade"])
    run = pd.DataFrame([("q", "a", 1.0), ("q", "b", 1.0)], columns=["query_id", "doc_id", "score"])
    ours = _per_query(qrels, run, ["SetP@1", "Hits@1", "P@1"])
    assert ours == {("SetP@1", "q"): 1.0, ("Hits@1", "q"): 1.0, ("P@1", "q"): 1.0}


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("hits@10", "Hits@10"),  # ranx's spelling
        ("Hits(rel=2)@5", "Hits(rel=2)@5"),
        ("hits", "Hits"),
        ("SetP@5", "SetP@5"),
        ("SetP(relative=True)@5", "SetRelP@5"),  # ir_measures' SetRelP@5
        ("SetF(beta=0.5)@5", "SetF(beta=0.5)@5"),
        ("set_P", "SetP"),
    ],
)
def test_names(text, canonical):
    measure = parse_measure(text)
    assert measure.name == canonical
    if text.startswith("Set"):  # ir_measures' grammar: it reads and prints the name so
        assert str(ir_measures.parse_measure(text)) == text
    assert trec_name(measure) == ("set_P" if canonical == "SetP" else None)


def _trec_order_top(run: pd.DataFrame, k: int) -> pd.DataFrame:
    """Each query's top k in trec_eval's order: score descending, then doc id descending."""
    ranked = run.sort_values(["query_id", "score", "doc_id"], ascending=False)
    return ranked.groupby("query_id", sort=False).head(k)


SET_MEASURES = ["SetP", "SetR", "SetF", "SetF(beta=0.25)", "SetAP", "SetP(relative=True)"]


@given(
    data=collections(),
    cutoff=st.integers(1, 13),
    level=st.sampled_from([1, 2]),
    ranking=st.sampled_from(RANKINGS),
)
@SETTINGS
def test_set_measures_at_k_are_ir_measures_on_the_top_k(data, cutoff, level, ranking):
    qrels, run = data
    # trec_eval's behaviour on a query with only negative judgments is undefined (as in
    # test_measures_differential.py); leave them out
    qrels = qrels[qrels.query_id.isin(set(qrels.query_id[qrels.grade >= 0]))]
    if qrels.empty:
        return
    names = [_with_rel(name, level) for name in SET_MEASURES]
    at_k = [f"{name}@{cutoff}" for name in names]
    with ranking_path(ranking):
        ours = _per_query(qrels, run, at_k)
    top = _trec_order_top(run, cutoff)
    judgments = [ir_measures.Qrel(q, d, int(g)) for q, d, g in qrels.itertuples(index=False)]
    scored = [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in top.itertuples(index=False)]
    for name, name_at_k in zip(names, at_k, strict=True):
        canonical = parse_measure(name_at_k).name
        theirs = {
            m.query_id: m.value
            for m in ir_measures.pytrec_eval.iter_calc(
                [ir_measures.parse_measure(name)], judgments, scored
            )
        }
        for query in qrels.query_id.unique():
            expected = theirs.get(query, 0.0)  # a query the run lacks: ir_measures' default
            assert ours[(canonical, query)] == pytest.approx(expected, abs=1e-9), (name, query)


def _with_rel(name: str, level: int) -> str:
    """``name`` with ``rel=level`` added to its parameters."""
    if level == 1:
        return name
    return name[:-1] + f",rel={level})" if name.endswith(")") else f"{name}(rel={level})"


@given(data=collections(), cutoff=st.integers(0, 13), level=st.sampled_from([1, 2]))
@SETTINGS  # 17 s, most of it ranx's import and numba's compiling of its first calls
def test_hits_is_ranxs(data, cutoff, level):
    """ranx's hits@k per query (k = 0: ranx's bare hits, every retrieved document), and its
    mean over the qrels' queries, a query the run lacks counting 0 (make_comparable)."""
    ranx = pytest.importorskip("ranx")
    qrels, run = data
    ranked = _trec_order_top(run, len(run))
    # ranx's order: distinct scores in trec_eval's order (ranx would order ties arbitrarily)
    ranked = ranked.assign(score=[float(len(ranked) - i) for i in range(len(ranked))])
    ranx_qrels = ranx.Qrels.from_dict(_nested(qrels, "grade", int))
    ranx_run = ranx.Run.from_dict(_nested(ranked, "score", float))
    metric = ("hits" if cutoff == 0 else f"hits@{cutoff}") + f"-l{level}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mean = ranx.evaluate(ranx_qrels, ranx_run, metric, make_comparable=True)
    theirs = dict(ranx_run.scores[metric])
    name = "hits" + ("" if level == 1 else f"(rel={level})") + (f"@{cutoff}" if cutoff else "")
    canonical = parse_measure(name).name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = rankhouse.evaluate(qrels, run, [name], allow_no_overlap=True)
    ours = {r.query: r.value for r in result.per_query.itertuples()}
    assert ours == pytest.approx(theirs, abs=1e-9)
    assert result.summary[canonical].tolist() == [pytest.approx(mean, abs=1e-9)]


def _nested(frame: pd.DataFrame, column: str, kind: type) -> dict[str, dict[str, float]]:
    """ranx's dict of dicts, {query: {doc: value}}."""
    nested: dict[str, dict[str, float]] = {}
    for query, doc, value in frame[["query_id", "doc_id", column]].itertuples(index=False):
        nested.setdefault(str(query), {})[str(doc)] = kind(value)
    return nested
