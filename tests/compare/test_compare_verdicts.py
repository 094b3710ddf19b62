"""compare's intervals, effect sizes and verdicts on DL19: every number from scipy, statsmodels,
pingouin or hand computation over the per-query values that evaluate returns, never from
rankhouse's statistics.

* the interval of a mean: ``scipy.stats.ttest_1samp(values, 0).confidence_interval(level)``;
* the interval of a paired difference: ``scipy.stats.ttest_rel(run, baseline)
  .confidence_interval(level)``, or ``scipy.stats.bootstrap`` (percentile, same seed);
* Hedges' g_z: pingouin's one-sample Hedges g of the differences;
* the verdict: the rules of docs/compare.md applied by hand to scipy's p-value (corrected by
  statsmodels' ``multipletests``), with statsmodels' two one-sided tests (``ttost_paired``)
  for equivalence; the minimum detectable effect: statsmodels' ``TTestPower``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pingouin
import pytest
from scipy import stats as scipy_stats
from series_helpers import make_runs, qrels_path
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower
from statsmodels.stats.weightstats import ttost_paired

import rankhouse
from rankhouse import RankhouseError, Warehouse
from rankhouse.compare import COLUMNS

BASELINE = "night-2"
RUNS = ["better", "night-3", "noisy-worse", "slightly-worse", "copy"]
MEASURES = ["nDCG@10", "AP"]


@pytest.fixture(scope="module")
def files(shared_dir, tmp_path_factory):
    return make_runs(shared_dir, tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def wh(shared_dir, files, tmp_path_factory):
    folder = tmp_path_factory.mktemp("verdicts")
    with Warehouse(folder / "w.duckdb") as opened:
        opened.ingest_qrels(qrels_path(shared_dir), name="dl19")
        for name in [BASELINE, *RUNS]:
            opened.ingest_run(files[name], name=name)
        yield opened


@pytest.fixture(scope="module")
def per_query(wh) -> pd.DataFrame:
    """query x (run, measure) values, as evaluate returns them."""
    values = wh.evaluate("dl19", [BASELINE, *RUNS], MEASURES + ["Unj@10"]).per_query
    return values.pivot_table(index="query", columns=["run", "measure"], values="value")


def _pairs(per_query, run, measure):
    both = per_query[[(run, measure), (BASELINE, measure)]].dropna()
    return both[(run, measure)].to_numpy(), both[(BASELINE, measure)].to_numpy()


def _expected_word(x, y, p_corrected, *, alpha=0.05, margin=None, direction=1):
    """docs/compare.md's rules, by hand."""
    d = x - y
    gain = direction * d.mean()
    significant = p_corrected <= alpha
    if significant and gain != 0:
        word = "better" if gain > 0 else "worse"
        if margin is None:
            return word
        low, high = scipy_stats.ttest_rel(x, y).confidence_interval(1 - alpha)
        low, high = sorted((direction * low, direction * high))
        if (gain > 0 and low >= margin) or (gain < 0 and high <= -margin):
            return word
    if margin is not None:
        p_tost = ttost_paired(x, y, -margin, margin)[0]
        if p_tost <= alpha:
            return "equivalent"
    return "inconclusive"


def test_the_columns_are_the_documented_ones(wh):
    frame = wh.compare("dl19", RUNS, MEASURES, baseline=BASELINE)
    assert list(frame.columns) == list(COLUMNS)
    assert frame["verdict"].dtype == object and frame["hedges_gz"].dtype == float


@pytest.mark.parametrize("level", [0.95, 0.9])
def test_t_intervals_are_scipys(wh, per_query, level):
    frame = wh.compare("dl19", RUNS, MEASURES, baseline=BASELINE, level=level)
    for row in frame.itertuples():
        values = per_query[(row.run, row.measure)].dropna().to_numpy()
        mean = scipy_stats.ttest_1samp(values, 0).confidence_interval(level)
        assert row.mean_low == pytest.approx(mean.low, rel=1e-12)
        assert row.mean_high == pytest.approx(mean.high, rel=1e-12)
        if row.run == BASELINE:
            assert math.isnan(row.delta_low) and row.verdict is None
            continue
        x, y = _pairs(per_query, row.run, row.measure)
        if row.run == "copy":  # every difference 0: an interval of width 0
            assert (row.delta_low, row.delta_high) == (0.0, 0.0)
            continue
        difference = scipy_stats.ttest_rel(x, y).confidence_interval(level)
        assert row.delta_low == pytest.approx(difference.low, rel=1e-12)
        assert row.delta_high == pytest.approx(difference.high, rel=1e-12)
        # the midpoint is the difference of the means: every query is in both runs
        assert (row.delta_low + row.delta_high) / 2 == pytest.approx(row.delta, abs=1e-12)


