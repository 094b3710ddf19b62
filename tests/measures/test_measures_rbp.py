"""RBP means ir_measures' RBP, RBP_gains trec_eval's rbp.

``RBP`` (graded: the grade is the gain, tied documents share their weights) is checked against
ir_measures' trectools provider, ``RBP(rel=k)`` (binary, the weights of 1000 ranks) against
its cwl_eval provider, on generated qrels and runs with ties, negative grades, unjudged
documents and missing queries, and by hand where ir_measures has no equivalent (-J, -M).
trec_eval's ``rbp`` names select ``RBP_gains``; the trec_eval tests check its numbers.
"""

from __future__ import annotations

import itertools
import logging

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from measure_helpers import RANKINGS, collections, evaluate, ranking_path, store_qrels, store_run
from schema_helpers import RawDatabase, insert_run_and_qrels, migrate_by_hand

from rankhouse import Warehouse
from rankhouse.labels import label
from rankhouse.measures import parse_measure
from rankhouse.warehouse import resolve_target

ir_measures = pytest.importorskip("ir_measures")

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
_NAMES = itertools.count()

# a 3 (judged 2), x 2 (unjudged), b 2 (judged 1), c 1 (judged 1): trec_eval's order sorts the
# tie x, b by doc_id descending, so a 1, x 2, b 3, c 4, and x and b share ranks 2 and 3.
TIED_QRELS = pd.DataFrame(
    [("q", "a", 2), ("q", "b", 1), ("q", "c", 1)], columns=["query_id", "doc_id", "grade"]
)
TIED_RUN = pd.DataFrame(
    [("q", "a", 3.0), ("q", "x", 2.0), ("q", "b", 2.0), ("q", "c", 1.0)],
    columns=["query_id", "doc_id", "score"],
)


def _ours(wh, qrels, run, names, ranking=RANKINGS[-1], **options) -> dict:
    number = next(_NAMES)
    qrels_id = store_qrels(wh, qrels, name=f"rbp-qrels{number}")
    run_id = store_run(wh, run, name=f"rbp-run{number}")
    with ranking_path(ranking):
        per_query, _ = evaluate(wh, run_id, qrels_id, names, **options)
    return {(r.measure, r.query_id): r.value for r in per_query.itertuples()}


@pytest.mark.parametrize(
    ("name", "options", "expected"),
    [
        # a: 2 * (1 - p) = 1; b: 1 * the mean of 0.5 * 0.5 and 0.5 * 0.25; c: 0.5 * 0.125
        ("RBP(p=0.5)", {}, 1.0 + (0.25 + 0.125) / 2 + 0.0625),
        # -J drops x: a 1, b 2, c 3, no tie left
        ("RBP(p=0.5)", {"judged_only": True}, 1.0 + 0.25 + 0.125),
        # -M 3 keeps a, x, b: b still shares ranks 2 and 3
        ("RBP(p=0.5)", {"max_rank": 3}, 1.0 + (0.25 + 0.125) / 2),
        # -M 2 keeps a, x; b (rank 3) is gone
        ("RBP(p=0.5)", {"max_rank": 2}, 1.0),
        # the cutoff cuts the tie: b at rank 3 is out of the top 2
        ("RBP(p=0.5)@2", {}, 1.0),
        ("RBP(p=0.5)@3", {}, 1.0 + (0.25 + 0.125) / 2),
        # p = 0: only rank 1 counts, a tie of n at rank 1 would share 1/n
        ("RBP(p=0.0)", {}, 2.0),
        # binary: a, b, c gain 1 at ranks 1, 3, 4; weights 0.5^(i-1) * 0.5 / (1 - 0.5^1000)
        ("RBP(p=0.5,rel=1)", {}, 0.5 + 0.125 + 0.0625),
        ("RBP(p=0.5,rel=2)", {}, 0.5),
        ("RBP(p=0.5,rel=1)@3", {}, 0.5 + 0.125),
        # p = 1: cwl_eval's weights over 1000 ranks are 1/1000 each
        ("RBP(p=1.0,rel=1)", {}, 3 / 1000),
        # -l is not RBP's: graded stays graded
        ("RBP(p=0.5)", {"relevance_level": 2}, 1.0 + (0.25 + 0.125) / 2 + 0.0625),
        # trec_eval's rbp divides by the highest grade: a 1 * 0.5, b 0.5 * 0.125, c 0.5 * 0.0625
        ("RBP_gains(p=0.5)", {}, 0.5 + 0.0625 + 0.03125),
    ],
)
def test_rbp_by_hand(shared_any_warehouse, name, options, expected):
    ours = _ours(shared_any_warehouse, TIED_QRELS, TIED_RUN, [name], **options)
    assert ours[(parse_measure(name).name, "q")] == pytest.approx(expected, abs=1e-15)


