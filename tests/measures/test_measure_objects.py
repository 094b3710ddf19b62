"""ir_measures measure objects and trec_eval's nicknames, wherever a measure name is accepted.

``from ir_measures import RR, nDCG, AP`` gives objects whose ``str`` is their name in
ir_measures' grammar (``nDCG@10``, ``RR(rel=2)``); rankhouse reads them through it, alone or
in a list mixed with names, without importing ir_measures. trec_eval's nicknames that
``rankhouse trec-eval -m`` knows (``official``, ``all_trec``, ``set``) stand for their
measures in the Python API's lists too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from ir_measures import AP, RR, P, nDCG

import rankhouse
from rankhouse import MeasureError, Warehouse
from rankhouse.measures import NICKNAMES, measure_texts, parse_measures

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = EXAMPLES / "qrels.txt"
RUNS = [EXAMPLES / "run.bm25.txt", EXAMPLES / "run.dense.txt"]

#: (what a caller gives, the labels rankhouse evaluates)
GIVEN = [
    (nDCG @ 10, ["nDCG@10"]),
    (RR(rel=2), ["RR(rel=2)"]),
    ([RR(rel=2), nDCG @ 10], ["RR(rel=2)", "nDCG@10"]),
    ([AP, "P@5", nDCG @ 10], ["AP", "P@5", "nDCG@10"]),
    (("map", P(rel=2) @ 5), ["AP", "P(rel=2)@5"]),
]


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A warehouse with the example qrels (``q``) and runs (``bm25``, ``dense``) stored."""
    path = tmp_path_factory.mktemp("objects") / "w.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, name="q")
        for run in RUNS:
            wh.ingest_run(run)
    return path


def _labels(frame: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(frame["measure"]))


@pytest.mark.parametrize(("given", "labels"), GIVEN, ids=str)
def test_rankhouse_evaluate(given, labels):
    assert list(rankhouse.evaluate(QRELS, RUNS, given).summary.columns) == ["run", *labels]


@pytest.mark.parametrize(("given", "labels"), GIVEN, ids=str)
def test_rankhouse_experiment(given, labels):
    assert _labels(rankhouse.experiment(QRELS, RUNS, given, baseline=0)) == labels


@pytest.mark.parametrize(("given", "labels"), GIVEN, ids=str)
def test_warehouse_verbs(stored, tmp_path, given, labels):
    with Warehouse(stored) as wh:
        assert list(wh.evaluate("q", ["bm25", "dense"], given).summary.columns)[1:] == labels
        assert _labels(wh.compare("q", ["bm25", "dense"], given, baseline="bm25")) == labels
        history = wh.history(qrels="q", measures=given)
        assert [c for c in history.columns if c in labels] == labels
        report = wh.report(tmp_path / "r.html", qrels="q", measures=given)
        assert all(label in report.read_text(encoding="utf-8") for label in labels)


def test_values_are_ir_measures_own():
    measures = [RR(rel=2), nDCG @ 10, AP, P(rel=2) @ 5]
    qrels = [ir_measures.Qrel(q, d, int(g)) for q, _, d, g in _lines(QRELS)]
    run = [ir_measures.ScoredDoc(q, d, float(s)) for q, _, d, _, s, _ in _lines(RUNS[0])]
    theirs = ir_measures.calc_aggregate(measures, qrels, run)
    ours = rankhouse.evaluate(qrels, run, measures).summary.iloc[0]
    for measure in measures:
        assert ours[str(measure)] == pytest.approx(theirs[measure], abs=1e-12)


def _lines(path: Path) -> list[list[str]]:
    text = path.read_text(encoding="utf-8").splitlines()
    return [line.split() for line in text if line.strip() and not line.startswith("#")]


def test_any_iterable_of_measures_is_read_once():
    given = (m for m in [AP, "RR"])  # a generator: read once, whatever the verb does after
    assert _labels(rankhouse.experiment(QRELS, RUNS, given, baseline=0)) == ["AP", "RR"]


@pytest.mark.parametrize("nickname", sorted(NICKNAMES))
def test_trec_eval_nicknames_stand_for_their_measures(nickname):
    expanded = [m.name for m in parse_measures(list(NICKNAMES[nickname]))]
    result = rankhouse.evaluate(QRELS, RUNS[0], nickname)
    assert result.measures == expanded
    assert "runid" not in NICKNAMES[nickname] and "relstring" not in NICKNAMES[nickname]


def test_official_is_trec_eval_s_default_set():
    names = [m.name for m in parse_measures(["official"])]
    assert names[:5] == ["NumQ", "NumRet", "NumRel", "NumRelRet", "AP"]
    assert "P@1000" in names and "IPrec@1.0" in names and len(names) == 29
    with_others = rankhouse.evaluate(QRELS, RUNS[0], ["nDCG@10", "official"])
    assert with_others.measures[0] == "nDCG@10" and len(with_others.measures) == 30


@pytest.mark.parametrize("given", [3, [AP, 3.5], {"AP": 1}, None, b"AP"], ids=repr)
def test_what_is_not_a_measure_is_said_so(given):
    with pytest.raises(MeasureError, match="is not a measure: give a name such as 'nDCG@10'"):
        rankhouse.evaluate(QRELS, RUNS[0], given)


def test_measure_texts_reads_objects_by_their_string():
    assert measure_texts([AP @ 10, "P_5", RR(rel=2)]) == ["AP@10", "P_5", "RR(rel=2)"]
    assert measure_texts(nDCG) == ["nDCG"]
    [rankhouse_measure] = parse_measures(["ndcg_cut_10"])
    assert measure_texts(rankhouse_measure) == ["nDCG@10"]


def test_ir_measures_is_never_imported():
    # an object shaped as ir_measures' (NAME, params, str) is read without the package
    script = (
        "import sys, rankhouse\n"
        "class Measure:\n"
        "    NAME = 'nDCG'\n"
        "    params = {'cutoff': 10}\n"
        "    def __str__(self): return 'nDCG@10'\n"
        "    def __getitem__(self, key): return self.params[key]\n"
        "qrels = {'q1': {'a': 1, 'b': 0}}\n"
        "run = {'q1': {'a': 2.0, 'b': 1.0}}\n"
        "result = rankhouse.evaluate(qrels, run, Measure())\n"
        "assert result.measures == ['nDCG@10'], result.measures\n"
        "assert 'ir_measures' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
