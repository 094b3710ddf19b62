"""Order drift between two stored runs, on both backends: each query's RBO, Kendall's tau,
tau_AP and overlap@k against independent implementations (the ``ranked-overlap`` package's
extrapolated RBO, scipy's ``kendalltau``, the ``tau-ap`` package, sets by hand) over rankings
ordered here from the run files as trec_eval orders them (score descending, then document id
descending); stored once, reused, queryable through the views ``drift_results`` and
``query_drift``, removed with a run, and shown by compare."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from ranked_overlap import rbo as ranked_overlap_rbo
from scipy import stats as scipy_stats
from series_helpers import make_runs, qrels_path
from tau_ap import tau_ap as tau_ap_package

from rankhouse import RankhouseError, Warehouse
from rankhouse.columns import DRIFT_COLUMNS, QUERY_DRIFT_COLUMNS
from rankhouse.compare import run_drift

BASELINE = "night-2"
RUNS = ["slightly-worse", "better"]


@pytest.fixture(scope="module")
def run_files(shared_dir, tmp_path_factory) -> dict[str, Path]:
    return make_runs(shared_dir, tmp_path_factory.mktemp("runs"))


def _rankings(path: Path) -> dict[str, list[str]]:
    """query -> document ids, best first, as trec_eval ranks them (ties: id descending)."""
    found: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text().splitlines():
        query, _, doc, _, score, _ = line.split()
        found.setdefault(query, []).append((float(score), doc))
    return {
        q: [d for _, d in sorted(rows, key=lambda r: (-r[0], tuple(-b for b in r[1].encode())))]
        for q, rows in found.items()
    }


def _reference(run: list[str], baseline: list[str], k: int, p: float) -> dict[str, float]:
    top_run, top_base = run[:k], baseline[:k]
    shared = [d for d in top_run if d in top_base]
    in_run = [top_run.index(d) for d in shared]
    in_base = [top_base.index(d) for d in shared]
    if not top_run or not top_base:
        rbo = 0.0
    else:
        assert len(top_run) == len(top_base)  # ranked-overlap's RBO is RBO_ext at equal lengths
        rbo = ranked_overlap_rbo(top_run, top_base, p)
    two = len(shared) >= 2
    return {
        "rbo": rbo,
        "kendall_tau": scipy_stats.kendalltau(in_run, in_base).statistic if two else math.nan,
        "tau_ap": tau_ap_package(in_run, in_base) if two else math.nan,
        "overlap": len(shared) / k,
        "shared": len(shared),
    }


def _same(got: float, expected: float) -> bool:
    if math.isnan(expected):
        return math.isnan(got)
    return math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.parametrize(("k", "p"), [(100, 0.9), (10, 0.8)])
def test_each_query_is_the_reference_packages(any_warehouse, run_files, k, p):
    wh = any_warehouse
    for name in [BASELINE, *RUNS]:
        wh.ingest_run(run_files[name], name=name)
    frame = wh.drift(RUNS, BASELINE, k=k, p=p, per_query=True)
    assert list(frame.columns) == list(QUERY_DRIFT_COLUMNS)
    base = _rankings(run_files[BASELINE])
    for run in RUNS:
        mine = _rankings(run_files[run])
        rows = frame[frame["run"] == run]
        assert rows["query"].tolist() == sorted(base, key=str.encode)
        for row in rows.itertuples():
            expected = _reference(mine[row.query], base[row.query], k, p)
            for name, value in expected.items():
                assert _same(getattr(row, name), value), (run, row.query, name)
        means = wh.drift([run], BASELINE, k=k, p=p).iloc[0]
        assert list(means.index) == list(DRIFT_COLUMNS)
        expected = [_reference(mine[q], base[q], k, p) for q in sorted(base)]
        taus = [e for e in expected if not math.isnan(e["kendall_tau"])]
        for name, among in (("rbo", expected), ("overlap", expected), ("tau_ap", taus)):
            assert means[name] == pytest.approx(sum(e[name] for e in among) / len(among), rel=1e-12)
        assert (means["num_q"], means["num_tau"], means["k"], means["p"]) == (43, len(taus), k, p)


def test_stored_once_reused_and_queryable_in_sql(any_warehouse, run_files):
    wh = any_warehouse
    for name in [BASELINE, "better"]:
        wh.ingest_run(run_files[name], name=name)
    ids = {row["name"]: int(row["id"]) for row in wh.runs().to_dict("records")}
    first = run_drift(wh, ids["better"], ids[BASELINE], k=50, p=0.9)
    again = run_drift(wh, ids["better"], ids[BASELINE], k=50, p=0.9)
    assert not first.reused and again.reused and first.drift_id == again.drift_id
    assert again.queries == first.queries  # NULL tau reads back as NaN, the rest exactly
    other = run_drift(wh, ids["better"], ids[BASELINE], k=50, p=0.95)  # another setting
    assert other.drift_id != first.drift_id
    with wh.connect() as conn:
        rows = conn.execute(
            "SELECT run_name, baseline_name, k, p, num_q, rbo FROM drift_results "
            "WHERE run_name = 'better' ORDER BY p"
        ).all()
        per_query = conn.execute(
            "SELECT query_id, rbo, kendall_tau, overlap, shared FROM query_drift "
            "WHERE drift_id = :id ORDER BY query_id",
            {"id": first.drift_id},
        ).all()
        counted = conn.execute("SELECT count(*) FROM drift_evaluations").first()[0]
    assert [tuple(r[:5]) for r in rows] == [
        ("better", BASELINE, 50, 0.9, 43),
        ("better", BASELINE, 50, 0.95, 43),
    ]
    assert rows[0][5] == pytest.approx(first.means().rbo, rel=1e-15)
    assert [r[0] for r in per_query] == [q.query for q in first.queries]
    assert [r[1] for r in per_query] == [q.rbo for q in first.queries]
    assert counted == 2


def test_a_query_one_run_lacks_has_no_overlap_and_no_tau(any_warehouse, run_files, tmp_path):
    wh = any_warehouse
    lines = run_files["better"].read_text().splitlines()
    dropped = sorted({line.split()[0] for line in lines})[0]
    partial = tmp_path / "partial.run"
    partial.write_text("\n".join(ln for ln in lines if ln.split()[0] != dropped) + "\n")
    wh.ingest_run(run_files[BASELINE], name=BASELINE)
    wh.ingest_run(partial, name="partial")
    frame = wh.drift("partial", BASELINE, k=20, per_query=True).set_index("query")
    assert len(frame) == 43  # the queries either run ranks
    row = frame.loc[dropped]
    assert (row["rbo"], row["overlap"], row["shared"]) == (0.0, 0.0, 0)
    assert math.isnan(row["kendall_tau"]) and math.isnan(row["tau_ap"])
    with wh.connect() as conn:
        stored = conn.execute(
            "SELECT kendall_tau, tau_ap FROM query_drift WHERE query_id = :q", {"q": dropped}
        ).first()
    assert tuple(stored) == (None, None)  # NULL, so that SQL's avg() leaves it out
    means = wh.drift("partial", BASELINE, k=20).iloc[0]
    base, mine = _rankings(run_files[BASELINE]), _rankings(partial)
    taus = [q for q in base if q in mine and _reference(mine[q], base[q], 20, 0.9)["shared"] >= 2]
    assert (means["num_q"], means["num_tau"]) == (43, len(taus))


def test_a_removed_run_takes_its_drift_with_it(any_warehouse, run_files):
    wh = any_warehouse
    for name in [BASELINE, *RUNS]:
        wh.ingest_run(run_files[name], name=name)
    wh.drift(RUNS, BASELINE)
    wh.drift([BASELINE], "better")
    wh.remove_run("better")  # a run and a baseline of drifts
    with wh.connect() as conn:
        left = conn.execute("SELECT run_name, baseline_name FROM drift_results").all()
        values = conn.execute("SELECT count(*) FROM drift_values").first()[0]
    assert [tuple(r) for r in left] == [("slightly-worse", BASELINE)]
    assert values == 43


def test_a_read_only_warehouse_computes_without_storing(db_path, run_files):
    with Warehouse(db_path) as wh:
        for name in [BASELINE, "better"]:
            wh.ingest_run(run_files[name], name=name)
    with Warehouse(db_path, read_only=True) as wh:
        frame = wh.drift("better", BASELINE)
        with wh.connect() as conn:
            assert conn.execute("SELECT count(*) FROM drift_evaluations").first()[0] == 0
    assert frame["num_q"].iloc[0] == 43


@pytest.mark.parametrize(
    ("settings", "message"),
    [({"k": 0}, "depth must be a whole number from 1"), ({"p": 1.0}, "persistence")],
)
def test_bad_settings_are_refused(warehouse, run_files, settings, message):
    for name in [BASELINE, "better"]:
        warehouse.ingest_run(run_files[name], name=name)
    with pytest.raises(RankhouseError, match=message):
        warehouse.drift("better", BASELINE, **settings)


def test_compare_shows_the_drift_of_each_run(warehouse, run_files, shared_dir):
    wh = warehouse
    wh.ingest_qrels(qrels_path(shared_dir), name="dl19")
    for name in [BASELINE, *RUNS]:
        wh.ingest_run(run_files[name], name=name)
    frame = wh.compare("dl19", RUNS, ["AP"], baseline=BASELINE, drift=True, drift_depth=30)
    assert list(frame.drift.columns) == list(DRIFT_COLUMNS)
    assert frame.drift["run"].tolist() == RUNS
    expected = wh.drift(RUNS, BASELINE, k=30)
    assert frame.drift.equals(expected)
    assert "order drift from night-2: top 30" in frame._repr_html_()
    assert wh.compare("dl19", RUNS, ["AP"], baseline=BASELINE).drift is None
    with pytest.raises(RankhouseError, match="drift measures each run against baseline"):
        wh.compare("dl19", RUNS, ["AP"], drift=True)
    subset = sorted(_rankings(run_files[BASELINE]))[:5]
    part = wh.compare(
        "dl19", RUNS, ["AP"], baseline=BASELINE, drift=True, drift_depth=30, queries=subset
    ).drift
    base, mine = _rankings(run_files[BASELINE]), _rankings(run_files["better"])
    rbo = [_reference(mine[q], base[q], 30, 0.9)["rbo"] for q in subset]
    row = part.set_index("run").loc["better"]
    assert row["num_q"] == 5 and row["rbo"] == pytest.approx(sum(rbo) / 5, rel=1e-12)


def test_cli_drift(db_path, run_files, shared_dir, run_cli):
    with Warehouse(db_path) as wh:
        wh.ingest_qrels(qrels_path(shared_dir), name="dl19")
        for name in [BASELINE, *RUNS]:
            wh.ingest_run(run_files[name], name=name)
        expected = wh.drift(RUNS, BASELINE, k=100, p=0.9).set_index("run")
    base = ["compare", "dl19", BASELINE, *RUNS, "-m", "AP", "--baseline", BASELINE, "--drift"]
    table = run_cli(*base)
    assert table.exit_code == 0, table.stderr
    assert "order drift from night-2: top 100, RBO persistence 0.9" in table.stdout
    *_, line = (ln for ln in table.stdout.splitlines() if ln.startswith(" better "))
    assert f"{expected.at['better', 'rbo']:.3f}" in line
    csv = run_cli(*base, "--drift-depth", "100", "-f", "csv").stdout.splitlines()
    header = csv[0].split(",")
    assert header[-5:] == ["rbo", "kendall_tau", "tau_ap", "overlap", "drift_queries"]
    better = next(ln.split(",") for ln in csv if ln.startswith("better,"))
    assert float(better[header.index("rbo")]) == expected.at["better", "rbo"]
    missing = run_cli("compare", "dl19", BASELINE, "better", "-m", "AP", "--drift")
    assert missing.exit_code == 1
    assert missing.stderr == "Error: --drift measures each run against --baseline; give one\n"
