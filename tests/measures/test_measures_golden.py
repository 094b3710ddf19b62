"""Golden tests: our values printed as trec_eval prints them equal trec_eval 10's own outputs.

The expected files are trec_eval's conformance outputs (see ../shared/data/trec_eval_tests/
COMMANDS.md). Every line of a measure computed by the families of this module is compared,
per query and on the ``all`` line.
"""

from __future__ import annotations

import pytest
from conftest import BACKENDS, ICEBERG
from measure_helpers import (
    assert_same_numbers,
    evaluate,
    read_trec_output,
    store_qrels,
    store_run,
    trec_format,
)

from rankhouse.errors import MeasureError
from rankhouse.measures import parse_measure, trec_name

CORE_FAMILIES = {
    "counts",
    "precision",
    "recall",
    "success",
    "ap",
    "rr",
    "ndcg",
    "rprec",
    "bpref",
    "iprec",
    "infap",
}
INTEGER_MEASURES = {"NumQ", "NumRet", "NumRel", "NumRelRet"}

# (expected output, qrels, run, evaluation options), as in COMMANDS.md
CASES = {
    "aq": ("out.test.aq", "qrels.test", "results.test", {}),
    "aqc": ("out.test.aqc", "qrels.test", "results.trunc", {"missing_queries": "zero"}),
    "aqcM": ("out.test.aqcM", "qrels.test", "results.trunc", {"max_rank": 100}),
    "aql": ("out.test.aql", "qrels.rel_level", "results.test", {"relevance_level": 2}),
    "meas_params": ("out.test.meas_params", "qrels.test", "results.test", {}),
}


def _ours(name: str):
    """Our measure for a printed trec_eval name, or None when it is not a core measure."""
    try:
        measure = parse_measure(name)
    except MeasureError:
        return None
    if measure.family not in CORE_FAMILIES or trec_name(measure) != name:
        return None
    return measure


@pytest.mark.parametrize("backend_target", [*BACKENDS, ICEBERG], indirect=True)
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_trec_eval_output(case, trec_eval_tests, any_warehouse, file_twin):
    warehouse = any_warehouse
    expected_file, qrels, run, options = CASES[case]
    expected = read_trec_output(trec_eval_tests / expected_file)
    measures = {name: _ours(name) for name, _, _ in expected}
    measures = {name: m for name, m in measures.items() if m is not None}
    qrels_id = store_qrels(warehouse, trec_eval_tests / qrels)
    run_id = store_run(warehouse, trec_eval_tests / run)

    per_query, summary = evaluate(
        warehouse, run_id, qrels_id, [m.name for m in measures.values()], **options
    )

    got = {(row.measure, row.query_id): row.value for row in per_query.itertuples()}
    got |= {(row.measure, "all"): row.value for row in summary.itertuples()}
    compared = 0
    mismatches = []
    for name, query, printed in expected:
        measure = measures.get(name)
        if measure is None:
            continue
        value = got[(measure.name, query)]
        ours = str(int(value)) if measure.name in INTEGER_MEASURES else trec_format(value)
        compared += 1
        if ours != printed:
            mismatches.append(f"{name} {query}: trec_eval {printed}, rankhouse {ours}")
    assert mismatches == []
    assert compared >= 40  # the file really was compared, not skipped
    names = [m.name for m in measures.values()]
    qrels_path, run_path = trec_eval_tests / qrels, trec_eval_tests / run
    assert_same_numbers(warehouse, file_twin, qrels_path, run_path, names, **options)


def test_missing_query_counts_as_empty_ranking(trec_eval_tests, warehouse):
    """results.trunc has no line for query 302: with 'zero' it is in the mean, 'skip' drops it."""
    qrels_id = store_qrels(warehouse, trec_eval_tests / "qrels.test")
    run_id = store_run(warehouse, trec_eval_tests / "results.trunc")
    zero, zero_all = evaluate(warehouse, run_id, qrels_id, ["map", "num_q"])
    skip, skip_all = evaluate(warehouse, run_id, qrels_id, ["map", "num_q"], missing_queries="skip")
    assert sorted(set(zero.query_id)) == ["301", "302", "303"]
    assert sorted(set(skip.query_id)) == ["301", "303"]
    ap = zero[zero.measure == "AP"].set_index("query_id").value
    assert ap["302"] == 0.0
    assert zero_all.set_index("measure").value["NumQ"] == 3
    assert skip_all.set_index("measure").value["NumQ"] == 2
    assert skip_all.set_index("measure").value["AP"] == pytest.approx((ap["301"] + ap["303"]) / 2)