def test_a_negative_grade_gains_nothing_but_counts_for_rel_0_as_in_cwl_eval(
    shared_any_warehouse,
):
    qrels = pd.DataFrame([("q", "a", -1), ("q", "b", 1)], columns=["query_id", "doc_id", "grade"])
    run = pd.DataFrame([("q", "a", 2.0), ("q", "b", 1.0)], columns=["query_id", "doc_id", "score"])
    names = ["RBP(p=0.5)", "RBP(p=0.5,rel=0)", "RBP(p=0.5,rel=1)"]
    ours = _ours(shared_any_warehouse, qrels, run, names)
    assert [ours[(name, "q")] for name in names] == pytest.approx([0.25, 0.75, 0.25])


def test_rbp_is_graded_whatever_the_evaluation_level():
    """Its label never takes the evaluation's level, as AP's does."""
    assert label(parse_measure("RBP"), relevance_level=2) == "RBP"
    assert label(parse_measure("RBP(rel=1)"), relevance_level=2) == "RBP(rel=1)"
    assert label(parse_measure("AP"), relevance_level=2) == "AP(rel=2)"


@pytest.mark.parametrize(
    ("trec", "canonical"),
    [("rbp", "RBP_gains(p=0.9)"), ("rbp_p=0.8", "RBP_gains"), ("rbp_resid", "RBP_resid(p=0.9)")],
)
def test_trec_eval_names_give_trec_eval_rbp(trec, canonical):
    assert parse_measure(trec).name == canonical


def _peer_input(qrels: pd.DataFrame, run: pd.DataFrame):
    """ir_measures' qrels and run. The run in trec_eval's order (score descending, doc_id
    descending), which the providers keep for ties (cwl_eval's order, trectools' top k);
    each query's scores are moved apart by 100, since trectools averages a tie across two
    queries when one's last score equals the next one's first (rankhouse within a query)."""
    offsets = {q: 100.0 * i for i, q in enumerate(sorted(set(run.query_id)))}
    ordered = run.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False])
    peer_run = [
        ir_measures.ScoredDoc(q, d, s + offsets[q])
        for q, d, s in ordered[["query_id", "doc_id", "score"]].itertuples(index=False)
    ]
    peer_qrels = [
        ir_measures.Qrel(q, d, int(g))
        for q, d, g in qrels[["query_id", "doc_id", "grade"]].itertuples(index=False)
    ]
    return peer_qrels, peer_run


def _agree(wh, qrels, run, names, provider, ranking):
    """Our values equal the provider's on every query of both qrels and run (a query it
    gives no value is 0: nothing gained)."""
    peer_qrels, peer_run = _peer_input(qrels, run)
    ours = _ours(wh, qrels, run, names, ranking)
    both = set(qrels.query_id) & set(run.query_id)
    evaluator = getattr(ir_measures, provider)
    for name in names:
        theirs = {
            m.query_id: float(m.value)
            for m in evaluator.iter_calc([ir_measures.parse_measure(name)], peer_qrels, peer_run)
        }
        canonical = parse_measure(name).name
        for query in both:
            expected = theirs.get(query, 0.0)
            assert ours[(canonical, query)] == pytest.approx(expected, abs=1e-9), (name, query)


@given(
    data=collections(),
    p=st.sampled_from([0.5, 0.8, 0.95]),
    cutoff=st.sampled_from([None, 1, 3, 5]),
    ranking=st.sampled_from(RANKINGS),
)
@SETTINGS
@pytest.mark.slow
def test_graded_rbp_agrees_with_ir_measures_trectools(shared_warehouse, data, p, cutoff, ranking):
    pytest.importorskip("trectools")
    name = f"RBP(p={p})" + ("" if cutoff is None else f"@{cutoff}")
    _agree(shared_warehouse, *data, [name], "trectools", ranking)


