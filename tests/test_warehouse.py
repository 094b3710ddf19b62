"""Opening a warehouse: files and URLs, migrations once, newer schemas refused, read-only."""

from __future__ import annotations

import json

import duckdb
import pytest
from schema_helpers import RawDatabase, migrate_by_hand

from rankhouse import RankhouseError, SchemaError, Warehouse
from rankhouse.backends.duckdb_file.connection import DuckDBConnection
from rankhouse.backends.schema import known_migrations
from rankhouse.warehouse import resolve_target


def _applied(wh: Warehouse) -> list[tuple[int, str]]:
    with wh.connect() as conn:
        return [
            tuple(r)
            for r in conn.execute("SELECT version, name FROM schema_migrations ORDER BY version")
        ]


def test_new_file_gets_every_migration_in_order(db_path):
    with Warehouse(db_path) as wh:
        applied = _applied(wh)
    expected = [(m.version, m.name) for m in known_migrations()]
    assert applied == expected
    assert applied[0] == (1, "core")
    assert db_path.exists()


def test_opening_twice_is_a_no_op(db_path):
    with Warehouse(db_path) as wh, wh.connect() as conn:
        first = conn.execute("SELECT applied_at FROM schema_migrations").all()
    with Warehouse(db_path) as wh, wh.connect() as conn:
        second = conn.execute("SELECT applied_at FROM schema_migrations").all()
    assert first == second


def test_sqlalchemy_url_and_path_open_the_same_file(db_path):
    Warehouse(db_path).close()
    with Warehouse(f"duckdb:///{db_path}") as wh:
        assert len(_applied(wh)) == len(known_migrations())


def test_env_var_then_default_name(monkeypatch, tmp_path):
    monkeypatch.setenv("RANKHOUSE_DB", str(tmp_path / "from_env.duckdb"))
    assert resolve_target(None) == f"duckdb:///{tmp_path / 'from_env.duckdb'}"
    monkeypatch.delenv("RANKHOUSE_DB")
    monkeypatch.chdir(tmp_path)
    assert resolve_target(None) == f"duckdb:///{tmp_path / 'rankhouse.duckdb'}"


def test_warehouse_newer_than_the_code_is_refused(db_path):
    with Warehouse(db_path) as wh, wh.transaction() as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', now(), '9.0.0')")
    with pytest.raises(SchemaError, match=r"at schema 999 \(rankhouse 9\.0\.0 or newer\)"):
        Warehouse(db_path)


def test_read_only_cannot_write(db_path):
    Warehouse(db_path).close()
    with (
        Warehouse(db_path, read_only=True) as wh,
        pytest.raises(RankhouseError, match="read-only"),
        wh.transaction() as conn,
    ):
        conn.execute("CREATE TABLE t (x INTEGER)")


def test_read_only_needs_an_existing_warehouse(tmp_path):
    with pytest.raises(RankhouseError, match="no warehouse at"):
        Warehouse(tmp_path / "absent.duckdb", read_only=True)


def test_cli_help_lists_the_commands(run_cli):
    result = run_cli("--help", db=False)
    assert result.exit_code == 0
    for command in ("ingest", "runs", "qrels", "eval", "measures", "trec-eval"):
        assert command in result.stdout


def test_cli_unknown_option_is_a_usage_error(run_cli):
    result = run_cli("runs", "list", "--no-such-option")
    assert result.exit_code == 2


def test_warehouse_of_schema_4_keeps_its_runs_through_migration_5(db_path):
    """0005 rebuilds run_rows without the stored rank; the rows and their ranking survive."""
    con = duckdb.connect(str(db_path))
    migrate_by_hand(DuckDBConnection(con), "duckdb", 4)
    con.execute(
        "INSERT INTO runs (name, system_tag, source, content_sha256, parse_options, ingested_at, "
        "metadata, order_by, num_queries, num_rows) VALUES ('old', 't', 'f', 'x', '{}', now(), "
        "'{}', 'score', 1, 3)"
    )
    # rows as schema 4 stored them, with their rank in `position`
    con.execute(
        "INSERT INTO run_rows VALUES (1, 'q', 'a', 3, 0.5, 2), (1, 'q', 'b', 1, 0.9, 1), "
        "(1, 'q', 'c', 2, 0.5, 3)"
    )
    con.close()
    with Warehouse(db_path) as wh:
        assert (5, "rank_at_evaluation") in _applied(wh)
        with wh.connect() as conn:
            columns = (
                conn.execute(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_name = 'run_rows' ORDER BY ordinal_position"
                )
                .scalars()
                .all()
            )
            ranking = conn.execute(
                "SELECT doc_id, rank, score, position FROM run_ranking ORDER BY position"
            ).all()
        assert columns == ["run_id", "query_id", "doc_id", "rank", "score"]
        # score descending, then doc id descending: b (0.9), c (0.5), a (0.5)
        assert ranking == [("b", 1, 0.9, 1), ("c", 2, 0.5, 2), ("a", 3, 0.5, 3)]


