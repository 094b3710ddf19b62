"""Each mean's interval in eval and history: Student's t over the per-query values.

Expected values come from scipy (``scipy.stats.t.interval``, ``ttest_1samp(...)
.confidence_interval()``) over pytrec_eval's per-query values, and from a hand computation;
never from rankhouse's own output.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest
import scipy.stats
from report_helpers import read_trec

import rankhouse
from rankhouse import RankhouseError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QRELS = EXAMPLES / "qrels.txt"
RUNS = {"bm25": EXAMPLES / "run.bm25.txt", "dense": EXAMPLES / "run.dense.txt"}
#: rankhouse's name -> pytrec_eval's (every one averaged over the queries)
MEASURES = {"nDCG@10": "ndcg_cut_10", "AP": "map", "P@5": "P_5", "RR": "recip_rank"}


@pytest.fixture(scope="module")
def per_query(pytrec) -> dict[str, dict[str, list[float]]]:
    """pytrec_eval's per-query values of both runs, a query missing from a run scored 0."""
    qrels = read_trec(QRELS, 4)
    found = {}
    for run, path in RUNS.items():
        values = pytrec.evaluate(qrels, read_trec(path, 6), list(MEASURES.values()))
        found[run] = {
            name: [values.get(q, {}).get(key, 0.0) for q in sorted(qrels)]
            for name, key in MEASURES.items()
        }
    return found


def scipy_interval(values: list[float], level: float) -> tuple[float, float]:
    """scipy's t interval of the mean, checked against ttest_1samp's own."""
    n = len(values)
    mean = sum(values) / n
    low, high = scipy.stats.t.interval(level, n - 1, loc=mean, scale=scipy.stats.sem(values))
    other = scipy.stats.ttest_1samp(values, 0.0).confidence_interval(confidence_level=level)
    assert (low, high) == pytest.approx((other.low, other.high), abs=1e-15)
    return low, high


@pytest.mark.parametrize("level", [0.95, 0.9])
def test_stored_means_have_scipys_interval(any_warehouse, per_query, level):
    result = any_warehouse.evaluate(QRELS, list(RUNS.values()), list(MEASURES), level=level)
    assert result.level == level
    rows = result.aggregates.set_index(["run", "measure"])
    assert list(result.aggregates.columns[3:6]) == ["value", "mean_low", "mean_high"]
    for run, measures in per_query.items():
        for measure, values in measures.items():
            row = rows.loc[(run, measure)]
            assert row["num_q"] == len(values) == 8
            low, high = scipy_interval(values, level)
            assert row["mean_low"] == pytest.approx(low, abs=1e-14)
            assert row["mean_high"] == pytest.approx(high, abs=1e-14)


def test_data_evaluated_in_memory_has_the_same_interval(per_query):
    result = rankhouse.evaluate(QRELS, RUNS["dense"], list(MEASURES))
    wide = result.intervals.set_index("run")
    assert list(wide.columns[:4]) == ["num_q", "nDCG@10", "nDCG@10 low", "nDCG@10 high"]
    for measure, values in per_query["dense"].items():
        low, high = scipy_interval(values, 0.95)
        assert wide.at["dense", f"{measure} low"] == pytest.approx(low, abs=1e-14)
        assert wide.at["dense", f"{measure} high"] == pytest.approx(high, abs=1e-14)


def test_a_hand_computed_interval():
    """P@1 of 1, 0, 1, 1 over four queries: mean 0.75, s = 0.5, s / sqrt(4) = 0.25, and
    t_{0.975, 3} = 3.1824463052837 (tables: 3.182), so 0.75 -+ 0.795611576320925."""
    qrels = {q: {"good": 1, "bad": 0} for q in ("q1", "q2", "q3", "q4")}
    run = {q: {"good": 2.0, "bad": 1.0} for q in ("q1", "q3", "q4")} | {
        "q2": {"good": 1.0, "bad": 2.0}
    }
    result = rankhouse.evaluate(qrels, {"r": run}, ["P@1", "NumRelRet"])
    rows = result.aggregates.set_index("measure")
    half = 3.1824463052837 * 0.25
    assert rows.at["P@1", "value"] == 0.75
    assert rows.at["P@1", "mean_low"] == pytest.approx(0.75 - half, abs=1e-13)  # t to 14 digits
    assert rows.at["P@1", "mean_high"] == pytest.approx(0.75 + half, abs=1e-13)
    # a sum is not a mean of the per-query values: no interval
    assert math.isnan(rows.at["NumRelRet", "mean_low"])
    assert math.isnan(rows.at["NumRelRet", "mean_high"])


def test_constant_values_and_a_single_query():
    same = rankhouse.evaluate({"a": {"d": 1}, "b": {"d": 1}}, {"r": {"a": {"d": 1.0}}}, ["P@1"])
    # q a: 1, q b: 0 (missing, scored zero): an interval; skipped, one query: none
    assert not math.isnan(same.aggregates.at[0, "mean_low"])
    one = rankhouse.evaluate(
        {"a": {"d": 1}, "b": {"d": 1}}, {"r": {"a": {"d": 1.0}}}, ["P@1"], missing_queries="skip"
    )
    assert math.isnan(one.aggregates.at[0, "mean_low"])
    both = rankhouse.evaluate(
        {"a": {"d": 1}, "b": {"d": 1}}, {"r": {"a": {"d": 1.0}, "b": {"d": 1.0}}}, ["P@1"]
    )
    assert (both.aggregates.at[0, "mean_low"], both.aggregates.at[0, "mean_high"]) == (1.0, 1.0)


