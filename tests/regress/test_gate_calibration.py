"""The calibrated gate: its arithmetic against statsmodels' power function and hand
computation, the night-to-night spread pooled from a system's passed nights, the pinned
reference that holds a lasting drop until it is accepted, percent margins of the reference,
the significance mode's direction and correction, and the words of each outcome.

Runs are built so that every per-query value is known: ten queries, each with one relevant
document ``r`` and one judged non-relevant ``n``; a run ranks ``r`` first (RR 1) or, on the
queries it *demotes*, second (RR 0.5), and may put an unjudged document ``u`` on top of the
queries it *buries* (Unj@2 0.5 there, else 0).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from statement_helpers import record_statements
from statsmodels.stats.power import TTestPower

from rankhouse.regress import NoBaselineError
from rankhouse.regress.baselines import reference_pool
from rankhouse.regress.verdicts import MIN_NIGHTS
from rankhouse.stats.verdicts import calibrated_margin, detectable_drop, gate_fail_rate

QUERIES = [f"q{i:02d}" for i in range(1, 11)]


# The arithmetic ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [5, 10, 43, 200, 6980])
@pytest.mark.parametrize("sd", [0.04, 0.08, 0.14])
@pytest.mark.parametrize("false_alarm", [0.005, 0.01, 0.05])
def test_calibrated_margin_fails_an_unchanged_night_at_the_target(n, sd, false_alarm):
    margin = calibrated_margin(sd, n, alpha=0.05, false_alarm=false_alarm)
    # statsmodels: the power of the one-sided t-test of H0 mean <= -margin at effect size
    # margin / sd is the share of unchanged nights that pass
    power = TTestPower().power(effect_size=margin / sd, nobs=n, alpha=0.05, alternative="larger")
    assert 1 - power == pytest.approx(false_alarm, abs=1e-10)
    assert gate_fail_rate(0.0, margin, sd, n, alpha=0.05) == pytest.approx(false_alarm, abs=1e-12)


@pytest.mark.parametrize("n", [10, 43, 6980])
def test_detectable_drop_is_failed_80_percent_of_the_time(n):
    sd = 0.08
    margin = calibrated_margin(sd, n, alpha=0.05, false_alarm=0.005)
    drop = detectable_drop(margin, sd, n, alpha=0.05)
    power = TTestPower().power(
        effect_size=(margin - drop) / sd, nobs=n, alpha=0.05, alternative="larger"
    )
    assert 1 - power == pytest.approx(0.8, abs=1e-10)
    if n == 6980:  # by hand, normal quantiles: z_0.995 + z_0.8 = 2.5758 + 0.8416 = 3.4174
        assert drop / (sd / math.sqrt(n)) == pytest.approx(3.4174, abs=0.002)


def test_a_margin_too_narrow_for_the_queries_fails_most_unchanged_nights():
    # the figure: 43 queries, s_d 0.08, margin 0.01: about 80 % of unchanged nights
    power = TTestPower().power(effect_size=0.01 / 0.08, nobs=43, alpha=0.05, alternative="larger")
    assert gate_fail_rate(0.0, 0.01, 0.08, 43, alpha=0.05) == pytest.approx(1 - power, abs=1e-10)
    # by hand, the normal approximation: P(Z < 1.645 - 0.01 / (0.08 / sqrt(43))) = 0.798
    assert gate_fail_rate(0.0, 0.01, 0.08, 43, alpha=0.05) == pytest.approx(0.798, abs=0.01)


def test_holm_is_statsmodels_holm():
    """The gate's default correction, computed without statsmodels, is statsmodels' own."""
    from statsmodels.stats.multitest import multipletests

    from rankhouse.stats import correct

    rng = np.random.default_rng(7)
    for size in (1, 2, 3, 5, 12):
        for _ in range(8):  # statsmodels takes 60 ms a call here: 40 cases, ties in each
            p = rng.uniform(0, 0.2, size)
            p[rng.integers(0, size)] = p[0]  # ties
            reject, adjusted, _, _ = multipletests(p, alpha=0.05, method="holm")
            corrected, flags = correct(list(p), "holm", alpha=0.05)
            assert corrected == pytest.approx(list(adjusted), abs=1e-15)
            assert flags == list(reject)
    assert correct([0.01, float("nan"), 0.04], "holm") == (
        [0.02, pytest.approx(float("nan"), nan_ok=True), 0.04],
        [True, False, True],
    )


def test_a_system_that_never_varies():
    assert calibrated_margin(0.0, 43, alpha=0.05, false_alarm=0.01) == 0.0
    assert gate_fail_rate(0.0, 0.01, 0.0, 43, alpha=0.05) == 0.0
    assert gate_fail_rate(0.02, 0.01, 0.0, 43, alpha=0.05) == 1.0
    assert math.isnan(calibrated_margin(0.08, 1, alpha=0.05, false_alarm=0.01))


# A warehouse of nights ----------------------------------------------------------------


def _qrels(path: Path) -> Path:
    path.write_text("".join(f"{q} 0 r 1\n{q} 0 n 0\n" for q in QUERIES))
    return path


def _run(folder: Path, name: str, demoted=(), buried=(), tag: str = "sys") -> Path:
    salt = sum(map(ord, name)) / 1e6  # each file its own content
    lines = []
    for q in QUERIES:
        ranking = ["n", "r"] if q in demoted else ["r", "n"]
        if q in buried:
            ranking = ["u", *ranking]
        lines += [f"{q} Q0 {d} {i} {9 - i + salt} {tag}" for i, d in enumerate(ranking, 1)]
    path = folder / f"{name}.run"
    path.write_text("\n".join(lines) + "\n")
    return path


def _rr(demoted=()) -> np.ndarray:
    return np.array([0.5 if q in demoted else 1.0 for q in QUERIES])


@pytest.fixture
def wh(any_warehouse, tmp_path):
    """A DuckDB file, and a PostgreSQL schema where a server is given."""
    any_warehouse.ingest_qrels(_qrels(tmp_path / "qrels.txt"), name="q")
    return any_warehouse


def _night(wh, tmp_path, name, demoted=(), commit=None, **options):
    meta = {"commit": commit} if commit else None
    wh.ingest_run(_run(tmp_path, name, demoted), name=name, meta=meta)
    options = {"measures": ["RR"], "allow_missing_baseline": True, **options}
    return wh.regress(name, baseline="reference", qrels="q", **options)


NIGHTS = [(), ("q01",), ("q02",), ("q01", "q02"), (), ("q03",)]


def _pooled_sd(pairs) -> float:
    """By hand: the squares of each pair's differences about the pair's mean, pooled."""
    squares = sum(float(np.sum((d - d.mean()) ** 2)) for d in pairs)
    return math.sqrt(squares / sum(len(d) - 1 for d in pairs))


def test_margins_calibrate_from_the_nights_that_passed(wh, tmp_path):
    results = [
        _night(wh, tmp_path, f"n{i}", demoted, max_drop=1.0)  # every night passes
        for i, demoted in enumerate(NIGHTS, 1)
    ]
    assert results[0].outcome == "first" and results[0].baseline is None
    assert all(r.outcome == "passed" and r.baseline == "n1" for r in results[1:])
    tonight = _night(wh, tmp_path, "n7", ("q04",))
    row = tonight.verdict_rows[0]
    values = [_rr(d) for d in NIGHTS]
    sd = _pooled_sd([b - a for a, b in zip(values, values[1:], strict=False)])
    # the reference: n1 pooled with the four nights that passed against it first (n2-n5),
    # per query; against the mean of five nights the differences spread sqrt(0.6) s_d
    assert tonight.settings["reference_pool"] == ["n1", "n2", "n3", "n4", "n5"]
    pooled = np.mean(values[:5], axis=0)
    d = _rr(("q04",)) - pooled
    assert row["baseline_value"] == pytest.approx(pooled.mean(), rel=1e-12)
    assert row["delta"] == pytest.approx(d.mean(), abs=1e-12)
    ninety = stats.ttest_1samp(d, 0).confidence_interval(0.90)
    assert row["bound"] == pytest.approx(ninety.low, abs=1e-12)
    spread = sd * math.sqrt((1 + 1 / 5) / 2)
    assert (row["margin_source"], row["spread_nights"]) == ("calibrated", MIN_NIGHTS)
    assert row["spread"] == pytest.approx(spread, rel=1e-12)
    # one measure: it has the whole 1 % target
    assert row["margin"] == pytest.approx(
        calibrated_margin(spread, 10, alpha=0.05, false_alarm=0.01), rel=1e-12
    )
    assert row["false_alarm"] == pytest.approx(0.01, abs=1e-9)
    assert row["detectable_drop"] == pytest.approx(
        detectable_drop(row["margin"], spread, 10, alpha=0.05), rel=1e-12
    )
    assert any(line.startswith("RR: margin ") and "calibrated from 5" in line
               for line in tonight.meaning)  # fmt: skip
    assert not tonight.calibrating
    # queryable in SQL, with the system and the night
    with wh.connect() as conn:
        stored = conn.execute(
            "SELECT margin_source, spread, spread_nights FROM gate_calibration "
            "WHERE run_name = 'n7'"
        ).one()
    assert tuple(stored) == ("calibrated", pytest.approx(spread), 5)


def test_a_failed_night_breaks_the_chain_and_the_gate_says_it_is_calibrating(wh, tmp_path):
    for i, demoted in enumerate(NIGHTS, 1):
        # night 4 fails: a margin of 0 cannot be shown for a drop of 0.1
        result = _night(wh, tmp_path, f"n{i}", demoted, max_drop=0.0 if i == 4 else 1.0)
        assert result.passed is (i != 4)
    tonight = _night(wh, tmp_path, "n7", ("q04",))
    row = tonight.verdict_rows[0]
    # pairs 1-2 and 2-3 and 5-6: three, fewer than five
    assert (row["margin_source"], row["spread_nights"]) == ("tonight", 0)
    # tonight against the pool of n1 and the nights that passed against it (n2, n3; n4
    # failed, n5 and n6 come after it and join too, up to five nights)
    pool = [_rr(NIGHTS[i]) for i in (0, 1, 2, 4, 5)]
    assert tonight.settings["reference_pool"] == ["n1", "n2", "n3", "n5", "n6"]
    d = _rr(("q04",)) - np.mean(pool, axis=0)
    assert row["spread"] == pytest.approx(np.std(d, ddof=1), rel=1e-12)
    # calibrating: the one-sided t-test of a drop at 1 %: margin = s / sqrt(n) (t_0.95 +
    # t_0.99) with 9 degrees of freedom (scipy's quantiles)
    assert row["margin"] == pytest.approx(
        np.std(d, ddof=1) / math.sqrt(10) * (stats.t.ppf(0.95, 9) + stats.t.ppf(0.99, 9)),
        rel=1e-12,
    )
    assert row["false_alarm"] == 0.01
    assert tonight.calibrating
    assert any(f"calibrating: 3 of {MIN_NIGHTS} nightly differences" in n for n in tonight.notes)


def test_replicates_of_one_commit_count(wh, tmp_path):
    # the nights alternate between commits a and b; night 3 fails: the pairs 2-3 and 3-4 go,
    # and commit a's replicates are nights 1 and 5
    commits = ["a", "b", "a", "b", "a", "b"]
    for i, (demoted, commit) in enumerate(zip(NIGHTS, commits, strict=True), 1):
        _night(wh, tmp_path, f"n{i}", demoted, commit=commit, max_drop=0.0 if i == 3 else 1.0)
    from rankhouse.regress.verdicts import nightly_spread

    run = wh.run("n6")
    with wh.connect() as conn:
        signature = conn.execute(
            "SELECT input_signature FROM evaluations WHERE run_id = :id", {"id": run["id"]}
        ).scalar()
    tonight = {**run, "id": run["id"] + 1000, "ingested_at": _later(run)}
    qrels_id = wh.qrels("q")["id"]
    spread = nightly_spread(wh, tonight, qrels_id, ["RR"], {"RR": signature})["RR"]
    values = {i: _rr(d) for i, d in enumerate(NIGHTS, 1)}
    # consecutive passed pairs: 1-2, 4-5, 5-6; replicates not already consecutive: a 1-5,
    # b 2-4, b 4-6
    pairs = [(1, 2), (4, 5), (5, 6), (1, 5), (2, 4), (4, 6)]
    assert (spread.nights, spread.replicates) == (6, 3)
    assert spread.sd == pytest.approx(
        _pooled_sd([values[b] - values[a] for a, b in pairs]), rel=1e-12
    )


def _later(run):
    from datetime import timedelta

    return run["ingested_at"] + timedelta(seconds=1)


def test_a_lasting_drop_keeps_failing_until_accepted(wh, tmp_path):
    assert _night(wh, tmp_path, "good", max_drop=0.1).outcome == "first"
    dropped = ("q01", "q02", "q03", "q04", "q05", "q06")  # RR 1.0 -> 0.7
    outcomes = [
        _night(wh, tmp_path, f"drop{i}", dropped, max_drop=0.1).outcome for i in range(1, 4)
    ]
    assert outcomes == ["regressed"] * 3  # every night against the same reference
    wh.accept_reference("drop2", qrels="q", reason="new index: accepted")
    after = _night(wh, tmp_path, "drop4", dropped, max_drop=0.1)
    assert (after.outcome, after.baseline) == ("passed", "drop2")
    from rankhouse.regress import reference_history

    history = reference_history(wh, "sys", wh.qrels("q")["id"])
    assert [(h["run_name"], h["reason"]) for h in history] == [
        ("drop2", "new index: accepted"),
        ("good", "the first night of system 'sys'"),
    ]


def test_previous_would_take_the_drop_as_normal(wh, tmp_path):
    """What the reference is for: against 'previous' the second dropped night passes."""
    dropped = ("q01", "q02", "q03", "q04", "q05", "q06")
    for name, demoted in (("good", ()), ("drop1", dropped), ("drop2", dropped)):
        wh.ingest_run(_run(tmp_path, name, demoted), name=name)
    result = wh.regress("drop2", baseline="previous", qrels="q", measures=["RR"], max_drop=0.1)
    assert result.passed and result.baseline == "drop1"


def test_a_percent_margin_is_a_share_of_the_reference(wh, tmp_path):
    _night(wh, tmp_path, "ref", max_drop=1.0)  # the reference: RR 1.0
    lucky_low = ("q01", "q02", "q03", "q04", "q05")  # RR 0.75
    _night(wh, tmp_path, "low", lucky_low, max_drop=1.0)
    wh.ingest_run(_run(tmp_path, "tonight", ("q01",)), name="tonight")
    result = wh.regress("tonight", baseline="previous", qrels="q", measures=["RR:20%"])
    row = result.verdict_rows[0]
    assert result.baseline == "low"
    assert row["margin"] == pytest.approx(0.2)  # 20 % of the reference's 1.0, not of 0.75


def test_significance_mode_respects_direction_and_corrects_by_holm(wh, tmp_path):
    # Unj@2: lower is better. The baseline puts an unjudged document on top of 8 queries
    # (Unj@2 0.4), the run on none (0.0): better, never regressed
    wh.ingest_run(_run_buried(tmp_path, "buried", QUERIES[:8]), name="buried")
    wh.ingest_run(_run_buried(tmp_path, "clean", ()), name="clean")
    result = wh.regress(
        "clean", baseline="buried", qrels="q", measures=["Unj@2", "RR"], mode="significance"
    )
    rows = {row["measure"]: row for row in result.verdict_rows}
    assert rows["Unj@2"]["delta"] == pytest.approx(-0.4)
    assert rows["Unj@2"]["status"] == "improved" and not rows["Unj@2"]["fails"]
    assert (rows["Unj@2"]["improved"], rows["Unj@2"]["degraded"]) == (8, 0)  # its direction
    assert result.passed and result.settings["correction"] == "holm"
    # and the other way round: more unjudged documents on top is worse
    back = wh.regress(
        "buried", baseline="clean", qrels="q", measures=["Unj@2"], mode="significance"
    )
    assert back.verdict_rows[0]["status"] == "regressed" and not back.passed
    assert (back.verdict_rows[0]["improved"], back.verdict_rows[0]["degraded"]) == (0, 8)


def _run_buried(folder: Path, name: str, buried) -> Path:
    salt = sum(map(ord, name)) / 1e6
    lines = []
    for q in QUERIES:
        ranking = ["u", "r", "n"] if q in buried else ["r", "n", "u"]
        lines += [f"{q} Q0 {d} {i} {9 - i + salt} sys" for i, d in enumerate(ranking, 1)]
    path = folder / f"{name}.run"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_night_whose_mean_did_not_drop_is_never_regressed(wh, tmp_path):
    # tonight is better on one query and worse on none: whatever the margin, not regressed
    _night(wh, tmp_path, "ref", ("q01", "q02"), max_drop=1.0)
    result = _night(wh, tmp_path, "up", ("q01",), max_drop=0.0)
    row = result.verdict_rows[0]
    assert row["delta"] > 0
    assert row["status"] in ("non_inferior", "not_shown") and not row["regressed"]


def test_a_renamed_tag_is_not_a_silent_first_night(wh, tmp_path):
    _night(wh, tmp_path, "n1", max_drop=1.0)
    wh.ingest_run(_run(tmp_path, "v2", (), tag="sys-v2"), name="v2")
    with pytest.raises(NoBaselineError, match="nearest known system is 'sys'"):
        wh.regress(
            "v2",
            baseline="reference",
            qrels="q",
            measures=["RR"],
            allow_missing_baseline=True,
            new_system="fail",
        )
    passed = wh.regress(
        "v2", baseline="reference", qrels="q", measures=["RR"], allow_missing_baseline=True
    )
    assert passed.outcome == "first"
    assert any("nearest known system is 'sys'" in note for note in passed.notes)


def test_the_reference_itself_passes(wh, tmp_path):
    _night(wh, tmp_path, "n1", max_drop=1.0)
    again = wh.regress("n1", baseline="reference", qrels="q", measures=["RR"])
    assert again.outcome == "passed"
    assert again.headline == "PASS: n1 is the reference itself (the same content): nothing changed"


def test_a_night_submitted_again_keeps_its_place_in_the_calibration(wh, tmp_path):
    """The same content under a new name is the stored night judged again (against today's
    reference); the night's first check, made when it was new, stays what calibrates."""
    for i, demoted in enumerate(NIGHTS, 1):
        _night(wh, tmp_path, f"n{i}", demoted, max_drop=1.0)
    wh.ingest_run(_run(tmp_path, "hi", ()), name="hi")
    wh.accept_reference("hi", qrels="q", reason="a better index")
    wh.ingest_run(_run(tmp_path, "n4", NIGHTS[3]), name="again")  # n4's file, byte for byte
    again = wh.regress("again", baseline="reference", qrels="q", measures=["RR"], max_drop=0.0)
    assert again.run == "n4" and not again.passed  # against the better reference
    assert any("again is run n4 (the same content" in note for note in again.notes)
    tonight = _night(wh, tmp_path, "n7", ("q04",))
    row = tonight.verdict_rows[0]
    assert (row["margin_source"], row["spread_nights"]) == ("calibrated", MIN_NIGHTS)


