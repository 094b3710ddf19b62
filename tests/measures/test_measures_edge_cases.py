"""The edge cases of the trec_eval spec (section 14) that touch the core measures.

Each case gives the qrels and run lines (`` | `` separates lines), the options and the values
trec_eval 10 printed, copied from the spec. Files are written to disk and ingested for real.
"""

from __future__ import annotations

import pytest
from measure_helpers import evaluate, store_qrels, store_run, trec_format

from rankhouse.measures import parse_measure

INTEGER_MEASURES = {"NumQ", "NumRet", "NumRel", "NumRelRet"}

CASES = {
    "C1 ties by doc id descending, rank column ignored": (
        "q1 0 a 1 | q1 0 b 0 | q1 0 c 1",
        "q1 Q0 a 1 0.5 runA | q1 Q0 b 2 0.5 runA | q1 Q0 c 3 0.7 runA",
        {},
        {("map", "q1"): "0.8333", ("map", "all"): "0.8333"},
    ),
    "C2 tie-break is byte order (order b a B 9 10)": (
        "q1 0 a 1 | q1 0 B 2 | q1 0 b 3 | q1 0 10 4 | q1 0 9 5",
        "q1 Q0 a 1 1 r | q1 Q0 B 1 1 r | q1 Q0 b 1 1 r | q1 Q0 10 1 1 r | q1 Q0 9 1 1 r",
        {},
        {
            ("RR(rel=4)", "q1"): trec_format(1 / 4),
            ("P(rel=3)@1", "q1"): "1.0000",
            ("AP(rel=2)", "q1"): trec_format((1 / 1 + 2 / 3 + 3 / 4 + 4 / 5) / 4),
        },
    ),
    "C3 query order is byte order, run-only queries ignored": (
        "10 0 a 1 | 2 0 a 1",
        "2 Q0 a 1 1 r | 10 Q0 a 1 1 r | 99 Q0 a 1 1 r",
        {},
        {
            ("map", "10"): "1.0000",
            ("map", "2"): "1.0000",
            ("num_q", "all"): "2",
            ("map", "all"): "1.0000",
        },
    ),
    "C4 query missing from the run scores as an empty ranking (-c)": (
        "1 0 a 1 | 2 0 b 1 | 3 0 c 1",
        "1 Q0 a 1 1 r | 3 Q0 c 1 1 r",
        {"missing_queries": "zero"},
        {
            ("num_ret", "2"): "0",
            ("num_rel", "2"): "1",
            ("map", "2"): "0.0000",
            ("num_q", "all"): "3",
            ("num_ret", "all"): "2",
            ("num_rel", "all"): "3",
            ("map", "all"): "0.6667",
            ("gm_map", "all"): "0.0215",
        },
    ),
    "C5 query with judgments but no relevant document": (
        "q1 0 a 1 | q2 0 b 0 | q2 0 c 0",
        "q1 Q0 a 1 1 r | q2 Q0 b 1 1 r | q2 Q0 x 2 0.5 r",
        {},
        {
            ("num_rel", "q1"): "1",
            ("num_rel", "q2"): "0",
            ("map", "q2"): "0.0000",
            ("bpref", "q1"): "1.0000",
            ("bpref", "q2"): "0.0000",
            ("P_5", "q1"): "0.2000",
            ("ndcg", "q1"): "1.0000",
            ("ndcg", "q2"): "0.0000",
            ("num_rel", "all"): "1",
            ("map", "all"): "0.5000",
            ("gm_map", "all"): "0.0032",
            ("bpref", "all"): "0.5000",
            ("P_5", "all"): "0.1000",
            ("ndcg", "all"): "0.5000",
        },
    ),
    # The spec's grades 1.7 0.5 -1 abc 2e1 +3 -7, as trec_eval's atol reads them (rankhouse's
    # ingest rejects the non-integers; that is the ingest's business, not the measures').
    "C8 negative grades are pooled-unjudged": (
        "q1 0 a 1 | q1 0 b 0 | q1 0 c -1 | q1 0 d 0 | q1 0 e 2 | q1 0 f 3 | q1 0 g -7",
        "q1 Q0 a 1 7 r | q1 Q0 b 1 6 r | q1 Q0 c 1 5 r | q1 Q0 d 1 4 r | q1 Q0 e 1 3 r"
        " | q1 Q0 f 1 2 r | q1 Q0 g 1 1 r | q1 Q0 h 1 0 r",
        {},
        {
            ("num_rel", "q1"): "3",
            ("num_rel_ret", "q1"): "3",
            ("bpref", "q1"): "0.3333",
            ("P_10", "q1"): "0.3000",
            ("infAP", "q1"): "0.6833",
            ("ndcg_cut_10", "q1"): "0.5969",
        },
    ),
    "C13 fewer documents retrieved than the cutoff": (
        "q1 0 a 1 | q1 0 b 1 | q1 0 c 1 | q1 0 d 1",
        "q1 Q0 a 1 2 r | q1 Q0 x 2 1 r",
        {},
        {
            ("map", "all"): "0.2500",
            ("Rprec", "all"): "0.2500",
            ("P_1", "all"): "1.0000",
            ("P_2", "all"): "0.5000",
            ("P_5", "all"): "0.2000",
            ("recall_1", "all"): "0.2500",
            ("recall_5", "all"): "0.2500",
        },
    ),
    "C14 -M keeps the top M after sorting by score": (
        "q1 0 a 1 | q1 0 b 0",
        "q1 Q0 b 1 0.1 r | q1 Q0 a 2 0.9 r",
        {"max_rank": 1},
        {("num_ret", "q1"): "1", ("map", "q1"): "1.0000"},
    ),
    "C15 -l1: binary and graded measures": (
        "q1 0 a 1 | q1 0 b 2 | q1 0 c 0",
        "q1 Q0 a 1 3 r | q1 Q0 c 2 2 r | q1 Q0 b 3 1 r",
        {"relevance_level": 1},
        {
            ("num_rel", "all"): "2",
            ("map", "all"): "0.8333",
            ("bpref", "all"): "0.5000",
            ("P_1", "all"): "1.0000",
            ("ndcg", "all"): "0.7602",
            ("ndcg_cut_3", "all"): "0.7602",
        },
    ),
    "C15 -l2: binary measures move, graded ones do not": (
        "q1 0 a 1 | q1 0 b 2 | q1 0 c 0",
        "q1 Q0 a 1 3 r | q1 Q0 c 2 2 r | q1 Q0 b 3 1 r",
        {"relevance_level": 2},
        {
            ("num_rel", "all"): "1",
            ("map", "all"): "0.3333",
            ("bpref", "all"): "0.0000",
            ("P_1", "all"): "0.0000",
            ("ndcg", "all"): "0.7602",
            ("ndcg_cut_3", "all"): "0.7602",
        },
    ),
    "C16 without -J": (
        "q1 0 a 1 | q1 0 b 0 | q1 0 u -1",
        "q1 Q0 x 1 5 r | q1 Q0 u 2 4 r | q1 Q0 b 3 3 r | q1 Q0 a 4 2 r",
        {},
        {("num_ret", "q1"): "4", ("map", "q1"): "0.2500", ("P_2", "q1"): "0.0000"},
    ),
    "C16 -J drops documents without a judgment >= 0 and re-ranks": (
        "q1 0 a 1 | q1 0 b 0 | q1 0 u -1",
        "q1 Q0 x 1 5 r | q1 Q0 u 2 4 r | q1 Q0 b 3 3 r | q1 Q0 a 4 2 r",
        {"judged_only": True},
        {("num_ret", "q1"): "2", ("map", "q1"): "0.5000", ("P_2", "q1"): "0.5000"},
    ),
    "C18 -J empty ranking makes iprec at recall 0 NaN": (
        "q1 0 a 1 | q2 0 b 1",
        "q1 Q0 a 1 1 r | q2 Q0 zz 1 1 r",
        {"judged_only": True},
        {
            ("num_ret", "q1"): "1",
            ("map", "q1"): "1.0000",
            ("iprec_at_recall_0.00", "q1"): "1.0000",
            ("iprec_at_recall_0.50", "q1"): "1.0000",
            ("num_ret", "q2"): "0",
            ("map", "q2"): "0.0000",
            ("iprec_at_recall_0.00", "q2"): "  -nan",
            ("iprec_at_recall_0.50", "q2"): "0.0000",
            ("num_ret", "all"): "1",
            ("map", "all"): "0.5000",
            ("iprec_at_recall_0.00", "all"): "  -nan",
            ("iprec_at_recall_0.50", "all"): "0.5000",
        },
    ),
    "C18 -M0 empty ranking": (
        "q1 0 a 1 | q2 0 b 1",
        "q1 Q0 a 1 1 r | q2 Q0 zz 1 1 r",
        {"max_rank": 0},
        {
            ("num_ret", "all"): "0",
            ("map", "all"): "0.0000",
            ("iprec_at_recall_0.00", "all"): "  -nan",
        },
    ),
    "C19 iprec_at_recall uses lround(p*R)": (
        "q1 0 r1 1 | q1 0 r2 1 | q1 0 r3 1 | q1 0 r4 1 | q1 0 r5 1",
        "q1 Q0 r1 1 10 r | q1 Q0 n1 1 9 r | q1 Q0 r2 1 8 r | q1 Q0 n2 1 7 r | q1 Q0 n3 1 6 r"
        " | q1 Q0 r3 1 5 r | q1 Q0 n4 1 4 r | q1 Q0 n5 1 3 r | q1 Q0 n6 1 2 r | q1 Q0 r4 1 1 r",
        {},
        {
            (f"iprec_at_recall_{p:3.2f}", "all"): v
            for p, v in zip(
                [i / 10 for i in range(11)],
                [
                    "1.0000",
                    "1.0000",
                    "1.0000",
                    "0.6667",
                    "0.6667",
                    "0.5000",
                    "0.5000",
                    "0.4000",
                    "0.4000",
                    "0.0000",
                    "0.0000",
                ],
                strict=True,
            )
        },
    ),
    "C23 all-negative query after the first: R = 0": (
        "a 0 x 1 | b 0 y -1",
        "a Q0 x 1 1 r | b Q0 y 1 1 r",
        {},
        {
            ("num_rel", "a"): "1",
            ("map", "a"): "1.0000",
            ("num_rel", "b"): "0",
            ("map", "b"): "0.0000",
            ("num_rel", "all"): "1",
            ("map", "all"): "0.5000",
        },
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_edge_case(case, any_warehouse, tmp_path):
    warehouse = any_warehouse
    qrels_text, run_text, options, expected = CASES[case]
    qrels_file = tmp_path / "case.qrels"
    run_file = tmp_path / "case.run"
    qrels_file.write_text("\n".join(qrels_text.split(" | ")) + "\n")
    run_file.write_text("\n".join(run_text.split(" | ")) + "\n")
    qrels_id = store_qrels(warehouse, qrels_file)
    run_id = store_run(warehouse, run_file)
    names = {name: parse_measure(name).name for name, _ in expected}

    per_query, summary = evaluate(warehouse, run_id, qrels_id, list(names.values()), **options)

    got = {(row.measure, row.query_id): row.value for row in per_query.itertuples()}
    got |= {(row.measure, "all"): row.value for row in summary.itertuples()}
    printed = {}
    for name, query in expected:
        value = got[(names[name], query)]
        integer = names[name] in INTEGER_MEASURES
        printed[(name, query)] = str(int(value)) if integer else trec_format(value)
    assert printed == expected


def test_query_order_is_byte_order(any_warehouse, tmp_path):
    warehouse = any_warehouse
    (tmp_path / "q").write_text("10 0 a 1\n2 0 a 1\n9 0 a 1\n")
    (tmp_path / "r").write_text("2 Q0 a 1 1 r\n10 Q0 a 1 1 r\n9 Q0 a 1 1 r\n")
    per_query, _ = evaluate(
        warehouse,
        store_run(warehouse, tmp_path / "r"),
        store_qrels(warehouse, tmp_path / "q"),
        ["map"],
    )
    assert list(per_query.query_id) == ["10", "2", "9"]
