"""Many runs at once (``Warehouse.all_pairs``, ``compare --all-pairs``) on DL19: the ANOVA
table against statsmodels, paired tests with Holm or BH against scipy and statsmodels, the
randomised Tukey HSD against a brute-force enumeration written here, the letters against
their definition, and the runs x queries matrix against a hand-made case."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats
from series_helpers import make_runs, qrels_path
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multitest import multipletests

from rankhouse import RankhouseError, Warehouse
from rankhouse.columns import ANOVA_COLUMNS, GROUP_COLUMNS, PAIR_COLUMNS
from rankhouse.compare import AllPairs
from rankhouse.evaluation import PerQueryValues
from rankhouse.pairing import value_matrix

RUNS = ["night-1", "night-2", "better", "splade"]
MEASURES = ["nDCG@10", "AP"]


@pytest.fixture(scope="module")
def loaded(shared_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("pairs")
    files = make_runs(shared_dir, folder / "runs")
    path = folder / "w.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(qrels_path(shared_dir), name="dl19")
        for name in RUNS:
            wh.ingest_run(files[name], name=name)
        matrices = {}
        values = wh.evaluate("dl19", RUNS, MEASURES).per_query
        for measure in MEASURES:
            wide = values[values["measure"] == measure].pivot(
                index="run", columns="query", values="value"
            )
            matrices[measure] = wide.loc[RUNS]
        yield wh, matrices, path


def test_value_matrix_keeps_the_queries_every_run_has_in_byte_order():
    nan = math.nan
    table = [
        ("a", "10", 0.1), ("a", "9", 0.2), ("a", "B", 0.3), ("a", "x", 0.4),
        ("b", "9", 0.5), ("b", "10", 0.6), ("b", "B", nan), ("b", "x", 0.7), ("b", "y", 0.8),
        ("c", "x", 0.9), ("c", "10", 1.0), ("c", "9", 1.1), ("c", "B", 1.2),
    ]  # fmt: skip
    values = PerQueryValues()
    for run, query, value in table:
        values.run.append(run)
        values.query.append(query)
        values.measure.append("AP")
        values.value.append(value)
    queries, matrix = value_matrix(values, "AP", ["c", "a", "b"])
    # B is NaN for b, y is b's alone: 10, 9, x remain, in byte order
    assert queries == ["10", "9", "x"]
    assert matrix.tolist() == [[1.0, 1.1, 0.9], [0.1, 0.2, 0.4], [0.6, 0.5, 0.7]]


def test_the_anova_table_is_statsmodels(loaded):
    wh, matrices, _ = loaded
    found = wh.all_pairs("dl19", RUNS, MEASURES, permutations=200)
    assert isinstance(found, AllPairs)
    assert list(found.anova.columns) == list(ANOVA_COLUMNS)
    for measure in MEASURES:
        long = matrices[measure].stack().rename("score").reset_index()
        long.columns = ["system", "query", "score"]
        expected = anova_lm(ols("score ~ C(system) + C(query)", long).fit())
        got = found.anova[found.anova["measure"] == measure].set_index("source")
        for source, name in (
            ("system", "C(system)"),
            ("query", "C(query)"),
            ("residual", "Residual"),
        ):
            assert got.at[source, "sum_of_squares"] == pytest.approx(expected.at[name, "sum_sq"])
            assert got.at[source, "df"] == expected.at[name, "df"]
        assert got.at["system", "f"] == pytest.approx(expected.at["C(system)", "F"], rel=1e-9)
        assert got.at["system", "p_value"] == pytest.approx(
            expected.at["C(system)", "PR(>F)"], rel=1e-9
        )


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_paired_t_tests_with_a_correction_are_scipy_and_statsmodels(loaded, correction):
    wh, matrices, _ = loaded
    found = wh.all_pairs("dl19", RUNS, MEASURES, test="t", correction=correction)
    assert list(found.pairs.columns) == list(PAIR_COLUMNS)
    for measure in MEASURES:
        matrix = matrices[measure]
        pairs = list(itertools.combinations(RUNS, 2))
        raw = [scipy_stats.ttest_rel(matrix.loc[a], matrix.loc[b]).pvalue for a, b in pairs]
        method = {"holm": "holm", "bh": "fdr_bh"}[correction]
        expected = multipletests(raw, alpha=0.05, method=method)[1]
        got = found.pairs[found.pairs["measure"] == measure]
        assert list(zip(got["run"], got["other"], strict=True)) == pairs
        assert got["p_value"].tolist() == pytest.approx(list(expected), rel=1e-9)
        assert got["difference"].tolist() == pytest.approx(
            [matrix.loc[a].mean() - matrix.loc[b].mean() for a, b in pairs], abs=1e-12
        )
        assert got["significant"].tolist() == [p <= 0.05 for p in expected]
        differences = found.differences(measure)
        assert differences.at["better", "night-1"] == pytest.approx(
            matrix.loc["better"].mean() - matrix.loc["night-1"].mean(), abs=1e-12
        )
        p_values = found.p_values(measure)
        assert p_values.at["night-1", "better"] == p_values.at["better", "night-1"]
        assert (np.diag(p_values.to_numpy()) == 1.0).all()
    method = {"holm": "holm", "bh": "fdr_bh"}[correction]  # statsmodels' name
    assert found.pairs["method"].unique().tolist() == [f"t, {method}"]


def _exact_tukey(matrix: np.ndarray) -> dict[tuple[int, int], float]:
    """Randomised Tukey HSD by brute force: every arrangement of each query's values across
    the systems, the range of the system means under each, and for each pair the share of
    ranges at least its observed difference (Carterette 2012, enumerated)."""
    systems, queries = matrix.shape
    orders = list(itertools.permutations(range(systems)))
    ranges = []
    for arrangement in itertools.product(orders, repeat=queries):
        shuffled = np.array([matrix[list(order), j] for j, order in enumerate(arrangement)]).T
        means = shuffled.mean(axis=1)
        ranges.append(means.max() - means.min())
    ranges = np.array(ranges)
    means = matrix.mean(axis=1)
    found = {}
    for i, j in itertools.combinations(range(systems), 2):
        observed = abs(means[i] - means[j])
        found[i, j] = float(np.mean(ranges >= observed - 1e-12))
    return found


def test_randomised_tukey_hsd_is_the_enumeration_by_hand(loaded):
    """Three runs over five queries: 6^5 = 7,776 arrangements, fewer than the permutations
    asked for, so every one is enumerated and the p-values are exact."""
    wh, matrices, _ = loaded
    three = ["night-1", "night-2", "better"]
    queries = sorted(matrices["AP"].columns)[:5]
    found = wh.all_pairs("dl19", three, ["AP"], queries=queries, permutations=10_000)
    matrix = matrices["AP"].loc[three, queries].to_numpy()
    expected = _exact_tukey(matrix)
    got = found.pairs
    for (i, j), p in expected.items():
        row = got[(got["run"] == three[i]) & (got["other"] == three[j])].iloc[0]
        assert row["p_value"] == pytest.approx(p, abs=1e-12), (three[i], three[j])
    assert got["method"].unique().tolist() == ["randomised tukey hsd"]
    assert got["permutations"].unique().tolist() == [7776] and got["seed"].isna().all()


def test_sampled_tukey_is_seeded_and_near_the_exact_p_values(loaded):
    wh, matrices, _ = loaded
    one = wh.all_pairs("dl19", RUNS, ["AP"], permutations=2000, seed=3)
    again = wh.all_pairs("dl19", RUNS, ["AP"], permutations=2000, seed=3)
    other = wh.all_pairs("dl19", RUNS, ["AP"], permutations=2000, seed=4)
    assert one.pairs["p_value"].tolist() == again.pairs["p_value"].tolist()
    assert one.pairs["p_value"].tolist() != other.pairs["p_value"].tolist()
    assert one.pairs["permutations"].unique().tolist() == [2000]
    assert one.pairs["seed"].unique().tolist() == [3]
    # within sampling error of each other: 4 standard errors of a Monte Carlo p-value
    for p, q in zip(one.pairs["p_value"], other.pairs["p_value"], strict=True):
        assert abs(p - q) <= 4 * math.sqrt(2 * max(p * (1 - p), 1e-4) / 2000) + 1e-3


def test_letters_share_exactly_when_a_pair_is_not_separable(loaded):
    wh, matrices, _ = loaded
    found = wh.all_pairs("dl19", RUNS, MEASURES, test="t", correction="holm")
    assert list(found.groups.columns) == list(GROUP_COLUMNS)
    for measure in MEASURES:
        groups = found.groups[found.groups["measure"] == measure]
        means = matrices[measure].mean(axis=1)
        assert groups["run"].tolist() == means.sort_values(ascending=False).index.tolist()
        letters = dict(zip(groups["run"], groups["group"], strict=True))
        for row in found.pairs[found.pairs["measure"] == measure].itertuples():
            shared = bool(set(letters[row.run]) & set(letters[row.other]))
            assert shared == (not row.significant), (row.run, row.other)
        intervals = groups.set_index("run")
        for run in RUNS:
            expected = scipy_stats.ttest_1samp(matrices[measure].loc[run], 0).confidence_interval()
            assert intervals.at[run, "mean_low"] == pytest.approx(expected.low, rel=1e-12)
            assert intervals.at[run, "mean_high"] == pytest.approx(expected.high, rel=1e-12)


def test_counts_are_left_out_with_the_reason(loaded):
    wh, _, _ = loaded
    found = wh.all_pairs("dl19", RUNS, ["AP", "num_rel"], test="t")
    assert [m.measure for m in found.measures] == ["AP"]
    assert "NumRel is a count" in found.skipped["NumRel"]
    with pytest.raises(RankhouseError, match="no measure can be compared across all pairs"):
        wh.all_pairs("dl19", RUNS, ["num_rel"])


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"correction": "holm"}, "the randomised Tukey HSD controls the family-wise error"),
        ({"test": "z"}, "unknown test"),
        ({"test": "t", "correction": "nope"}, "unknown correction"),
    ],
)
def test_bad_settings_are_refused(loaded, settings, message):
    wh, _, _ = loaded
    with pytest.raises(RankhouseError, match=message):
        wh.all_pairs("dl19", RUNS, ["AP"], **settings)


def test_one_run_is_refused(loaded):
    wh, _, _ = loaded
    with pytest.raises(RankhouseError, match="all pairs needs at least two runs, got 1"):
        wh.all_pairs("dl19", ["better"], ["AP"])


def test_the_notebook_shows_the_three_tables(loaded):
    wh, _, _ = loaded
    html = wh.all_pairs("dl19", RUNS, ["AP"], permutations=500)._repr_html_()
    assert html.count("<table") == 3
    assert "two-way ANOVA" in html and "row minus column" in html and "<th>group</th>" in html


def test_cli_all_pairs(loaded, run_cli):
    _, _, path = loaded
    base = ["--db", path, "compare", "dl19", *RUNS, "-m", "AP", "--all-pairs"]
    table = run_cli(*base, "--permutations", "500", db=False)
    assert table.exit_code == 0, table.stderr
    assert "AP: 4 runs x 43 queries, two-way ANOVA" in table.stdout
    assert "row minus column (p: randomised Tukey HSD, 500 permutations, seed 42)" in table.stdout
    assert "groups at alpha 0.05: runs sharing a letter cannot be told apart" in table.stdout
    document = json.loads(run_cli(*base, "--test", "t", "-f", "json", db=False).stdout)
    assert set(document) == {"alpha", "level", "interval", "anova", "pairs", "groups"}
    assert len(document["pairs"]) == 6 and document["pairs"][0]["method"] == "t, holm"
    csv = run_cli(*base, "--test", "wilcoxon", "--correction", "bh", "-f", "csv", db=False)
    frame = pd.read_csv(pd.io.common.StringIO(csv.stdout))
    assert list(frame.columns) == list(PAIR_COLUMNS) and len(frame) == 6
    for args, message in [
        (["--correction", "holm"], "controls the family-wise error itself: give no --correction"),
        (["--baseline", "better"], "give no baseline"),
        (["--wide"], "--all-pairs prints its own tables"),
    ]:
        bad = run_cli(*base, *args, db=False)
        assert bad.exit_code == 1 and message in bad.stderr, bad.stderr
    tukey = run_cli("--db", path, "compare", "dl19", *RUNS, "-m", "AP", "--test", "tukey", db=False)
    assert tukey.exit_code == 1 and "use compare --all-pairs" in tukey.stderr
