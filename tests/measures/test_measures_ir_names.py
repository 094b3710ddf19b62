"""ir_measures' own names of the measures rankhouse computes (issue 35 item 5): its string
forms and measure objects give rankhouse's values, ir_measures as the reference; parameters out
of range are refused before anything is stored; values an older release stored for such names
are shown without numpy's overflow warnings; Judged's tie order against ir_measures'."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import pandas as pd
import pytest

import rankhouse
from rankhouse import Warehouse
from rankhouse.errors import MeasureError
from rankhouse.measures import parse_measure, parse_measures
from rankhouse.measures.model import stored_names

ir_measures = pytest.importorskip("ir_measures")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _collection(seed: int = 35):
    """Five queries judged 0..3, answered with tied scores (multiples of 0.5: exact in
    trec_eval 9's 32-bit floats), unjudged documents among them; every query on both sides."""
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(5):
        docs = [f"d{i}" for i in range(12)]
        for doc in rng.sample(docs, 8):
            qrels.append(ir_measures.Qrel(f"q{q}", doc, rng.randint(0, 3)))
        for doc in rng.sample(docs, 10):
            run.append(ir_measures.ScoredDoc(f"q{q}", doc, rng.randint(0, 6) / 2))
    return qrels, run


def _ours(qrels, run, measure) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = rankhouse.evaluate(qrels, run, [measure]).per_query
    return dict(zip(frame["query"], frame["value"], strict=True))


def _theirs(qrels, run, measure) -> dict[str, float]:
    if isinstance(measure, str):
        measure = ir_measures.parse_measure(measure)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {m.query_id: float(m.value) for m in ir_measures.iter_calc([measure], qrels, run)}


#: (ir_measures' name, rankhouse's own spelling of the same measure)
IR_FORMS = [
    ("SetP(relative=True)", "SetRelP"),
    ("SetP(rel=2,relative=True)", "SetRelP(rel=2)"),
    ("SetP(relative=False)", "SetP"),
    ("nDCG(gains={0:1,1:4})", "nDCG_gains(gains='0=1.0;1=4.0')"),
    ("nDCG(gains={1:0,2:1,3:10})", "nDCG_gains(gains='1=0.0;2=1.0;3=10.0')"),
    ("P(judged_only=False)@5", "P@5"),
    ("nDCG(judged_only=False)@10", "nDCG@10"),
    ("NumRet(rel=1)", "NumRelRet(rel=1)"),
]


@pytest.mark.parametrize(("ir_name", "native"), IR_FORMS)
def test_ir_measures_forms_are_the_native_measures(ir_name, native):
    assert parse_measure(ir_name) == parse_measure(native)
    qrels, run = _collection()
    ours = _ours(qrels, run, ir_name)
    assert ours == _ours(qrels, run, native)
    theirs = _theirs(qrels, run, ir_name)
    assert sorted(ours) == sorted(theirs)
    for query, value in theirs.items():
        assert ours[query] == pytest.approx(value, abs=1e-9), query


def test_ir_measures_objects_are_read():
    qrels, run = _collection(7)
    for given in (ir_measures.SetRelP, ir_measures.nDCG(gains={0: 1, 1: 4})):
        theirs = _theirs(qrels, run, given)
        ours = _ours(qrels, run, given)
        assert ours == pytest.approx(theirs, abs=1e-9)
    assert str(ir_measures.SetRelP) == "SetP(relative=True)"
    assert rankhouse.evaluate(qrels, run, ir_measures.SetRelP).measures == ["SetRelP"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("RBP(p=1.5)", "RBP: parameter p must be in [0, 1], not 1.5"),
        ("RBP(p=-0.2)@10", "RBP: parameter p must be in [0, 1], not -0.2"),
        ("RBP_gains(p=2)", "RBP_gains: parameter p must be in [0, 1], not 2.0"),
        ("RBP(p=1e999)", "RBP: parameter p must be a finite number, not inf"),
        ("IPrec@2.0", "IPrec: parameter recall must be in [0, 1], not 2.0"),
        ("iprec_at_recall_1.50", "IPrec: parameter recall must be in [0, 1], not 1.5"),
        ("P@2.0", "P: parameter cutoff must be an integer, not 2.0"),
        ("P@0", "P: parameter cutoff must be >= 1, not 0"),
        (
            "nDCG(gains={0:'a',1:4})",
            "gains must map integer grades to numbers, e.g. gains={0:0,1:1,2:3} (rankhouse's "
            "spelling: nDCG_gains(gains='1=1;2=3')), not {0:'a',1:4}",
        ),
        ("nDCG(gains={0.5:1})", "gains must map integer grades to numbers"),
        ("nDCG(gains=[1,4])", "gains must map integer grades to numbers"),
        (
            "nDCG(gains={0:1,1:4})@10",
            "rankhouse computes nDCG with a gain table over the whole ranking and linear gains "
            "only, as trec_eval's ndcg does: nDCG_gains(gains='0=1.0;1=4.0'), without @cutoff",
        ),
        ("nDCG_gains(gains='1=x')", "gains: '1=x' is not level=gain; write e.g. gains='1=3;2=9'"),
        ("nDCG_gains(gains='1=1e999')", "gains: level 1 gains inf; a gain must be a finite"),
        ("SetP(relative=1)", "SetP's parameter relative must be True or False, not 1"),
        (
            "P(judged_only=True)@5",
            "rankhouse applies judged_only (trec_eval -J) to a whole evaluation, not to one "
            "measure: ask for P@5 with options={'judged_only': True}; its values are labelled "
            "P@5 [judged_only=true]",
        ),
        ("P(rel=2,rel=3)@5", "write each parameter once as name=value, not 'rel=3'"),
        ("Judged(judged_only=True)@5", "Judged takes parameters cutoff, not judged_only=True"),
    ],
)
def test_out_of_range_parameters_are_refused_and_nothing_stored(tmp_path, text, words):
    with pytest.raises(MeasureError) as raised:
        parse_measure(text)
    assert words in str(raised.value)
    with Warehouse(tmp_path / "w.duckdb") as wh:
        with pytest.raises(MeasureError):
            wh.evaluate(EXAMPLES / "qrels.txt", EXAMPLES / "run.bm25.txt", ["AP", text])
        with wh.connect() as conn:
            counts = [
                conn.execute(f"SELECT count(*) FROM {table}").scalar()
                for table in ("evaluations", "runs", "qrels_sets")
            ]
    assert counts == [0, 0, 0]