@given(
    data=collections(),
    p=st.sampled_from([0.5, 0.8, 0.95, 0.999]),
    rel=st.sampled_from([0, 1, 2]),
    ranking=st.sampled_from(RANKINGS),
)
@SETTINGS
@pytest.mark.slow
def test_binary_rbp_agrees_with_ir_measures_cwl_eval(shared_warehouse, data, p, rel, ranking):
    pytest.importorskip("cwl")
    logging.getLogger("ir_measures").setLevel(logging.ERROR)  # its notes on the grade range
    _agree(shared_warehouse, *data, [f"RBP(p={p},rel={rel})"], "cwl_eval", ranking)


def test_the_1000_ranks_of_cwl_eval(shared_warehouse):
    """cwl_eval scores the top 1000 ranks with weights that sum to 1 over them: with p = 0.999
    a relevant document at rank 1 alone is 0.001 / (1 - 0.999^1000), one at 1500 nothing."""
    pytest.importorskip("cwl")
    qrels = pd.DataFrame(
        [("q", "d0000", 1), ("q", "d1500", 1)], columns=["query_id", "doc_id", "grade"]
    )
    run = pd.DataFrame(
        [("q", f"d{i:04d}", 5000.0 - i) for i in range(2000)],
        columns=["query_id", "doc_id", "score"],
    )
    ours = _ours(shared_warehouse, qrels, run, ["RBP(p=0.999,rel=1)"])
    assert ours[("RBP(p=0.999,rel=1)", "q")] == pytest.approx(0.001 / (1 - 0.999**1000))
    _agree(shared_warehouse, qrels, run, ["RBP(p=0.999,rel=1)"], "cwl_eval", RANKINGS[-1])


def test_migration_12_renames_trec_eval_rbp_stored_as_rbp(backend_target):
    """Before 0012, `RBP` was trec_eval's rbp: those evaluations (and the verdicts that carry
    their labels) become RBP_gains, so that RBP (ir_measures') is computed afresh."""
    db = RawDatabase(resolve_target(backend_target))
    with db.transaction() as con:
        migrate_by_hand(con, db.dialect, 11)
        insert_run_and_qrels(con)
        stored = [  # measure, label
            ("RBP", "RBP"),
            ("RBP(p=0.9)", "RBP(p=0.9) [missing_queries=skip]"),
            ("RBP(p=0.5,gains='1=2.0')", "RBP(p=0.5,gains='1=2.0')"),
            ("RBP_resid(p=0.9)", "RBP_resid(p=0.9)"),
            ("AP", "AP"),
        ]
        for measure, shown in stored:
            con.execute(
                "INSERT INTO evaluations (run_id, qrels_id, qrels_sha256, measure, parameters, "
                "relevance_level, missing_queries, options, aggregate, value, num_q, "
                "rankhouse_version, created_at, label) VALUES (1, 1, 'x', :m, '{}', 1, 'zero', "
                "'{}', 'mean', 0.5, 1, 'old', now(), :l)",
                {"m": measure, "l": shown},
            )
        con.execute_raw(
            "INSERT INTO regress_checks (run_id, baseline_run_id, baseline_spec, qrels_id, test, "
            "correction, alpha, max_drop, relative, options, passed, created_at) VALUES "
            "(1, 1, 'previous', 1, 't', 'none', 0.05, 0.01, false, '{}', true, now())"
        )
        for measure, evaluation in (("RBP(p=0.9) [missing_queries=skip]", 2), ("AP", 5)):
            con.execute(
                "INSERT INTO regress_verdicts (check_id, measure, num_q, improved, degraded, "
                "status, regressed, run_evaluation_id) VALUES (1, :m, 1, 0, 0, 'unchanged', "
                "false, :e)",
                {"m": measure, "e": evaluation},
            )
    db.close()
    Warehouse.migrate(backend_target)  # a server's warehouse: the owner's explicit step
    with Warehouse(backend_target) as wh, wh.connect() as conn:
        rows = conn.execute("SELECT measure, label FROM evaluations ORDER BY id").all()
        verdicts = conn.execute("SELECT measure FROM regress_verdicts ORDER BY run_evaluation_id")
        verdicts = verdicts.scalars().all()
    assert [tuple(row) for row in rows] == [
        ("RBP_gains", "RBP_gains"),
        ("RBP_gains(p=0.9)", "RBP_gains(p=0.9) [missing_queries=skip]"),
        ("RBP_gains(p=0.5,gains='1=2.0')", "RBP_gains(p=0.5,gains='1=2.0')"),
        ("RBP_resid(p=0.9)", "RBP_resid(p=0.9)"),
        ("AP", "AP"),
    ]
    assert verdicts == ["RBP_gains(p=0.9) [missing_queries=skip]", "AP"]