def test_bootstrap_intervals_are_scipys_with_the_same_seed(wh, per_query):
    frame = wh.compare(
        "dl19", ["better"], ["AP"], baseline=BASELINE, interval="bootstrap",
        permutations=2000, seed=7,
    )  # fmt: skip
    row = frame.set_index("run").loc["better"]
    x, y = _pairs(per_query, "better", "AP")
    expected = scipy_stats.bootstrap(
        (x - y,),
        np.mean,
        confidence_level=0.95,
        n_resamples=2000,
        method="percentile",
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert row["delta_low"] == pytest.approx(expected.low, rel=1e-12)
    assert row["delta_high"] == pytest.approx(expected.high, rel=1e-12)
    base = frame.set_index("run").loc[BASELINE]
    mean = scipy_stats.bootstrap(
        (y,), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(7)
    ).confidence_interval
    assert (base["mean_low"], base["mean_high"]) == pytest.approx((mean.low, mean.high))


def test_hedges_gz_is_pingouins(wh, per_query):
    frame = wh.compare("dl19", RUNS, MEASURES, baseline=BASELINE)
    for row in frame[~frame["run"].isin([BASELINE, "copy"])].itertuples():
        x, y = _pairs(per_query, row.run, row.measure)
        expected = pingouin.compute_effsize(x - y, 0, eftype="hedges")
        assert row.hedges_gz == pytest.approx(expected, rel=1e-9)
        # and by hand: d_z = mean / sd, times J = 1 - 3 / (4 (n - 1) - 1)
        d = x - y
        by_hand = d.mean() / d.std(ddof=1) * (1 - 3 / (4 * (len(d) - 1) - 1))
        assert row.hedges_gz == pytest.approx(by_hand, rel=1e-9)


@pytest.mark.parametrize("correction", ["none", "holm"])
def test_verdicts_follow_the_rules_by_hand(wh, per_query, correction):
    frame = wh.compare("dl19", RUNS, MEASURES, baseline=BASELINE, correction=correction)
    for measure in MEASURES:
        rows = frame[(frame["measure"] == measure) & (frame["run"] != BASELINE)]
        raw = [scipy_stats.ttest_rel(*_pairs(per_query, r, measure)).pvalue for r in rows["run"]]
        raw = [1.0 if math.isnan(p) else p for p in raw]  # copy: no difference at all
        corrected = raw if correction == "none" else multipletests(raw, method="holm")[1]
        for row, p in zip(rows.itertuples(), corrected, strict=True):
            x, y = _pairs(per_query, row.run, measure)
            assert row.verdict == _expected_word(x, y, p), (row.run, measure)
    if correction == "none":
        words = frame.set_index(["run", "measure"])["verdict"]
        assert words[("better", "nDCG@10")] == "better"
        assert words[("night-3", "AP")] == "worse"
        # a drop of 0.024 that is not significant is never "worse", and never "improved"
        assert words[("noisy-worse", "nDCG@10")] == "inconclusive"


def test_the_minimum_detectable_effect_is_statsmodels(wh, per_query):
    frame = wh.compare("dl19", ["noisy-worse"], ["nDCG@10"], baseline=BASELINE)
    row = frame.set_index("run").loc["noisy-worse"]
    x, y = _pairs(per_query, "noisy-worse", "nDCG@10")
    effect = TTestPower().solve_power(
        effect_size=None, nobs=len(x), alpha=0.05, power=0.8, alternative="two-sided"
    )
    assert row["mde"] == pytest.approx(effect * np.std(x - y, ddof=1), rel=1e-5)
    assert abs(row["delta"]) < row["mde"]  # a drop smaller than the queries can show


# statsmodels divides by the zero spread of "copy"'s differences (its p-value is still right)
@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("margin", [0.02, "5%", {"nDCG@10": 0.02, "map": "5%"}])
def test_margins_absolute_relative_and_per_measure(wh, per_query, margin):
    frame = wh.compare("dl19", RUNS, MEASURES, baseline=BASELINE, margin=margin)
    base = frame[frame["run"] == BASELINE].set_index("measure")["mean"]
    for row in frame[frame["run"] != BASELINE].itertuples():
        key = {"AP": "map"}.get(row.measure, row.measure)  # a dict may name any spelling
        given = margin[key] if isinstance(margin, dict) else margin
        expected = 0.05 * base[row.measure] if given == "5%" else given
        assert row.margin == pytest.approx(expected, rel=1e-15)
        x, y = _pairs(per_query, row.run, row.measure)
        p = scipy_stats.ttest_rel(x, y).pvalue
        p = 1.0 if math.isnan(p) else p
        assert row.verdict == _expected_word(x, y, p, margin=expected), (row.run, row.measure)
    words = frame.set_index(["run", "measure"])["verdict"]
    assert words[("copy", "AP")] == "equivalent"  # identical rankings: inside any margin


def test_lower_is_better_turns_the_words(wh, per_query):
    """Unj@10 (the share of unjudged documents) is better lower: a significant rise is worse."""
    frame = wh.compare("dl19", ["night-3", "better"], ["Unj@10"], baseline=BASELINE)
    for row in frame[frame["run"] != BASELINE].itertuples():
        x, y = _pairs(per_query, row.run, "Unj@10")
        p = scipy_stats.ttest_rel(x, y).pvalue
        assert row.verdict == _expected_word(x, y, p, direction=-1)


def test_sums_geometric_means_and_counts_get_no_interval_or_verdict(wh):
    frame = wh.compare("dl19", ["better"], ["num_rel_ret", "gm_map"], baseline=BASELINE)
    tested = frame[frame["run"] == "better"]
    assert tested["verdict"].isna().all()
    for name in ("mean_low", "delta_low", "delta_high", "hedges_gz", "mde"):
        assert tested[name].isna().all(), name
    assert tested["p_value"].notna().all()  # the test itself still runs


def test_no_verdict_without_a_baseline_or_at_alpha_one_half(wh):
    means = wh.compare("dl19", RUNS, MEASURES)
    assert means["verdict"].isna().all() and means["mean_low"].notna().all()
    loose = wh.compare("dl19", ["better"], ["AP"], baseline=BASELINE, alpha=0.5)
    assert loose["verdict"].isna().all() and loose["significant"].iloc[1]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"level": 1.0}, "level must lie strictly between 0 and 1"),
        ({"interval": "normal"}, "interval must be one of t, bootstrap"),
        ({"margin": -0.1}, "margin -0.1 is neither a number at least 0 nor a percentage"),
        ({"margin": "x%"}, "is neither a number at least 0 nor a percentage"),
        ({"margin": {"P@10": 0.1}}, "the margin of 'P@10' names none of the measures compared"),
        ({"test": "tukey"}, "use Warehouse.all_pairs"),
    ],
)
def test_bad_settings_are_refused(wh, settings, message):
    with pytest.raises(RankhouseError, match=message.replace("(", r"\(")):
        wh.compare("dl19", ["better"], MEASURES, baseline=BASELINE, **settings)


def test_experiment_without_a_warehouse_file_takes_the_same_settings(shared_dir, files, per_query):
    runs = {name: files[name] for name in (BASELINE, "better")}
    frame = rankhouse.experiment(
        qrels_path(shared_dir), runs, ["AP"], baseline=0, level=0.9, margin="1%"
    ).set_index("run")
    x, y = _pairs(per_query, "better", "AP")
    low, high = scipy_stats.ttest_rel(x, y).confidence_interval(0.9)
    assert (frame.at["better", "delta_low"], frame.at["better", "delta_high"]) == pytest.approx(
        (low, high), rel=1e-12
    )
    assert frame.at["better", "margin"] == pytest.approx(0.01 * y.mean(), rel=1e-12)