def test_not_shown_with_a_calibrated_margin_passes_said_so_unless_told(wh, tmp_path):
    """'auto': a night whose queries spread wider than the system's nights, with no drop
    shown, passes with its margin calibrated and fails with a margin given."""
    for i, demoted in enumerate(NIGHTS, 1):
        _night(wh, tmp_path, f"n{i}", demoted, max_drop=1.0)
    wild = ("q04", "q05", "q06")  # better than the pool on q01-q03, worse on q04-q06
    tonight = _night(wh, tmp_path, "wild", wild)
    row = tonight.verdict_rows[0]
    assert (row["margin_source"], row["status"], row["fails"]) == ("calibrated", "not_shown", False)
    assert tonight.outcome == "passed" and tonight.not_shown == ["RR"]
    assert "not shown non-inferior, passed as its margin is calibrated" in tonight.headline
    strict = wh.regress("wild", baseline="reference", qrels="q", measures=["RR"], not_shown="fail")
    assert (strict.outcome, strict.verdict_rows[0]["fails"]) == ("not_shown", True)
    given = wh.regress("wild", baseline="reference", qrels="q", measures=[f"RR:{row['margin']}"])
    assert (given.outcome, given.verdict_rows[0]["margin_source"]) == ("not_shown", "given")


def test_the_reference_pool_reads_the_nights_it_pools_only(warehouse, tmp_path, monkeypatch):
    """The pool's nights are chosen by the database, which stops at the fourth: a system's
    years of nights after its reference are never read (benchmarks/bench_growth.py)."""
    warehouse.ingest_qrels(_qrels(tmp_path / "qrels.txt"), name="q")
    for i, demoted in enumerate([*NIGHTS, ()], 1):  # n2-n7 pass against n1
        _night(warehouse, tmp_path, f"n{i}", demoted, max_drop=1.0)
    warehouse.ingest_run(_run(tmp_path, "tonight", ("q04",)), name="tonight")
    seen = record_statements(monkeypatch)
    pool = reference_pool(warehouse, warehouse.run("n1"), warehouse.run("tonight"), 1)
    assert [run["name"] for run in pool] == ["n1", "n2", "n3", "n4", "n5"]
    assert [s.rows for s in seen if "FROM runs r JOIN regress_checks" in s.sql] == [4]
    assert not [s for s in seen if s.sql.startswith("SELECT id FROM runs WHERE system_tag")]