def test_warehouse_of_schema_5_gets_labels_through_migration_6(backend_target):
    """0006 labels stored evaluations as rankhouse.labels does and keeps every value and check."""
    from rankhouse.labels import label
    from rankhouse.measures import parse_measure

    url = resolve_target(backend_target)
    db = RawDatabase(url)
    dialect = db.dialect
    stored = [  # measure, level, policy, options
        ("AP", 1, "zero", "{}"),
        ("AP", 2, "zero", "{}"),
        ("P@10", 3, "skip", '{"judged_only": true, "max_rank": 100}'),
        ("AP(rel=2)", 1, "zero", '{"max_rank": 5}'),
        ("SetF(beta=0.5)", 2, "zero", "{}"),
        ("RprecMult@2.0", 2, "zero", '{"judged_only": false}'),
        ("nDCG@10", 2, "skip", "{}"),
        ("Utility(rel_ret=2.0)", 2, "zero", "{}"),
    ]
    with db.transaction() as con:
        migrate_by_hand(con, dialect, 5)
        for name in ("base", "new"):
            con.execute(
                (
                    "INSERT INTO runs (name, system_tag, source, content_sha256, parse_options, "
                    "ingested_at, metadata, order_by, num_queries, num_rows) VALUES "
                    "(:n, 't', 'f', :n, '{}', now(), '{}', 'score', 1, 1)"
                ),
                {"n": name},
            )
        con.execute_raw(
            "INSERT INTO qrels_sets (name, source, content_sha256, parse_options, ingested_at, "
            "num_queries, num_judgments, num_relevant) VALUES ('q', 'f', 'x', '{}', now(), 1, 1, 1)"
        )
        for i, (measure, level, policy, options) in enumerate(stored, start=1):
            values = {"m": measure, "l": level, "p": policy, "o": options, "v": i / 10, "i": i}
            con.execute(
                (
                    "INSERT INTO evaluations (run_id, qrels_id, qrels_sha256, measure, "
                    "parameters, relevance_level, missing_queries, options, aggregate, value, "
                    "num_q, rankhouse_version, created_at) VALUES (2, 1, 'x', :m, '{}', :l, :p, "
                    ":o, 'mean', :v, 1, 'old', now())"
                ),
                values,
            )
            con.execute("INSERT INTO evaluation_values VALUES (:i, 'q1', :v)", values)
        con.execute_raw(
            "INSERT INTO regress_checks (run_id, baseline_run_id, baseline_spec, qrels_id, test, "
            "correction, alpha, max_drop, relative, options, passed, created_at) VALUES "
            "(2, 1, 'previous', 1, 't', 'none', 0.05, 0.01, false, '{}', true, now())"
        )
        con.execute_raw(
            "INSERT INTO regress_verdicts (check_id, measure, num_q, improved, degraded, status, "
            "regressed, run_evaluation_id) VALUES (1, 'AP', 1, 0, 0, 'unchanged', false, 2)"
        )
    db.close()
    Warehouse.migrate(backend_target)  # a server's warehouse: the owner's explicit step
    with Warehouse(backend_target) as wh, wh.connect() as conn:
        assert (6, "labels") in _applied(wh)
        labels = conn.execute("SELECT label, value FROM evaluations ORDER BY id").all()
        expected = [
            label(parse_measure(measure), level, policy, json.loads(options))
            for measure, level, policy, options in stored
        ]
        assert [row.label for row in labels] == expected
        assert expected[1:4] == [
            "AP(rel=2)",
            "P(rel=3)@10 [missing_queries=skip, judged_only=true, max_rank=100]",
            "AP(rel=2) [max_rank=5]",
        ]
        assert [row.value for row in labels] == [i / 10 for i in range(1, len(stored) + 1)]
        shown = conn.execute("SELECT measure, value FROM query_values ORDER BY evaluation_id").all()
        assert [tuple(row) for row in shown] == [
            (name, i / 10) for i, name in enumerate(expected, start=1)
        ]
        gate = conn.execute(
            "SELECT baseline_name, baseline_deleted, measure FROM regress_results"
        ).one()
        assert tuple(gate) == ("base", False, "AP(rel=2)")


