"""Compare: means, per-query pairing by id, and p-values equal to scipy's called directly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats
from series_helpers import make_runs, qrels_path
from statsmodels.stats.multitest import multipletests

from rankhouse import RankhouseError, Warehouse
from rankhouse.compare import COLUMNS

MEASURES = ["nDCG@10", "AP"]
RUNS = ["night-1", "better", "night-3"]


@pytest.fixture(scope="module")
def run_files(shared_dir, tmp_path_factory) -> dict[str, Path]:
    return make_runs(shared_dir, tmp_path_factory.mktemp("runs"))


@pytest.fixture
def loaded(warehouse, shared_dir, run_files):
    warehouse.ingest_qrels(qrels_path(shared_dir), name="dl19")
    for name in ["night-2", *RUNS]:
        warehouse.ingest_run(run_files[name], name=name)
    return warehouse


def _pairs(wh, run: str, baseline: str, measure: str, **options) -> pd.DataFrame:
    per_query = wh.evaluate("dl19", [run, baseline], [measure], **options).per_query
    wide = per_query.pivot(index="query", columns="run", values="value")
    return wide.dropna()


def test_means_only_without_baseline(loaded):
    frame = loaded.compare("dl19", RUNS, MEASURES)
    assert list(frame.columns) == list(COLUMNS)
    summary = loaded.evaluate("dl19", RUNS, MEASURES).summary.set_index("run")
    assert list(frame["run"]) == [r for r in RUNS for _ in MEASURES]
    for row in frame.itertuples():
        assert row.mean == summary.at[row.run, row.measure]
        assert row.num_q == 43
    assert frame["p_value"].isna().all()
    assert frame["baseline"].isna().all()


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization"])
def test_p_values_are_scipys(loaded, test):
    frame = loaded.compare(
        "dl19", RUNS, MEASURES, baseline="night-2", test=test, permutations=500, seed=9
    )
    assert list(frame["run"].unique()) == ["night-2", *RUNS]  # the baseline comes first
    base_rows = frame[frame["run"] == "night-2"]
    assert base_rows["p_value"].isna().all() and base_rows["delta"].isna().all()
    for row in frame[frame["run"] != "night-2"].itertuples():
        pairs = _pairs(loaded, row.run, "night-2", row.measure)
        run_values, base_values = pairs[row.run].to_numpy(), pairs["night-2"].to_numpy()
        if test == "t":
            expected = scipy_stats.ttest_rel(run_values, base_values).pvalue
        elif test == "wilcoxon":
            expected = scipy_stats.wilcoxon(run_values, base_values).pvalue
        else:
            expected = scipy_stats.permutation_test(
                (run_values, base_values),
                lambda x, y, axis: np.mean(x - y, axis=axis),
                permutation_type="samples",
                n_resamples=500,
                rng=np.random.default_rng(9),
            ).pvalue
        assert row.p_value == pytest.approx(expected, rel=1e-9)
        assert row.delta == pytest.approx(run_values.mean() - base_values.mean(), abs=1e-12)
        assert row.improved == int((run_values > base_values).sum())
        assert row.degraded == int((run_values < base_values).sum())
        assert row.tied == int((run_values == base_values).sum())
        assert row.num_paired == 43
        assert row.baseline == "night-2"


def test_correction_is_per_measure_over_the_runs(loaded):
    frame = loaded.compare("dl19", RUNS, MEASURES, baseline="night-2", correction="holm")
    for measure in MEASURES:
        rows = frame[(frame["measure"] == measure) & (frame["run"] != "night-2")]
        reject, corrected, _, _ = multipletests(list(rows["p_value"]), alpha=0.05, method="holm")
        assert list(rows["p_corrected"]) == pytest.approx(list(corrected))
        assert list(rows["significant"]) == list(reject)


def test_pairs_by_query_id_not_position(loaded, run_files, tmp_path):
    # A run that answers only some queries, its lines in another order: with
    # missing_queries='skip' it has fewer per-query values, which must meet the
    # baseline's values of the same query ids.
    lines = run_files["better"].read_text().splitlines()
    queries = sorted({line.split()[0] for line in lines})
    kept = set(queries[::2])
    partial = tmp_path / "partial.run"
    partial.write_text(
        "\n".join(sorted((ln for ln in lines if ln.split()[0] in kept), reverse=True)) + "\n"
    )
    loaded.ingest_run(partial, name="partial")
    frame = loaded.compare(
        "dl19", ["partial"], ["AP"], baseline="night-2", missing_queries="skip"
    ).set_index("run")
    baseline_values = loaded.evaluate("dl19", ["night-2"], ["AP"]).per_query.set_index("query")[
        "value"
    ]
    run_values = loaded.evaluate(
        "dl19", ["partial"], ["AP"], missing_queries="skip"
    ).per_query.set_index("query")["value"]
    assert sorted(run_values.index) == sorted(kept)
    paired = baseline_values.loc[run_values.index]
    assert frame.at["partial", "num_paired"] == len(kept)
    assert frame.at["partial", "p_value"] == pytest.approx(
        scipy_stats.ttest_rel(run_values.to_numpy(), paired.to_numpy()).pvalue, rel=1e-9
    )


def test_bad_options_raise(loaded):
    with pytest.raises(RankhouseError, match="unknown test"):
        loaded.compare("dl19", RUNS, MEASURES, baseline="night-2", test="z")
    with pytest.raises(RankhouseError, match="unknown correction"):
        loaded.compare("dl19", RUNS, MEASURES, baseline="night-2", correction="z")
    with pytest.raises(RankhouseError, match="alpha"):
        loaded.compare("dl19", RUNS, MEASURES, baseline="night-2", alpha=2.0)


def test_cli_experiment_table(shared_dir, run_files, db_path, run_cli):
    qrels = qrels_path(shared_dir)
    result = run_cli(
        "compare",
        qrels,
        run_files["bm25-new"],
        run_files["splade"],
        "-m",
        "nDCG@10",
        "--baseline",
        run_files["bm25-new"],
        "--wide",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert len(rows) == 2  # the baseline is one of the runs: not listed twice
    better = rows[1]
    assert better["nDCG@10 verdict"] == "better"
    assert rows[0]["nDCG@10 verdict"] is None  # the baseline is not tested
    assert better["nDCG@10 delta"] > 0
    assert better["nDCG@10 +"] > better["nDCG@10 -"]
    assert rows[0]["nDCG@10 p"] is None

    long = run_cli("compare", qrels, run_files["splade"], "-m", "AP", "--long", "-f", "csv")
    assert long.exit_code == 0, long.stderr
    assert long.stdout.splitlines()[0] == ",".join(COLUMNS)


def test_cli_unknown_run(shared_dir, db_path, run_cli):
    Warehouse(db_path).close()
    result = run_cli("compare", qrels_path(shared_dir), "nope", "-m", "AP")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ") and "nope" in result.stderr


def test_values_are_paired_by_query_id_in_byte_order_without_nan_or_gaps():
    """rankhouse.pairing pairs compare's values and the report's: by query id, in byte
    order, leaving out a query either run lacks or holds NaN for (expected pairs by hand)."""
    from rankhouse.evaluation import PerQueryValues
    from rankhouse.pairing import paired, paired_frames, values_by_run

    nan = float("nan")
    table = [  # run, query, value of AP (RR rows must not mix in)
        ("base", "é", 0.1),
        ("base", "a", 0.2),
        ("base", "B", 0.3),
        ("base", "10", 0.4),
        ("base", "9", nan),
        ("base", "x", 0.6),
        ("r1", "9", 0.5),
        ("r1", "x", nan),
        ("r1", "é", 0.7),
        ("r1", "10", 0.8),
        ("r1", "a", 0.9),
        ("r1", "only-r1", 1.0),
        ("r1", "B", 0.0),
    ]
    values = PerQueryValues()
    for run, query, value in table:
        for measure, shift in (("AP", 0.0), ("RR", 5.0)):
            values.run.append(run)
            values.query.append(query)
            values.measure.append(measure)
            values.value.append(value + shift)
    queries, run_values, baseline_values = paired(values_by_run(values, "AP"), "r1", "base")
    # byte order: digits, then upper case, then lower case, then UTF-8's two-byte letters
    assert queries == ["10", "B", "a", "é"]
    assert run_values.tolist() == [0.8, 0.0, 0.9, 0.7]
    assert baseline_values.tolist() == [0.4, 0.3, 0.2, 0.1]
    [frame] = paired_frames(values, "base", "RR").values()
    assert frame["query_id"].tolist() == queries
    assert frame["run_value"].tolist() == [v + 5.0 for v in (0.8, 0.0, 0.9, 0.7)]
    assert frame["baseline_value"].tolist() == [v + 5.0 for v in (0.4, 0.3, 0.2, 0.1)]
