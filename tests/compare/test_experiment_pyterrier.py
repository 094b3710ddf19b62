"""``rankhouse.experiment(..., shape="pyterrier")``: pt.Experiment's frame, a drop-in for code
written for it on result frames.

PyTerrier builds its frame in ``pyterrier/_evaluation/_rendering.py``
(``RenderFromPerQuery.averages``): a ``name`` column, the means under the measures' names as
given, then per measure ``<m> +``, ``<m> -``, ``<m> p-value`` and, with a correction,
``<m> reject`` and ``<m> p-value corrected`` after its p-value; ``round`` rounds the means with
Python's ``round``. :func:`_pyterrier_averages` below builds that frame the way that source
does, from the per-query values, scipy and statsmodels; rankhouse's frame must equal it.
"""

from __future__ import annotations

import builtins
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.stats.multitest
from ir_measures import RR, nDCG
from scipy import stats

import rankhouse
from rankhouse import InputError, RankhouseError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = EXAMPLES / "qrels.txt"
RUNS = [
    EXAMPLES / "run.bm25.txt",
    EXAMPLES / "run.dense.txt",
    EXAMPLES / "nights" / "bm25.night2.txt",
    EXAMPLES / "nights" / "bm25.night3.txt",
]
NAMES = ["bm25", "dense", "night2", "night3"]


def _pyterrier_averages(perquery, names, columns, baseline=None, correction=None, round=None):  # noqa: A002
    """PyTerrier's averages frame, as its source builds it, from per-query values
    (``name, qid, measure, value`` with the measure under its column name)."""

    def rounded(column, value):
        if isinstance(round, int):
            return builtins.round(value, round)
        if isinstance(round, dict) and column in round:
            return builtins.round(value, round[column])
        return value

    values = {
        (name, column): group.set_index("qid")["value"]
        for (name, column), group in perquery.groupby(["name", "measure"], sort=False)
    }
    rows = [[n, *(rounded(c, values[(n, c)].mean()) for c in columns)] for n in names]
    header = ["name", *columns]
    if baseline is not None:
        base = names[baseline]
        for i, name in enumerate(names):
            for column in columns:
                if i == baseline:
                    rows[i] += [None, None, None]
                    continue
                ours, theirs = values[(name, column)], values[(base, column)]
                ours = ours.reindex(theirs.index).to_numpy()
                theirs = theirs.to_numpy()
                p = stats.ttest_rel(ours, theirs)[1]
                rows[i] += [int((ours > theirs).sum()), int((ours < theirs).sum()), p]
        header += [f"{c}{s}" for c in columns for s in (" +", " -", " p-value")]
    frame = pd.DataFrame(rows, columns=header)
    if baseline is not None and correction is not None:
        for column in columns:
            pcol = f"{column} p-value"
            reject, corrected, _, _ = statsmodels.stats.multitest.multipletests(
                frame[pcol].drop(frame.index[baseline]), alpha=0.05, method=correction
            )
            at = frame.columns.get_loc(pcol)
            frame.insert(at + 1, f"{column} reject", np.insert(reject, baseline, False))
            frame.insert(
                at + 2, f"{column} p-value corrected", np.insert(corrected, baseline, np.nan)
            )
    return frame


def _experiment(measures, **options):
    return rankhouse.experiment(QRELS, RUNS, measures, names=NAMES, shape="pyterrier", **options)


def _perquery(measures, **options):
    return _experiment(measures, perquery=True, **options)


CASES = [
    pytest.param({}, id="means"),
    pytest.param({"baseline": 0}, id="baseline"),
    pytest.param({"baseline": 0, "correction": "holm"}, id="holm"),
    pytest.param({"baseline": 1, "correction": "bonferroni", "round": 3}, id="bonferroni-round"),
    pytest.param({"baseline": 0, "round": {"map": 2}}, id="round-dict"),
]