def test_err_stored_under_the_old_default_is_renamed_by_migration_8(backend_target):
    """0008: ERR without max_grade used the qrels set's highest grade; those evaluations
    become ERR(max_grade=V) (V is not 4), so that ERR@k (now 4) is computed afresh."""
    url = resolve_target(backend_target)
    db = RawDatabase(url)
    dialect = db.dialect
    with db.transaction() as con:
        migrate_by_hand(con, dialect, 6)
        con.execute_raw(
            "INSERT INTO runs (name, system_tag, source, content_sha256, parse_options, "
            "ingested_at, metadata, order_by, num_queries, num_rows) VALUES "
            "('r', 't', 'f', 'r', '{}', now(), '{}', 'score', 1, 1)"
        )
        for name, top in (("graded", 3), ("four", 4), ("binary", 1)):
            con.execute(
                (
                    "INSERT INTO qrels_sets (name, source, content_sha256, parse_options, "
                    "ingested_at, num_queries, num_judgments, num_relevant, max_grade) VALUES "
                    "(:n, 'f', :n, '{}', now(), 1, 1, 1, :g)"
                ),
                {"n": name, "g": top},
            )
        stored = [  # qrels id, measure, label, parameters
            (1, "ERR@10", "ERR@10", '{"cutoff": 10, "max_grade": null}'),
            (1, "ERR", "ERR [missing_queries=skip]", '{"cutoff": null, "max_grade": null}'),
            (1, "ERR(max_grade=2)@5", "ERR(max_grade=2)@5", '{"cutoff": 5, "max_grade": 2}'),
            (1, "nDCG@10", "nDCG@10", '{"cutoff": 10, "dcg": "log2"}'),
            (2, "ERR@10", "ERR@10", '{"cutoff": 10, "max_grade": null}'),
            (3, "ERR@10", "ERR@10", '{"cutoff": 10, "max_grade": null}'),
        ]
        for qrels_id, measure, label, parameters in stored:
            con.execute(
                (
                    "INSERT INTO evaluations (run_id, qrels_id, qrels_sha256, measure, "
                    "parameters, relevance_level, missing_queries, options, aggregate, value, "
                    "num_q, rankhouse_version, created_at, label) VALUES (1, :q, 'x', :m, :p, "
                    "1, 'zero', '{}', 'mean', 0.5, 1, 'old', now(), :l)"
                ),
                {"q": qrels_id, "m": measure, "p": parameters, "l": label},
            )
        con.execute_raw(
            "INSERT INTO regress_checks (run_id, baseline_run_id, baseline_spec, qrels_id, test, "
            "correction, alpha, max_drop, relative, options, passed, created_at, baseline_name) "
            "VALUES (1, 1, 'previous', 1, 't', 'none', 0.05, 0.01, false, '{}', true, now(), 'r')"
        )
        con.execute_raw(
            "INSERT INTO regress_verdicts (check_id, measure, num_q, improved, degraded, status, "
            "regressed, run_evaluation_id) VALUES (1, 'ERR [missing_queries=skip]', 1, 0, 0, "
            "'unchanged', false, 2), (1, 'nDCG@10', 1, 0, 0, 'unchanged', false, 4)"
        )
    db.close()
    Warehouse.migrate(backend_target)  # a server's warehouse: the owner's explicit step
    with Warehouse(backend_target) as wh, wh.connect() as conn:
        assert (8, "err_max_grade") in _applied(wh)
        rows = conn.execute("SELECT measure, label, parameters FROM evaluations ORDER BY id").all()
        assert [tuple(row) for row in rows] == [
            ("ERR(max_grade=3)@10", "ERR(max_grade=3)@10", '{"cutoff": 10, "max_grade": 3}'),
            (
                "ERR(max_grade=3)",
                "ERR(max_grade=3) [missing_queries=skip]",
                '{"cutoff": null, "max_grade": 3}',
            ),
            ("ERR(max_grade=2)@5", "ERR(max_grade=2)@5", '{"cutoff": 5, "max_grade": 2}'),
            ("nDCG@10", "nDCG@10", '{"cutoff": 10, "dcg": "log2"}'),
            ("ERR@10", "ERR@10", '{"cutoff": 10, "max_grade": 4}'),  # 4 was the grade used
            ("ERR(max_grade=1)@10", "ERR(max_grade=1)@10", '{"cutoff": 10, "max_grade": 1}'),
        ]
        verdicts = conn.execute(
            "SELECT measure FROM regress_verdicts ORDER BY run_evaluation_id"
        ).all()
        assert [row.measure for row in verdicts] == [
            "ERR(max_grade=3) [missing_queries=skip]",
            "nDCG@10",
        ]
