"""DCG, CG and ERR: gdeval (through ir_measures) on generated collections, names, and values
that depend on nothing outside their query. Their values on fixed collections, by hand or by
ir_measures, are the golden table's (test_measures_beyond_trec_eval.py)."""

from __future__ import annotations

import math
import shutil

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from measure_helpers import evaluate, store_qrels, store_run

from rankhouse.measures import REGISTRY, make_measure, parse_measure
from rankhouse.measures.catalog import DIVERSITY


def _values(wh, qrels, run, names, prefix) -> dict[tuple[str, str], float]:
    qrels_id = store_qrels(wh, qrels, name=f"{prefix}-qrels")
    run_id = store_run(wh, run, name=f"{prefix}-run")
    per_query, _ = evaluate(wh, run_id, qrels_id, names)
    return {(str(r.measure), str(r.query_id)): r.value for r in per_query.itertuples()}


def test_nothing_relevant_retrieved_gains_zero(shared_warehouse):
    qrels = pd.DataFrame(
        {"query_id": ["q", "q", "p"], "doc_id": ["a", "b", "a"], "grade": [2, -1, 1]}
    )
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["b", "z"], "score": [2.0, 1.0]})
    ours = _values(shared_warehouse, qrels, run, ["DCG@10", "CG", "ERR"], "zero")
    # q retrieved a negative grade and an unjudged document; p retrieved nothing
    assert {k: v for k, v in ours.items()} == {
        (m, q): 0.0 for m in ("DCG@10", "CG", "ERR") for q in ("p", "q")
    }


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("NDCG@10", "nDCG@10"),
        ("NDCG", "nDCG"),
        ("MAP", "AP"),
        ("MRR@10", "RR@10"),
        ("Precision@5", "P@5"),
        ("Recall@100", "R@100"),
        ("RPrec", "Rprec"),
        ("BPref", "Bpref"),
        ("DCG(dcg='log2')@10", "DCG@10"),
        ("CG(dcg='exp-log2')", "CG(dcg='exp-log2')"),
        ("ERR(max_grade=4)@20", "ERR@20"),
    ],
)
def test_upper_case_aliases_resolve(text, canonical):
    assert parse_measure(text).name == canonical


def test_err_default_maximum_grade_is_gdevals():
    assert parse_measure("ERR@10").params["max_grade"] == 4


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval (through ir_measures) needs perl")
@given(
    judgments=st.dictionaries(
        st.tuples(st.sampled_from(["1", "2", "3", "10"]), st.sampled_from("abcdefgh")),
        st.integers(-1, 4),
        min_size=1,
        max_size=24,
    ),
    rows=st.dictionaries(
        st.tuples(st.sampled_from(["1", "2", "3", "10"]), st.sampled_from("abcdefghij")),
        st.integers(0, 6).map(lambda s: s / 2),  # ties: gdeval and trec_eval both break them
        min_size=1,
        max_size=30,
    ),
    cutoff=st.sampled_from([1, 3, 5, 20]),
)
@settings(max_examples=40, deadline=None)
def test_err_agrees_with_gdeval(judgments, rows, cutoff):
    """ir_measures computes ERR@k with gdeval.pl (maximum grade 4, 5 printed decimals)."""
    import ir_measures
    from ir_measures import Qrel, ScoredDoc

    from rankhouse import Warehouse

    qrels = [Qrel(q, d, g) for (q, d), g in judgments.items()]
    run = [ScoredDoc(q, d, s) for (q, d), s in rows.items()]
    theirs = {
        m.query_id: m.value
        for m in ir_measures.gdeval.iter_calc([ir_measures.ERR @ cutoff], qrels, run)
    }
    with Warehouse(":memory:") as wh:
        ours = _values(
            wh,
            pd.DataFrame(qrels)[["query_id", "doc_id", "relevance"]],
            pd.DataFrame(run),
            [f"ERR@{cutoff}"],
            "gdeval",
        )
    for query, value in theirs.items():
        assert ours[(f"ERR@{cutoff}", query)] == pytest.approx(value, abs=5.1e-6), query


def _first_example(definition):
    samples = {int: 3, float: 0.25, str: None}
    return make_measure(
        definition, **{p.name: samples[p.type] for p in definition.params if p.required}
    )


QRELS = pd.DataFrame(
    {
        "query_id": ["q1"] * 5 + ["q2"] * 4,
        "doc_id": ["a", "b", "c", "d", "e", "a", "b", "c", "x"],
        "grade": [3, 1, 0, 2, -1, 1, 0, 2, 1],
    }
)
RUN = pd.DataFrame(
    {
        "query_id": ["q1"] * 6 + ["q2"] * 4,
        "doc_id": ["a", "z", "b", "c", "e", "d", "c", "y", "a", "b"],
        "score": [6.0, 5.0, 4.0, 4.0, 3.0, 1.0, 9.0, 8.0, 7.0, 7.0],
    }
)
# Another topic, graded higher than any other, that neither run query shares.
UNRELATED_QRELS = pd.DataFrame(
    {"query_id": ["zz"] * 3, "doc_id": ["a", "b", "c"], "grade": [7, 5, -2]}
)
UNRELATED_RUN = pd.DataFrame({"query_id": ["zz"] * 2, "doc_id": ["b", "q"], "score": [2.0, 1.0]})


# the diversity measures read qrels with intents (test_measures_diversity.py has theirs)
@pytest.mark.parametrize(
    "definition", [d for d in REGISTRY if d.family != DIVERSITY], ids=lambda d: d.name
)
def test_an_unrelated_topic_changes_no_value(shared_warehouse, definition):
    """Every measure's value for a query depends on that query's judgments and ranking only
    (what compare's query subsets rely on; ERR's old default broke it)."""
    name = _first_example(definition).name
    alone = _values(shared_warehouse, QRELS, RUN, [name], f"alone-{definition.name}")
    together = _values(
        shared_warehouse,
        pd.concat([QRELS, UNRELATED_QRELS]),
        pd.concat([RUN, UNRELATED_RUN]),
        [name],
        f"together-{definition.name}",
    )
    assert set(together) == set(alone) | {(name, "zz")}
    for key, value in alone.items():
        assert together[key] == value or (math.isnan(value) and math.isnan(together[key])), key