@pytest.mark.parametrize("options", CASES)
def test_the_frame_is_pyterriers(options):
    measures = ["map", "ndcg_cut_10", "recip_rank"]
    ours = _experiment(measures, **options)
    perquery = _perquery(measures)
    # pt.Experiment's order: pytrec_eval's, trec_eval's table order (map, recip_rank, ndcg_cut)
    columns = ["map", "recip_rank", "ndcg_cut_10"]
    expected = _pyterrier_averages(perquery, NAMES, columns, **options)
    assert list(ours.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(pd.DataFrame(ours), expected, check_exact=False, rtol=1e-12)


def test_the_columns_of_a_baseline_with_a_correction():
    frame = _experiment(["map", nDCG @ 10], baseline=0, correction="hs")
    assert list(frame.columns) == [
        "name", "map", "nDCG@10",
        "map +", "map -", "map p-value", "map reject", "map p-value corrected",
        "nDCG@10 +", "nDCG@10 -", "nDCG@10 p-value", "nDCG@10 reject",
        "nDCG@10 p-value corrected",
    ]  # fmt: skip
    assert frame["name"].tolist() == NAMES
    assert frame.loc[0, ["map +", "map -", "map p-value"]].isna().all()
    assert frame["map reject"].dtype == bool and not frame.loc[0, "map reject"]
    assert frame["map +"].dtype == float  # NaN on the baseline's row, as PyTerrier's


def test_the_values_are_the_comparisons():
    long = rankhouse.experiment(QRELS, RUNS, ["map"], names=NAMES, baseline=0, correction="holm")
    wide = _experiment(["map"], baseline=0, correction="holm")
    long = long.set_index("run")
    for row in wide.itertuples(index=False):
        assert row[1] == long.at[row.name, "mean"]  # map, not rounded
    others = wide.iloc[1:]
    assert others["map +"].tolist() == long["improved"].iloc[1:].astype(float).tolist()
    assert others["map p-value"].tolist() == long["p_value"].iloc[1:].tolist()
    assert others["map reject"].tolist() == long["significant"].iloc[1:].tolist()


@pytest.mark.parametrize(
    ("measures", "columns"),
    [
        (["map", "P_5", "ndcg_cut.10"], ["map", "P_5", "ndcg_cut.10"]),
        ([RR(rel=2), nDCG @ 10], ["RR(rel=2)", "nDCG@10"]),
        (["map", "AP"], ["map"]),  # one measure: the first name given
        (["P"], ["P@5", "P@10", "P@15", "P@20", "P@30", "P@100", "P@200", "P@500", "P@1000"]),
        (["ndcg_cut.10,20"], ["nDCG@10", "nDCG@20"]),
        ("official", "official"),
    ],
    ids=["names", "objects", "repeated", "P", "list", "official"],
)
def test_columns_are_the_measures_as_given(measures, columns):
    frame = _experiment(measures)
    if columns == "official":  # each measure under ir_measures' name, without trec_eval's gm_map
        canonical = rankhouse.evaluate(QRELS, RUNS[0], measures).measures
        columns = [{"NumRelRet": "NumRet(rel=1)"}.get(m, m) for m in canonical if m != "GMAP"]
    assert list(frame.columns) == ["name", *columns]


def test_a_setting_other_than_the_default_keeps_its_label():
    frame = _experiment(["map", "P_5"], relevance_level=2)
    assert list(frame.columns) == ["name", "AP(rel=2)", "P(rel=2)@5"]


def test_round_rounds_the_means_as_python_does():
    exact = _experiment(["map"], baseline=0)
    rounded = _experiment(["map"], baseline=0, round=2)
    assert rounded["map"].tolist() == [builtins.round(v, 2) for v in exact["map"]]
    pd.testing.assert_series_equal(rounded["map p-value"], exact["map p-value"])


def test_perquery_is_pyterriers_long_frame():
    frame = _perquery(["map", nDCG @ 10], round=3)
    assert list(frame.columns) == ["name", "qid", "measure", "value"]
    assert set(frame["measure"]) == {"map", "nDCG@10"}
    assert frame[["name", "qid"]].equals(
        frame[["name", "qid"]].sort_values(["name", "qid"], ignore_index=True)
    )
    assert (frame["value"] == frame["value"].round(3)).all()
    both = _experiment(["map"], perquery="both")
    averages, perquery = both
    assert both.averages is averages and both.perquery is perquery
    assert list(averages.columns) == ["name", "map"]


def test_a_notebook_shows_it_highlighted():
    frame = _experiment(["map"], baseline=0, highlight="bold")
    html = frame._repr_html_()
    best = frame["map"].idxmax()
    assert f'<td class="best-bold">{frame.at[best, "map"]:.4f}</td>' in html
    assert "<th>map p-value</th>" in html
    assert isinstance(frame, pd.DataFrame) and type(frame[["map"]]) is pd.DataFrame


def test_the_default_shape_is_unchanged():
    frame = rankhouse.experiment(QRELS, RUNS, ["map"])
    assert list(frame.columns[:3]) == ["run", "measure", "mean"]
    with pytest.raises(RankhouseError, match="shape must be 'rankhouse' or 'pyterrier'"):
        rankhouse.experiment(QRELS, RUNS, ["map"], shape="wide")


def test_eval_metrics_is_pyterriers_name_for_measures():
    frame = rankhouse.experiment(QRELS, RUNS, eval_metrics=["map"], shape="pyterrier")
    assert list(frame.columns) == ["name", "map"]
    with pytest.raises(RankhouseError, match="give one"):
        rankhouse.experiment(QRELS, RUNS, ["map"], eval_metrics=["map"])


def _pt_frames():
    columns = ["qid", "q0", "docno", "rank", "score", "name"]
    results = [pd.read_csv(r, sep=r"\s+", comment="#", names=columns) for r in RUNS[:2]]
    topics = pd.DataFrame({"qid": ["q1", "q2"], "query": ["a b", "c"]})
    qrels = pd.read_csv(QRELS, sep=r"\s+", comment="#", names=["qid", "iter", "docno", "label"])
    return results, topics, qrels


def test_pyterriers_argument_order_says_what_to_pass():
    results, topics, qrels = _pt_frames()
    message = r"pt.Experiment's arguments \(systems, topics, qrels, metrics\).*rankhouse\.experiment\(qrels, \[results, \.\.\.\], \['map', \.\.\.\], queries=topics\)"  # noqa: E501
    with pytest.raises(InputError, match=message):
        rankhouse.experiment(results, topics, qrels, ["map"])
    with pytest.raises(InputError, match=message):
        rankhouse.experiment(results, topics, qrels, eval_metrics=["map"])

    class Transformer:  # what PyTerrier's retrievers look like here: they transform topics
        def transform(self, topics):
            raise AssertionError("never run")

    with pytest.raises(InputError, match=message):
        rankhouse.experiment([Transformer()], topics, qrels, ["map"], baseline=0)
    # the same frames in rankhouse's order
    frame = rankhouse.experiment(qrels, results, ["map"], shape="pyterrier")
    assert frame["name"].tolist() == ["bm25", "dense"]
