"""compare with PyTerrier's Experiment parameters, one by one (docs/compare.md): names,
perquery, baseline by index or name, test (a callable too), correction by statsmodels'
names, correction_alpha, highlight, round, query subsets, the wide table; and the CLI's
--names, --queries, --missing-queries, --per-query, --round, --highlight.

Expected numbers come from the per-query values of evaluate (checked against pytrec_eval
elsewhere) put through scipy and statsmodels directly.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from report_helpers import EXAMPLES, QRELS
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

import rankhouse
from rankhouse import InputError, RankhouseError, RankhouseWarning, Warehouse
from rankhouse.compare import COLUMNS, PER_QUERY_COLUMNS, experiment_table

RUN_FILES = {
    "bm25": EXAMPLES / "run.bm25.txt",
    "dense": EXAMPLES / "run.dense.txt",
    "night3": EXAMPLES / "nights" / "bm25.night3.txt",
    "night4": EXAMPLES / "nights" / "bm25.night4.txt",
}
MEASURES = ["AP", "nDCG@10"]


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    with Warehouse(tmp_path_factory.mktemp("experiment") / "w.duckdb") as opened:
        opened.ingest_qrels(QRELS, name="qrels")
        for name, path in RUN_FILES.items():
            opened.ingest_run(path, name=name)
        yield opened


@pytest.fixture(scope="module")
def values(wh) -> pd.DataFrame:
    """Per-query values of every run: one column per (run, measure), one row per query."""
    per_query = wh.evaluate("qrels", list(RUN_FILES), MEASURES).per_query
    return per_query.pivot_table(index="query", columns=["run", "measure"], values="value")


def _row(frame: pd.DataFrame, run: str, measure: str) -> pd.Series:
    return frame[(frame["run"] == run) & (frame["measure"] == measure)].iloc[0]


def test_names_are_shown_for_the_runs_in_order(wh):
    frame = wh.compare(
        "qrels", ["bm25", "dense"], ["AP"], names=["BM25", "Dense"], baseline="Dense"
    )
    assert frame["run"].tolist() == ["BM25", "Dense"]
    assert frame["baseline"].tolist() == ["Dense", "Dense"]
    assert sorted(wh.runs()["name"]) == sorted(RUN_FILES)  # stored names unchanged
    with pytest.raises(RankhouseError, match="1 name for 2 runs"):
        wh.compare("qrels", ["bm25", "dense"], ["AP"], names=["one"])
    with pytest.raises(RankhouseError, match="the names must differ"):
        wh.compare("qrels", ["bm25", "dense"], ["AP"], names=["x", "x"])


def test_baseline_by_position_is_baseline_by_name(wh):
    by_index = wh.compare("qrels", ["bm25", "dense", "night4"], MEASURES, baseline=1)
    by_name = wh.compare("qrels", ["bm25", "dense", "night4"], MEASURES, baseline="dense")
    pd.testing.assert_frame_equal(pd.DataFrame(by_index), pd.DataFrame(by_name))
    assert set(by_index["baseline"]) == {"dense"}
    with pytest.raises(RankhouseError, match="baseline=3 is no position among the 3 runs"):
        wh.compare("qrels", ["bm25", "dense", "night4"], ["AP"], baseline=3)
    with pytest.raises(RankhouseError, match="not a boolean"):
        wh.compare("qrels", ["bm25", "dense"], ["AP"], baseline=True)


def test_perquery_gives_the_values_the_means_are_made_of(wh, values):
    means, per_query = wh.compare("qrels", ["bm25", "dense"], MEASURES, baseline=0, perquery="both")
    assert list(means.columns) == list(COLUMNS)
    assert list(per_query.columns) == list(PER_QUERY_COLUMNS)
    only = wh.compare("qrels", ["bm25", "dense"], MEASURES, perquery=True)
    pd.testing.assert_frame_equal(only, per_query)
    for row in per_query.itertuples():
        assert row.value == values.at[row.query, (row.run, row.measure)]
    for row in means.itertuples():
        own = per_query[(per_query["run"] == row.run) & (per_query["measure"] == row.measure)]
        assert row.mean == pytest.approx(own["value"].mean(), abs=1e-12)
    with pytest.raises(RankhouseError, match="perquery must be False, True or 'both'"):
        wh.compare("qrels", ["bm25"], ["AP"], perquery="yes")


def _paired(values, run, baseline, measure):
    pairs = values[[(run, measure), (baseline, measure)]].dropna()
    return pairs[(run, measure)].to_numpy(), pairs[(baseline, measure)].to_numpy()


def test_a_callable_test_gets_the_paired_values(wh, values):
    def sign_test(run, baseline):
        wins, losses = int((run > baseline).sum()), int((run < baseline).sum())
        return wins - losses, scipy_stats.binomtest(wins, wins + losses).pvalue

    frame = wh.compare("qrels", ["bm25", "dense", "night4"], ["AP"], baseline=0, test=sign_test)
    as_t = wh.compare(
        "qrels", ["bm25", "dense", "night4"], ["AP"], baseline=0, test=scipy_stats.ttest_rel
    )
    named_t = wh.compare("qrels", ["bm25", "dense", "night4"], ["AP"], baseline=0, test="t")
    for run in ("dense", "night4"):
        x, y = _paired(values, run, "bm25", "AP")
        wins, losses = int((x > y).sum()), int((x < y).sum())
        expected = scipy_stats.binomtest(wins, wins + losses).pvalue
        assert _row(frame, run, "AP")["p_value"] == pytest.approx(expected, rel=1e-12)
        assert _row(as_t, run, "AP")["p_value"] == _row(named_t, run, "AP")["p_value"]


@pytest.mark.parametrize(
    ("correction", "statsmodels_method"),
    [("hs", "holm-sidak"), ("fdr_bh", "fdr_bh"), ("bh", "fdr_bh"), ("bonf", "bonferroni")],
)
def test_correction_by_statsmodels_names(wh, values, correction, statsmodels_method):
    runs = ["bm25", "dense", "night3", "night4"]
    frame = wh.compare("qrels", runs, MEASURES, baseline="bm25", correction=correction)
    for measure in MEASURES:
        pvalues = [
            scipy_stats.ttest_rel(*_paired(values, run, "bm25", measure)).pvalue for run in runs[1:]
        ]
        reject, corrected, _, _ = multipletests(pvalues, alpha=0.05, method=statsmodels_method)
        rows = [_row(frame, run, measure) for run in runs[1:]]
        assert [r["p_corrected"] for r in rows] == pytest.approx(list(corrected), rel=1e-12)
        assert [r["significant"] for r in rows] == list(reject)


def test_correction_alpha_is_alpha(wh):
    runs = ["bm25", "dense", "night3", "night4"]
    loose = wh.compare("qrels", runs, ["AP"], baseline=0, correction="holm", correction_alpha=0.5)
    same = wh.compare("qrels", runs, ["AP"], baseline=0, correction="holm", alpha=0.5)
    pd.testing.assert_frame_equal(pd.DataFrame(loose), pd.DataFrame(same))
    strict = wh.compare("qrels", runs, ["AP"], baseline=0, correction="holm", alpha=0.001)
    assert loose["significant"].tolist() != strict["significant"].tolist()
    with pytest.raises(RankhouseError, match="disagree"):
        wh.compare("qrels", runs, ["AP"], baseline=0, alpha=0.1, correction_alpha=0.2)


def test_round_and_highlight_shape_the_notebook_table(wh):
    frame = wh.compare("qrels", ["bm25", "dense"], MEASURES, round={"AP": 2}, highlight="colour")
    html = frame._repr_html_()
    cells = re.findall(r'<td(?: class="([^"]*)")?>([^<]*)</td>', html)
    dense = frame.set_index(["run", "measure"])["mean"]
    assert ("best-color", f"{dense[('dense', 'AP')]:.2f}") in cells
    assert ("best-color", f"{dense[('dense', 'nDCG@10')]:.4f}") in cells
    mean = _row(frame, "dense", "AP")["mean"]
    assert mean != round(mean, 2)  # the values themselves are never rounded
    plain = wh.compare("qrels", ["bm25", "dense"], ["AP"], round=3, highlight=None)._repr_html_()
    assert "best-" not in plain and f">{dense[('bm25', 'AP')]:.3f}<" in plain


def test_a_query_subset_is_evaluated_alone(wh, values, tmp_path):
    subset = ["q1", "q3", "q5", "q8", "no-such-query"]
    frame = wh.compare("qrels", ["bm25", "dense"], MEASURES, baseline="bm25", queries=subset)
    kept = ["q1", "q3", "q5", "q8"]
    for measure in MEASURES:
        for run in ("bm25", "dense"):
            row = _row(frame, run, measure)
            assert row["num_q"] == 4
            assert row["mean"] == pytest.approx(values.loc[kept, (run, measure)].mean(), abs=1e-12)
        x = values.loc[kept, ("dense", measure)].to_numpy()
        y = values.loc[kept, ("bm25", measure)].to_numpy()
        row = _row(frame, "dense", measure)
        assert row["p_value"] == pytest.approx(scipy_stats.ttest_rel(x, y).pvalue, rel=1e-12)
        assert row["num_paired"] == 4
    listed = tmp_path / "queries.txt"
    listed.write_text("# the subset\nq1\nq3 first topic\n\nq5\nq8\n")
    from_file = wh.compare("qrels", ["bm25", "dense"], MEASURES, baseline="bm25", queries=listed)
    topics = pd.DataFrame({"qid": kept, "query": ["text"] * 4})  # PyTerrier's topics frame
    from_topics = wh.compare("qrels", ["bm25", "dense"], MEASURES, baseline="bm25", queries=topics)
    for other in (from_file, from_topics):
        pd.testing.assert_frame_equal(pd.DataFrame(other), pd.DataFrame(frame))
    with pytest.raises(InputError, match="none of the 2 queries given is judged"):
        wh.compare("qrels", ["bm25"], ["AP"], queries=["x", "y"])


def test_the_wide_table_has_pyterriers_plus_and_minus_columns(wh, values):
    frame = wh.compare("qrels", ["bm25", "dense"], ["AP"], baseline=0)
    wide = rankhouse.experiment_table(frame)
    assert wide.equals(experiment_table(frame)) and wide.equals(frame.experiment_table())
    assert list(wide.columns) == [
        "run", "AP", "AP low", "AP high", "AP delta", "AP delta low", "AP delta high", "AP g_z",
        "AP +", "AP -", "AP p", "AP p corr", "AP verdict", "AP mde",
    ]  # fmt: skip
    x, y = _paired(values, "dense", "bm25", "AP")
    dense = wide.set_index("run").loc["dense"]
    assert (dense["AP +"], dense["AP -"]) == (int((x > y).sum()), int((x < y).sum()))
    assert pd.isna(wide.set_index("run").loc["bm25", "AP +"])  # the baseline has no count


def test_experiment_without_a_warehouse_file(values):
    runs = {"bm25": RUN_FILES["bm25"], "dense": RUN_FILES["dense"]}
    frame = rankhouse.experiment(QRELS, runs, ["AP"], baseline=0, names=["B", "D"])
    assert frame["run"].tolist() == ["B", "D"]
    x, y = _paired(values, "dense", "bm25", "AP")
    assert _row(frame, "D", "AP")["p_value"] == pytest.approx(
        scipy_stats.ttest_rel(x, y).pvalue, rel=1e-12
    )


# --- the CLI -----------------------------------------------------------------------------


@pytest.fixture
def cli_db(db_path):
    with Warehouse(db_path) as opened:
        opened.ingest_qrels(QRELS, name="qrels")
        for name in ("bm25", "dense"):
            opened.ingest_run(RUN_FILES[name], name=name)
    return db_path


def test_cli_names_queries_and_missing_queries(cli_db, run_cli, tmp_path):
    listed = tmp_path / "q.txt"
    listed.write_text("q1\nq2\nq8\n")
    args = ["compare", "qrels", "bm25", "dense", "-m", "AP", "--baseline", "BM25"]
    done = run_cli(*args, "--names", "BM25,Dense", "--queries", listed, "--wide", "-f", "json")
    assert done.exit_code == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["run"] for r in rows] == ["BM25", "Dense"]
    # the subset's holes are checked too (docs/judgments.md), over the queries each run answers:
    # ir_measures' Judged@10 is 0.1 and 0.3 for dense on q1, q2 (it misses q8), 0.6, 0.4 and 0
    # for bm25 on q1, q2, q8
    assert "AP: Judged@10 of Dense 0.200, of the baseline BM25 0.333" in done.stderr
    with Warehouse(cli_db) as wh, pytest.warns(RankhouseWarning, match="Judged@10 of dense 0.200"):
        expected = wh.compare(
            "qrels", ["bm25", "dense"], ["AP"], baseline=0, queries=["q1", "q2", "q8"]
        )
        skipped = wh.compare("qrels", ["dense"], ["AP"], missing_queries="skip")
    assert rows[1]["AP"] == pytest.approx(_row(expected, "dense", "AP")["mean"], abs=1e-15)
    assert rows[1]["AP p"] == pytest.approx(_row(expected, "dense", "AP")["p_value"], abs=1e-15)
    # dense answers 7 of the 8 queries: skipping the missing one raises its mean
    done = run_cli(
        "compare", "qrels", "dense", "-m", "AP", "--missing-queries", "skip", "--wide", "-f", "json"
    )
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)[0]["AP [missing_queries=skip]"] == pytest.approx(
        skipped["mean"].iloc[0], abs=1e-15
    )
    assert skipped["num_q"].iloc[0] == 7
    bad = run_cli("compare", "qrels", "bm25", "-m", "AP", "--names", "a,b")
    assert bad.exit_code == 1 and bad.stderr.startswith("Error: 2 names for 1 run ")


def test_cli_per_query_round_highlight_and_correction(cli_db, run_cli):
    base = ["compare", "qrels", "bm25", "dense", "-m", "AP", "-m", "nDCG@10", "--baseline", "bm25"]
    per_query = run_cli(*base, "--per-query", "-f", "csv")
    assert per_query.exit_code == 0, per_query.stderr
    lines = per_query.stdout.splitlines()
    assert lines[0] == "run,query,measure,value" and len(lines) == 1 + 2 * 8 * 2
    # --round shapes the table; the machine formats keep every digit (docs/cli.md)
    rounded = run_cli(*base, "--round", "2", "--round", "AP=3", "--wide")
    assert rounded.exit_code == 0, rounded.stderr
    table = [
        [cell.strip() for cell in line.split("│")]
        for line in rounded.stdout.splitlines()
        if "│" in line or "┃" in line
    ]
    table[0] = [cell.strip() for cell in rounded.stdout.splitlines()[1].split("┃")]
    header, bm25 = table[0], next(row for row in table if row[0] == "bm25")
    assert re.fullmatch(r"0\.\d{3}", bm25[header.index("AP")])
    assert re.fullmatch(r"0\.\d{2}", bm25[header.index("nDCG@10")])
    exact = run_cli(*base, "--round", "2", "--wide", "-f", "tsv")
    header, bm25, dense = (line.split("\t") for line in exact.stdout.splitlines())
    assert len(bm25[header.index("AP")]) > 6  # more digits than --round shows
    coloured = run_cli(*base, "--correction", "holm-sidak", "--wide", env={"FORCE_COLOR": "1"})
    assert coloured.exit_code == 0, coloured.stderr
    with Warehouse(cli_db) as wh:
        best = wh.compare("qrels", ["dense"], ["AP"])["mean"].iloc[0]
    assert f"\x1b[1m{best:.4f}\x1b[0m" in coloured.stdout  # the best mean in bold
    plain = run_cli(*base, "--highlight", "none", "--wide", env={"FORCE_COLOR": "1"})
    assert f"\x1b[1m{best:.4f}" not in plain.stdout
    bad = run_cli(*base, "--correction", "nope")
    assert bad.exit_code == 1 and "unknown correction 'nope'" in bad.stderr
    assert math.isfinite(float(dense[header.index("AP p")]))
    assert np.isclose(float(dense[header.index("AP")]), best, atol=0.0005)
