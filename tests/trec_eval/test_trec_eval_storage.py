"""``rankhouse trec-eval`` stores what it read and computed, and reuses it."""

from __future__ import annotations

import pytest

from rankhouse import Warehouse


def _count(db_path, sql: str) -> int:
    with Warehouse(db_path, read_only=True) as wh, wh.connect() as conn:
        return conn.execute_raw(sql).scalar()


def test_values_are_stored_and_reused(run_cli, db_path, trec_eval_tests):
    first = run_cli(
        "trec-eval", "-m", "all_trec", "qrels.test", "results.test", cwd=trec_eval_tests
    )
    assert first.exit_code == 0, first.stderr
    assert first.stdout == (trec_eval_tests / "out.test.a").read_text()
    assert _count(db_path, "SELECT count(*) FROM runs") == 1
    assert _count(db_path, "SELECT count(*) FROM qrels_sets") == 1
    assert _count(db_path, "SELECT count(*) FROM run_rows") == 1500
    evaluations = _count(db_path, "SELECT count(*) FROM evaluations")
    # 99 summary lines: runid, num_q are not stored; relstring prints per topic only
    assert evaluations == 97
    assert _count(db_path, "SELECT count(*) FROM evaluation_values") == 97 * 3

    again = run_cli(
        "trec-eval", "-m", "all_trec", "qrels.test", "results.test", cwd=trec_eval_tests
    )
    assert again.stdout == first.stdout
    assert _count(db_path, "SELECT count(*) FROM runs") == 1
    assert _count(db_path, "SELECT count(*) FROM evaluations") == evaluations


def test_stored_values_are_the_api_measures(run_cli, db_path, trec_eval_tests):
    run_cli(
        "trec-eval",
        "-m",
        "set_F",
        "-m",
        "utility",
        "qrels.test",
        "results.test",
        cwd=trec_eval_tests,
    )
    with Warehouse(db_path) as wh:
        result = wh.evaluate("qrels.test", "STANDARD", ["SetF", "Utility"])
        assert result.num_reused == 2
        row = result.summary.iloc[0]
        # trec_eval's out.test.a: set_F 0.1194, utility -412.6667
        assert row["SetF"] == pytest.approx(0.1194, abs=5e-5)
        assert row["Utility"] == pytest.approx(-412.6667, abs=5e-5)


def test_options_are_part_of_the_key(run_cli, db_path, trec_eval_tests):
    for extra in ([], ["-M", "100"], ["-J"], ["-l", "2"]):
        result = run_cli(
            "trec-eval", *extra, "-m", "map", "qrels.test", "results.test", cwd=trec_eval_tests
        )
        assert result.exit_code == 0, result.stderr
    assert (
        _count(db_path, "SELECT count(DISTINCT (options, relevance_level)) FROM evaluations") == 4
    )


def test_read_only_and_aborts_store_nothing(run_cli, db_path, trec_eval_tests):
    result = run_cli("trec-eval", "-m", "map", "qrels.test", "results.trunc", cwd=trec_eval_tests)
    assert result.exit_code == 4  # topic 302 is not in the run (v10 aborts without -c)
    assert _count(db_path, "SELECT count(*) FROM evaluations") == 0


def test_without_a_warehouse_nothing_is_written(run_cli, tmp_path, trec_eval_tests):
    """A drop-in for trec_eval writes no file: no --db and no $RANKHOUSE_DB keep nothing."""
    work = tmp_path / "work"
    work.mkdir()
    result = run_cli(
        "trec-eval",
        "-m",
        "map",
        trec_eval_tests / "qrels.test",
        trec_eval_tests / "results.test",
        db=False,
        cwd=work,
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("map")
    assert list(work.iterdir()) == []


def test_rankhouse_db_names_the_warehouse(run_cli, tmp_path, trec_eval_tests):
    target = tmp_path / "env.duckdb"
    result = run_cli(
        "trec-eval",
        "-m",
        "map",
        trec_eval_tests / "qrels.test",
        trec_eval_tests / "results.test",
        db=False,
        env={"RANKHOUSE_DB": str(target)},
    )
    assert result.exit_code == 0, result.stderr
    assert _count(target, "SELECT count(*) FROM evaluations") == 1
    with Warehouse(target, read_only=True) as wh:
        [metadata] = wh.runs()["metadata"]
    assert '"read_by": "trec-eval"' in metadata
