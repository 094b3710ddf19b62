"""The diversity measures (alpha_nDCG, ERR_IA, NRBP, nNRBP, StRecall, P_IA, AP_IA) against
ndeval, as ir_measures' pyndeval provider runs it, on random qrels with intents and runs with
ties; a hand-computed case; and the error for a qrels set without intents."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from rankhouse.errors import InputError, MeasureError, RankhouseWarning

pyndeval = pytest.importorskip("pyndeval")

#: rankhouse's measure -> ndeval's name (pyndeval's), with the parameters pyndeval takes.
CASES = [
    ("alpha_nDCG@1", "alpha-nDCG@1", {}),
    ("alpha_nDCG@5", "alpha-nDCG@5", {}),
    ("alpha_nDCG@20", "alpha-nDCG@20", {}),
    ("ERR_IA@1", "ERR-IA@1", {}),
    ("ERR_IA@5", "ERR-IA@5", {}),
    ("ERR_IA@20", "ERR-IA@20", {}),
    ("alpha_DCG@1", "alpha-DCG@1", {}),
    ("alpha_DCG@10", "alpha-DCG@10", {}),
    ("alpha_DCG(alpha=0.7)@20", "alpha-DCG@20", {"alpha": 0.7}),
    ("nERR_IA@1", "nERR-IA@1", {}),
    ("nERR_IA@10", "nERR-IA@10", {}),
    ("NRBP", "NRBP", {}),
    ("StRecall@5", "strec@5", {}),
    ("StRecall@20", "strec@20", {}),
    ("P_IA@5", "P-IA@5", {}),
    ("P_IA@20", "P-IA@20", {}),
    ("AP_IA", "MAP-IA", {}),
    ("alpha_nDCG(alpha=0.3)@10", "alpha-nDCG@10", {"alpha": 0.3}),
    ("NRBP(alpha=0.2,beta=0.8)", "NRBP", {"alpha": 0.2, "beta": 0.8}),
    ("nNRBP", "nNRBP", {}),
    ("nNRBP(alpha=0.2,beta=0.8)", "nNRBP", {"alpha": 0.2, "beta": 0.8}),
    ("nNRBP(rel=2)", "nNRBP", {"relevance_level": 2}),
    ("ERR_IA(rel=2)@10", "ERR-IA@10", {"relevance_level": 2}),
    ("AP_IA(rel=2)", "MAP-IA", {"relevance_level": 2}),
    ("alpha_nDCG(rel=2)@10", "alpha-nDCG@10", {"relevance_level": 2}),
]


def _random_case(seed: int):
    """Qrels with intents (grades -1..3, documents judged for several intents or none) and a
    run whose scores tie often (a few distinct values)."""
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(rng.randint(2, 6)):
        qid = f"q{q}"
        docs = [f"d{rng.randint(0, 40)}" for _ in range(rng.randint(1, 25))]
        for intent in range(rng.randint(1, 5)):
            for doc in sorted(set(rng.sample(docs, rng.randint(1, len(docs))))):
                qrels.append((qid, str(intent + 1), doc, rng.choice([-1, 0, 0, 1, 1, 2, 3])))
        if rng.random() < 0.9:
            retrieved = sorted({*docs[: rng.randint(0, len(docs))], *(f"u{i}" for i in range(3))})
            for doc in rng.sample(retrieved, len(retrieved)):
                run.append((qid, doc, float(rng.randint(0, 6))))
    if not run:
        run.append(("q0", "u0", 1.0))
    return qrels, run


def _trec_order(run):
    """The run ranked as rankhouse (trec_eval, ndeval -traditional) ranks it: score descending,
    then document id descending; scores replaced by -position, so that pyndeval (which breaks
    ties by document id ascending) ranks it the same way."""
    by_doc = sorted(run, key=lambda row: row[1].encode(), reverse=True)
    ranked = sorted(by_doc, key=lambda row: (row[0], -row[2]))  # stable: doc ids stay descending
    position: dict[str, int] = {}
    out = []
    for qid, doc, _ in ranked:
        position[qid] = position.get(qid, 0) + 1
        out.append((qid, doc, -float(position[qid])))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_agrees_with_ndeval(warehouse, seed):
    qrels, run = _random_case(seed)
    name = f"div{seed}"
    warehouse.ingest_qrels(
        pd.DataFrame(qrels, columns=["query_id", "subtopic", "doc_id", "relevance"]),
        name=name,
        intents=True,
    )
    frame = pd.DataFrame(run, columns=["query_id", "doc_id", "score"])
    result = warehouse.evaluate(name, frame, [measure for measure, _, _ in CASES])
    ours = {(row.query, str(row.measure)): row.value for row in result.per_query.itertuples()}
    labels = dict(zip([m for m, _, _ in CASES], result.labels, strict=True))
    answered = {qid for qid, _, _ in run} & {qid for qid, *_ in qrels}
    for measure, theirs_name, params in CASES:
        level = params.get("relevance_level", 1)
        alpha, beta = params.get("alpha", 0.5), params.get("beta", 0.5)
        evaluator = pyndeval.RelevanceEvaluator(
            qrels, [theirs_name], relevance_level=level, alpha=alpha, beta=beta
        )
        theirs = evaluator.evaluate(_trec_order(run))
        assert set(theirs) == answered
        for qid in sorted(answered):
            expected = theirs[qid][theirs_name]
            got = ours[(qid, labels[measure])]
            if math.isnan(expected):
                # ndeval's nNRBP divides 0 by 0 for a query no document is relevant to (S = 0);
                # rankhouse gives 0 there, as every measure does (docs/measures.md)
                assert theirs_name == "nNRBP" and got == 0, (measure, qid)
                assert not any(q == qid and grade >= level for q, _, _, grade in qrels)
                continue
            assert math.isclose(got, expected, rel_tol=0, abs_tol=1e-9), (measure, qid)


def test_hand_computed(any_warehouse, tmp_path):
    warehouse = any_warehouse
    # query 1: intents a (d1, d2), b (d1), c (d3); d4 judged for no intent (grade 0)
    path = tmp_path / "div.qrels"
    path.write_text("1 a d1 1\n1 a d2 2\n1 b d1 1\n1 c d3 1\n1 c d4 0\n")
    warehouse.ingest_qrels(path, intents=True)
    run = pd.DataFrame(
        [("1", "d2", 4.0), ("1", "d1", 3.0), ("1", "d4", 2.0), ("1", "d3", 1.0)],
        columns=["query_id", "doc_id", "score"],
    )
    measures = ["alpha_nDCG@2", "ERR_IA@2", "StRecall@2", "P_IA@2", "AP_IA", "NRBP"]
    values = warehouse.evaluate("div", run, measures).per_query.set_index("measure")["value"]
    # gains: rank 1 d2 {a} = 1; rank 2 d1 {a, b} = 0.5 + 1 = 1.5; rank 4 d3 {c} = 1
    # ideal: d1 {a, b} = 2, then d3 {c} = 1 (d2 {a} = 0.5): DCG@2 = 2 + 1/log2(3)
    assert values["alpha_nDCG@2"] == pytest.approx(
        (1 + 1.5 / math.log2(3)) / (2 + 1 / math.log2(3))
    )
    # S = 3: (1/1 + 1.5/2) / (3 * (1 + 0.5/2))
    assert values["ERR_IA@2"] == pytest.approx(1.75 / 3.75)
    assert values["StRecall@2"] == pytest.approx(2 / 3)
    assert values["P_IA@2"] == pytest.approx(3 / (2 * 3))
    # AP of a: (1/1 + 2/2)/2 = 1; of b: (1/2)/1; of c: (1/4)/1
    assert values["AP_IA"] == pytest.approx((1 + 0.5 + 0.25) / 3)
    # (1 - 0.25) / 3 * (1 + 1.5 * 0.5 + 1 * 0.125)
    assert values["NRBP"] == pytest.approx(0.75 / 3 * 1.875)
    # the whole greedy ideal: d1 {a, b} = 2, d3 {c} = 1, d2 {a} = 0.5: 2 + 0.5 + 0.5 * 0.25
    nnrbp = warehouse.evaluate("div", run, ["nNRBP"]).per_query["value"]
    assert list(nnrbp) == [pytest.approx(1.875 / 2.625)]
    # the ordinary measures read the highest grade over the intents (d1: 1, d2: 2, d4: 0)
    ndcg = warehouse.evaluate("div", run, ["nDCG@1", "P@4"]).per_query.set_index("measure")
    assert ndcg["value"].to_dict() == pytest.approx({"nDCG@1": 1.0, "P@4": 0.75})


def test_no_intents_is_refused(any_warehouse, tmp_path):
    warehouse = any_warehouse
    path = tmp_path / "plain.qrels"
    path.write_text("1 0 d1 1\n")
    warehouse.ingest_qrels(path)
    run = pd.DataFrame([("1", "d1", 1.0)], columns=["query_id", "doc_id", "score"])
    with pytest.raises(MeasureError, match=r"the qrels set 'plain' has no intents; .*--intents"):
        warehouse.evaluate("plain", run, ["alpha_nDCG@10"])


def test_cli_ingest_and_errors(run_cli, tmp_path):
    qrels = tmp_path / "web.qrels"
    qrels.write_text("1 1 d1 1\n1 2 d1 0\n1 2 d2 1\n")
    done = run_cli("ingest", "qrels", qrels, "--intents")
    assert done.exit_code == 0, done.stderr
    shown = run_cli("sql", "SELECT count(*) AS n FROM judgment_intents", "--format", "csv")
    assert shown.stdout.splitlines()[-1] == "3"
    listed = run_cli("qrels", "list", "--format", "csv")
    # d1 (grades 1 and 0: 1) and d2 (1), both relevant
    assert listed.stdout.splitlines()[1].startswith("1,web,1,2,2,")
    assert run_cli("qrels", "rm", "web", "--yes").exit_code == 0
    shown = run_cli("sql", "SELECT count(*) AS n FROM judgment_intents", "--format", "csv")
    assert shown.stdout.splitlines()[-1] == "0"
    twice = tmp_path / "twice.qrels"
    twice.write_text("1 1 d1 1\n1 1 d1 2\n")
    refused = run_cli("ingest", "qrels", twice, "--intents")
    assert refused.exit_code == 1
    assert "line 2" in refused.stderr and "judged twice for intent '1'" in refused.stderr
    short = tmp_path / "short.qrels"
    short.write_text("1 d1 1\n")
    refused = run_cli("ingest", "qrels", short, "--intents")
    assert refused.exit_code == 1 and "expected 4 fields" in refused.stderr


def test_tables_name_or_map_the_intent(warehouse, tmp_path):
    frame = pd.DataFrame(
        {
            "qid": ["1", "1", "1"],
            "aspect": ["x", "y", "y"],
            "docno": ["a", "a", "b"],
            "label": [1, 2, 0],
        }
    )
    mapped = warehouse.ingest_qrels(frame, columns={"intent": "aspect"}, intents=True, name="m")
    csv = tmp_path / "div.csv"
    csv.write_text("query_id,subtopic,doc_id,relevance\n1,x,a,1\n1,y,a,2\n1,y,b,0\n")
    named = warehouse.ingest_qrels(csv, intents=True)
    assert (mapped.num_rows, named.num_rows, named.name) == (2, 2, "div")
    with warehouse.connect() as conn:
        rows = conn.execute("SELECT qrels_id, doc_id, grade FROM judgments ORDER BY ALL").fetchall()
    assert rows == [(1, "a", 2), (1, "b", 0), (2, "a", 2), (2, "b", 0)]
    import ir_measures

    tuples = ir_measures.read_trec_qrels("1 x a 1\n1 y a 2\n1 y b 0\n")  # Qrel(..., iteration)
    assert warehouse.ingest_qrels(tuples, intents=True, name="t").num_rows == 2
    with pytest.raises(InputError, match=r"no intent column.*--columns intent="):
        warehouse.ingest_qrels(frame.drop(columns="aspect"), intents=True)


def test_ir_measures_golden_err_ia(warehouse, tmp_path):
    # ir_measures' own case (test/test_pyndeval.py, test_ERR_IA): its published values
    qrels, run = tmp_path / "ia.qrels", tmp_path / "ia.run"
    qrels.write_text(
        "0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 1 D2 1\n0 1 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 1 D5 2\n"
    )
    run.write_text(
        "0 0 D0 1 0.8 run\n0 0 D2 2 0.7 run\n0 0 D1 3 0.3 run\n0 0 D3 4 0.4 run\n"
        "0 0 D4 5 0.1 run\n1 0 D1 1 0.8 run\n1 0 D3 2 0.7 run\n1 0 D4 3 0.3 run\n"
        "1 0 D2 4 0.4 run\n"
    )
    warehouse.ingest_qrels(qrels, intents=True)
    with pytest.warns(RankhouseWarning, match="ranks disagree with its scores"):
        warehouse.ingest_run(run)  # ranked by score, as pyndeval ranks it
    result = warehouse.evaluate("ia", "run", ["ERR_IA@20"])
    values = result.per_query.set_index("query")["value"]
    assert values.to_dict() == pytest.approx({"0": 0.4659, "1": 0.1803}, abs=5e-5)
    assert result.aggregates["value"].iloc[0] == pytest.approx(0.3231, abs=5e-5)
