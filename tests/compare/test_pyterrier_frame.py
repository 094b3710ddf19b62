"""``rankhouse.experiment(..., shape="pyterrier")`` against ``pt.Experiment`` itself: the same
result frames and qrels, the same frame, column for column (order, names, dtypes, index,
values to 1e-9).

PyTerrier runs on result frames without Java; where python-terrier is not installed the tests
skip. The differences kept on purpose (docs/compare.md): ``NumQ`` and ``NumRel`` of a run that
retrieved nothing for a query count that query, as trec_eval ``-c``; ``IPrec`` is trec_eval
10's; the per-query frame's index is 0..n-1.
"""

from __future__ import annotations

from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from ir_measures import AP, RR, P, R, nDCG

import rankhouse

pt = pytest.importorskip(
    "pyterrier", reason="python-terrier is not installed (pip install python-terrier)"
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = EXAMPLES / "qrels.txt"
RUNS = {
    "bm25": EXAMPLES / "run.bm25.txt",
    "dense": EXAMPLES / "run.dense.txt",  # retrieves nothing for q1
    "night2": EXAMPLES / "nights" / "bm25.night2.txt",
    "night3": EXAMPLES / "nights" / "bm25.night3.txt",
}
WHOLE = ["bm25", "night2", "night3"]  # runs that retrieve for every judged query
TEXT = {"qid": str, "docno": str}
# pytrec_eval interpolates precision as trec_eval 9 does, rankhouse as trec_eval 10
# (docs/measures.md): official's IPrec columns are compared by name and place only
IPREC = [f"IPrec@{r / 10:.1f}" for r in range(11)]


def _frames(names):
    columns = ["qid", "q0", "docno", "rank", "score", "name"]
    results = [
        pd.read_csv(RUNS[n], sep=r"\s+", comment="#", names=columns, dtype=TEXT).drop(
            columns=["q0", "name"]
        )
        for n in names
    ]
    qrels = pd.read_csv(
        QRELS, sep=r"\s+", comment="#", names=["qid", "iter", "docno", "label"], dtype=TEXT
    ).drop(columns="iter")
    return results, qrels


def _both(measures, names=tuple(RUNS), **options):
    """pt.Experiment's frame and rankhouse's on the same result frames and qrels."""
    names = list(names)
    results, qrels = _frames(names)
    topics = pd.DataFrame({"qid": sorted(qrels["qid"].unique()), "query": "unused"})
    theirs = pt.Experiment(results, topics, qrels, measures, names=names, **options)
    ours = rankhouse.experiment(qrels, results, measures, names=names, shape="pyterrier", **options)
    return ours, theirs


def _equal(ours, theirs):
    pd.testing.assert_frame_equal(pd.DataFrame(ours), theirs, check_exact=False, rtol=0, atol=1e-9)


MEASURES = [
    pytest.param(["map", "ndcg_cut_10", "recip_rank"], id="trec-names"),
    pytest.param(["recip_rank", "P_5", "map", "ndcg_cut_10"], id="trec-names-reordered"),
    pytest.param([nDCG @ 10, AP, RR, P @ 5], id="objects"),
    pytest.param([P @ 20, "map", nDCG @ 5, "P.5,10", R @ 100], id="mixed"),
    pytest.param(["P_100", "P_5", "P_20"], id="cutoffs-descending"),
    pytest.param(["ndcg_cut_20", "map_cut_10", "ndcg", "map"], id="cut-families"),
    pytest.param(
        ["success_10", "set_F", "infAP", "Rprec", "bpref", "iprec_at_recall_0.50", "set_P"],
        id="set-and-more",
    ),
    pytest.param(["num_rel_ret", "num_ret", "map"], id="counts-summed"),
    pytest.param([ir_measures.NumRet(rel=1), "map"], id="count-as-object-averaged"),
]


@pytest.mark.parametrize("measures", MEASURES)
def test_the_means_are_pyterriers(measures):
    _equal(*_both(measures))


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"baseline": 0}, id="baseline"),
        pytest.param({"baseline": 0, "correction": "holm"}, id="holm"),
        pytest.param({"baseline": 1, "correction": "bonferroni"}, id="bonferroni-baseline-1"),
        pytest.param({"baseline": 2, "correction": "hs", "correction_alpha": 0.1}, id="hs"),
        pytest.param({"baseline": 0, "test": "wilcoxon"}, id="wilcoxon"),
        pytest.param({"baseline": 0, "round": 3}, id="round"),
        pytest.param({"round": {"map": 2, "P_5": 1}}, id="round-dict"),
    ],
)
def test_baselines_corrections_and_rounding_are_pyterriers(options):
    _equal(*_both(["P_5", "map", "recip_rank"], **options))


@pytest.mark.parametrize("names", [WHOLE, ["night3", "bm25", "night2"]], ids=["in", "out"])
def test_the_official_measures_are_pyterriers(names):
    # NumRet(rel=1) averaged, num_q, num_ret, num_rel summed, no GMAP
    ours, theirs = _both(["official"], names=names)
    assert "GMAP" not in ours.columns and "NumRet(rel=1)" in ours.columns
    assert list(ours.columns) == list(theirs.columns)
    _equal(ours.drop(columns=IPREC), theirs.drop(columns=IPREC))


def test_counts_of_a_run_missing_a_query_are_trec_evals():
    """PyTerrier counts only the queries a run retrieved for in NumQ and NumRel; rankhouse
    counts every judged query (trec_eval -c). Every other column is PyTerrier's."""
    ours, theirs = _both(["official"], names=["bm25", "dense"])
    counts = ["NumQ", "NumRel", *IPREC]
    _equal(ours.drop(columns=counts), theirs.drop(columns=counts))
    assert ours["NumQ"].tolist() == [8.0, 8.0]  # 8 judged queries
    assert theirs["NumQ"].tolist() == [8.0, 7.0]  # dense retrieved for 7
    assert ours.loc[0, "NumRel"] == theirs.loc[0, "NumRel"] == 74.0  # every relevant judgment


@pytest.mark.parametrize("measures", [["map", "P_5"], [nDCG @ 10, "recip_rank", AP]])
@pytest.mark.parametrize("names", [WHOLE, ["night3", "bm25"]], ids=["sorted", "unsorted"])
def test_perquery_is_pyterriers(measures, names):
    ours, theirs = _both(measures, names=names, perquery=True)
    # the same rows in the same order; PyTerrier's index keeps the places before its sort
    _equal(ours, theirs.reset_index(drop=True))


def test_both_is_pyterriers_pair():
    ours, theirs = _both(["map", "ndcg_cut_10"], names=WHOLE, perquery="both")
    assert ours._fields == theirs._fields == ("averages", "perquery")
    _equal(ours.averages, theirs.averages)
    _equal(ours.perquery, theirs.perquery.reset_index(drop=True))