@pytest.mark.parametrize("level", [0, 1, 1.5, -0.2])
def test_a_level_outside_zero_and_one_is_refused(warehouse, level):
    with pytest.raises(RankhouseError, match="level must lie strictly between 0 and 1"):
        warehouse.evaluate(QRELS, RUNS["bm25"], ["AP"], level=level)
    with pytest.raises(RankhouseError, match="level must lie strictly between 0 and 1"):
        warehouse.history(level=level)


def test_cli_eval_gives_the_bounds_and_the_queries(run_cli, per_query):
    done = run_cli("eval", QRELS, *RUNS.values(), "-m", "AP", "-m", "P@5", "--format", "csv")
    assert done.exit_code == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    header = ["run", "num_q", "AP", "AP low", "AP high", "P@5", "P@5 low", "P@5 high"]
    assert list(rows[0]) == header
    for row in rows:
        assert row["num_q"] == "8"
        for measure in ("AP", "P@5"):
            low, high = scipy_interval(per_query[row["run"]][measure], 0.95)
            assert float(row[f"{measure} low"]) == pytest.approx(low, abs=1e-14)
            assert float(row[f"{measure} high"]) == pytest.approx(high, abs=1e-14)
    done = run_cli("eval", "qrels", "dense", "-m", "RR", "--level", "0.8", "--format", "json")
    assert done.exit_code == 0, done.stderr
    [record] = json.loads(done.stdout)
    low, high = scipy_interval(per_query["dense"]["RR"], 0.8)
    assert record["RR low"] == pytest.approx(low, abs=1e-14)
    assert record["RR high"] == pytest.approx(high, abs=1e-14)
    assert record["num_q"] == 8


def test_cli_eval_table_shows_the_half_width(run_cli, per_query):
    done = run_cli("eval", QRELS, RUNS["bm25"], "-m", "AP", "-m", "num_rel_ret")
    assert done.exit_code == 0, done.stderr
    low, high = scipy_interval(per_query["bm25"]["AP"], 0.95)
    mean = sum(per_query["bm25"]["AP"]) / 8
    assert "mean ±95% CI (t)" in done.stdout
    line = next(line for line in done.stdout.splitlines() if "bm25" in line)
    assert f"{mean:.4f} ±{(high - low) / 2:.4f}" in line
    assert "±" not in line.split("│")[-1]  # NumRelRet, a sum: the value alone
    assert done.exit_code == 0
    bad = run_cli("eval", QRELS, RUNS["bm25"], "--level", "2")
    assert bad.exit_code == 1
    assert bad.stderr == "Error: --level must lie strictly between 0 and 1, got 2.0\n"


def test_history_gives_each_mean_its_interval(any_warehouse, per_query):
    any_warehouse.evaluate(QRELS, list(RUNS.values()), ["AP", "P@5", "num_rel_ret"])
    frame = any_warehouse.history(level=0.9)
    assert list(frame.columns[4:]) == [
        "num_q",
        "AP",
        "AP low",
        "AP high",
        "NumRelRet",
        "NumRelRet low",
        "NumRelRet high",
        "P@5",
        "P@5 low",
        "P@5 high",
        "inputs",
        "new_inputs",
        "gate",
    ]
    assert str(frame["num_q"].dtype) == "Int64" and list(frame["num_q"]) == [8, 8]
    indexed = frame.set_index("run")
    for run in RUNS:
        for measure in ("AP", "P@5"):
            low, high = scipy_interval(per_query[run][measure], 0.9)
            assert indexed.at[run, f"{measure} low"] == pytest.approx(low, abs=1e-14)
            assert indexed.at[run, f"{measure} high"] == pytest.approx(high, abs=1e-14)
        assert pd.isna(indexed.at[run, "NumRelRet low"])
    html = frame._repr_html_()
    assert "mean ±90% CI" in html and "AP low" not in html


def test_cli_history_gives_the_bounds_and_folds_them_in_a_table(run_cli, per_query):
    assert run_cli("eval", QRELS, *RUNS.values(), "-m", "AP").exit_code == 0
    done = run_cli("history", "--format", "csv", "--level", "0.99")
    assert done.exit_code == 0, done.stderr
    rows = {row["run"]: row for row in csv.DictReader(io.StringIO(done.stdout))}
    assert list(rows["bm25"])[4:] == [
        "num_q",
        "AP",
        "AP low",
        "AP high",
        "inputs",
        "new_inputs",
        "gate",
    ]
    for run in RUNS:
        low, high = scipy_interval(per_query[run]["AP"], 0.99)
        assert float(rows[run]["AP low"]) == pytest.approx(low, abs=1e-14)
        assert float(rows[run]["AP high"]) == pytest.approx(high, abs=1e-14)
    table = run_cli("history")
    assert "history: mean ±95% CI (t)" in table.stdout
    low, high = scipy_interval(per_query["dense"]["AP"], 0.95)
    assert f" ±{(high - low) / 2:.4f}" in table.stdout
    assert "AP low" not in table.stdout


def test_eval_and_history_give_compares_interval_to_the_bit(any_warehouse):
    """One computation: the values in query-id order, summarized as compare summarizes them
    (whatever the store, or the order its threads return rows in)."""
    result = any_warehouse.evaluate(QRELS, list(RUNS.values()), list(MEASURES))
    compared = any_warehouse.compare(QRELS, list(RUNS), list(MEASURES)).set_index(
        ["run", "measure"]
    )
    history = any_warehouse.history().set_index("run")
    for row in result.aggregates.itertuples():
        expected = compared.loc[(row.run, row.measure)]
        assert (row.mean_low, row.mean_high) == (expected["mean_low"], expected["mean_high"])
        assert history.at[row.run, f"{row.measure} low"] == row.mean_low
        assert history.at[row.run, f"{row.measure} high"] == row.mean_high