def test_a_parameter_list_splits_at_top_level_commas_only():
    measure = parse_measure("nDCG(gains={0:1,1:4,2:9})")
    assert measure.params == {"gains": "0=1.0;1=4.0;2=9.0"}
    names = [m.name for m in parse_measures(["nDCG(gains={0:1,1:4}),AP"])]
    assert names == ["nDCG_gains(gains='0=1.0;1=4.0')", "AP"]


def test_history_of_values_an_older_release_stored(tmp_path, db_path, run_cli):
    """RBP(p=1.5) over 1000 ranks: p^999 * 0.5 * grade gives means near -1e175, whose squared
    deviations pass the largest double. ``stored_names`` reads names as stored labels, as an
    older release that took any p stored them."""
    qrels = pd.DataFrame(
        [(q, f"d{i}", (i // 7) % 4) for q in ("q1", "q2") for i in range(0, 1000, 7)],
        columns=["query_id", "doc_id", "grade"],
    )
    scores = {"q1": 1.0, "q2": 2.0}  # q2's values are twice q1's: the deviations are huge
    run = pd.DataFrame(
        [(q, f"d{i}", (1000.0 - i) * scores[q]) for q in ("q1", "q2") for i in range(1000)],
        columns=["query_id", "doc_id", "score"],
    )
    qrels.loc[qrels["query_id"] == "q2", "grade"] *= 2
    with Warehouse(db_path) as wh, stored_names(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wh.evaluate(qrels, run, ["RBP(p=1.5)", "nDCG@10"], name="old")
    done = run_cli("history", "-m", "RBP(p=1.5)", env={"PYTHONWARNINGS": "error"})
    assert done.exit_code == 0, done.stderr
    assert done.stderr == ""
    row = next(line for line in done.stdout.splitlines() if " old " in line)
    mean, half = row.split("│")[5].split()
    assert float(mean) < -1e170 and half.startswith("±") and "e+" in half
    assert float(half[1:]) > 1e170  # a finite half-width, not inf or 170 digits
    report = run_cli("report", "-o", tmp_path / "r.html", env={"PYTHONWARNINGS": "error"})
    assert report.exit_code == 0, report.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "RBP(p=1.5) is stored but left out: RBP: parameter p must be in [0, 1]" in html


def test_judged_tie_at_the_cutoff_is_ordered_as_trec_eval_not_ir_measures():
    """Unjudged a and judged b tie at rank 1: ir_measures' Judged sorts by doc_id ascending
    (a first: 0/1), rankhouse by trec_eval's doc_id descending (b first: 1/1); past the tie
    both agree (docs/measures.md says so)."""
    qrels = [ir_measures.Qrel("q", "b", 0), ir_measures.Qrel("q", "c", 1)]
    run = [ir_measures.ScoredDoc("q", d, s) for d, s in (("a", 2.0), ("b", 2.0), ("c", 1.0))]
    assert _theirs(qrels, run, "Judged@1") == {"q": 0.0}
    assert _ours(qrels, run, "Judged@1") == {"q": 1.0}
    assert _theirs(qrels, run, "Judged@3") == _ours(qrels, run, "Judged@3") == {"q": 2 / 3}


def test_a_missing_query_in_the_peers_as_docs_measures_md_says():
    """q2 is judged, the run does not answer it: ir_measures and rankhouse by default score it
    0, pytrec_eval leaves it out as rankhouse's skip does, ranx refuses unless made
    comparable (then 0)."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    assert list(ir_measures.calc_aggregate([ir_measures.P @ 1], qrels, run).values()) == [0.5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert rankhouse.evaluate(qrels, run, "P@1").summary["P@1"].tolist() == [0.5]
        skipped = rankhouse.evaluate(qrels, run, "P@1", missing_queries="skip")
    assert skipped.summary["P@1 [missing_queries=skip]"].tolist() == [1.0]
    pytrec_eval = pytest.importorskip("pytrec_eval")
    assert pytrec_eval.RelevanceEvaluator(qrels, {"P_1"}).evaluate(run) == {"q1": {"P_1": 1.0}}
    ranx = pytest.importorskip("ranx")
    pair = ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run)
    with pytest.raises(AssertionError, match="make_comparable=True"):
        ranx.evaluate(*pair, "precision@1")
    assert ranx.evaluate(*pair, "precision@1", make_comparable=True) == 0.5
