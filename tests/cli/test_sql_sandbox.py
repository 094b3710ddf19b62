"""``rankhouse sql`` without ``--write`` reads the warehouse and can do nothing else.

Every statement below is one that worked on a read-only warehouse before (issue 9): it must
now fail with one ``Error:`` line, exit 1, and leave the warehouse file byte for byte as it
was, and no file anywhere. ``--write`` is the documented way to all of DuckDB.
"""

from __future__ import annotations

import hashlib
import json
import re

import duckdb
import pytest
from cli_helpers import ERROR_LINE, run_many

from rankhouse import Warehouse

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = b"q1 Q0 d1 1 2.0 bm25\nq1 Q0 d2 2 1.0 bm25\nq2 Q0 d3 1 1.0 bm25\n"

#: (what it tries, the statement); {warehouse} is the warehouse file's absolute path.
REFUSED = [
    ("overwrite the warehouse", "COPY (SELECT 1) TO '{warehouse}'"),
    (
        "overwrite the warehouse as parquet",
        "COPY (SELECT 1 AS a) TO '{warehouse}' (FORMAT parquet)",
    ),
    ("write a file", "COPY runs TO 'out.csv'"),
    ("write a query to a file", "COPY (SELECT * FROM judgments) TO 'out.csv' (HEADER)"),
    ("export the database", "EXPORT DATABASE 'exported'"),
    ("import a database", "IMPORT DATABASE 'exported'"),
    ("attach another file", "ATTACH 'other.duckdb' AS other"),
    ("attach a new database", "ATTACH ':memory:' AS scratch"),
    ("read a csv file", "SELECT * FROM read_csv('secret.csv')"),
    ("read a file by its name", "SELECT * FROM 'secret.csv'"),
    ("read any text file", "SELECT * FROM read_text('secret.csv')"),
    ("read a parquet file", "SELECT * FROM read_parquet('data.parquet')"),
    ("read a json file", "SELECT * FROM read_json('data.json')"),
    ("list files", "SELECT * FROM glob('*')"),
    ("install an extension", "INSTALL httpfs"),
    ("load an extension", "LOAD httpfs"),
    ("load an extension file", "LOAD 'ext.duckdb_extension'"),
    ("change a setting", "SET threads = 1"),
    ("switch file access back on", "SET enable_external_access = true"),
    ("unlock the configuration", "SET lock_configuration = false"),
    ("reset a setting", "RESET threads"),
    ("change a setting by pragma", "PRAGMA threads = 1"),
    ("profile to a file", "PRAGMA enable_profiling"),
    ("log queries to a file", "SET log_query_path = 'queries.log'"),
    ("create a table", "CREATE TABLE notes (a INTEGER)"),
    ("create a view", "CREATE VIEW v AS SELECT 1"),
    ("drop a table", "DROP TABLE runs"),
    ("drop a view", "DROP VIEW latest_evaluations"),
    ("alter a table", "ALTER TABLE runs ADD COLUMN x INTEGER"),
    ("insert", "INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'x', now())"),
    ("update", "UPDATE runs SET name = 'renamed'"),
    ("delete", "DELETE FROM judgments"),
    ("a harmless statement before a harmful one", "SELECT 1; DROP TABLE runs"),
]

#: Files a refused statement above would have made.
NEVER_WRITTEN = ["out.csv", "exported", "other.duckdb", "queries.log"]


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """A closed warehouse, files a query might read, and every refused statement's CLI result
    (read-only processes share the file, so they run a few at a time)."""
    folder = tmp_path_factory.mktemp("sandbox")
    (folder / "qrels.txt").write_bytes(QRELS)
    (folder / "run.txt").write_bytes(RUN)
    warehouse = folder / "w.duckdb"
    with Warehouse(warehouse) as wh:
        wh.evaluate(folder / "qrels.txt", folder / "run.txt", ["AP"])
    (folder / "secret.csv").write_text("password\nhunter2\n")
    (folder / "data.json").write_text('{"a": 1}\n')
    duckdb.sql(f"COPY (SELECT 1 AS a) TO '{folder / 'data.parquet'}' (FORMAT parquet)")
    before = _digest(warehouse)
    commands = [
        [*options, "sql", statement.format(warehouse=warehouse)]
        for statement, options in _runs(warehouse)
    ]
    outcome: dict[str, list] = {}
    for (statement, _), result in zip(
        _runs(warehouse), run_many(commands, cwd=folder), strict=True
    ):
        outcome.setdefault(statement, []).append(result)
    return folder, warehouse, before, outcome


def _runs(warehouse):
    """Every statement without --write; the first few also under the global --read-only."""
    for i, (_, statement) in enumerate(REFUSED):
        yield statement, ["--db", warehouse]
        if i < 5:
            yield statement, ["--db", warehouse, "--read-only"]


#: DuckDB 2.0.1 refuses to write over the file of a database it has open before it asks the
#: sandbox (2.0.0 left that to the sandbox); --write would not let that through either, so no
#: hint about --write follows it.
OWN_FILE = "the file belongs to an attached database"


@pytest.mark.parametrize(("attempt", "statement"), REFUSED, ids=[a for a, _ in REFUSED])
def test_statement_is_refused_with_one_error_line(sandbox, attempt, statement):
    for result in sandbox[3][statement]:
        assert result.exit_code == 1, (result.stdout, result.stderr)
        assert re.match(ERROR_LINE, result.stderr), result.stderr
        assert result.stderr.startswith("Error: the query failed: ")
        if OWN_FILE in result.stderr:
            assert attempt.startswith("overwrite the warehouse"), result.stderr
            assert "--write" not in result.stderr
        else:
            assert "without --write, sql reads the warehouse only" in result.stderr
        assert result.stdout == ""


def test_the_warehouse_file_is_intact_and_valid(sandbox):
    folder, warehouse, before, _ = sandbox
    assert _digest(warehouse) == before
    with Warehouse(warehouse, read_only=True) as wh, wh.connect() as conn:
        assert conn.execute("SELECT count(*) FROM judgments").scalar_one() == 3
        assert conn.execute("SELECT name FROM runs").scalars().all() == ["bm25"]
    for name in NEVER_WRITTEN:
        assert not (folder / name).exists(), name


def test_reading_still_works(sandbox, run_cli):
    folder, warehouse, _, _ = sandbox
    shown = run_cli(
        "--db",
        warehouse,
        "sql",
        "SELECT run_name, measure, value FROM latest_evaluations",
        "-f",
        "json",
        db=False,
    )
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout) == [{"run_name": "bm25", "measure": "AP", "value": 1.0}]


def test_write_opens_all_of_duckdb(tmp_path, run_cli):
    """``--write`` is the documented way to change the warehouse and to reach files."""
    (tmp_path / "qrels.txt").write_bytes(QRELS)
    warehouse = tmp_path / "w.duckdb"
    Warehouse(warehouse).close()
    db = ["--db", warehouse]
    assert run_cli(*db, "ingest", "qrels", "qrels.txt", db=False).exit_code == 0
    copied = run_cli(*db, "sql", "--write", "COPY judgments TO 'out.csv' (HEADER)", db=False)
    assert copied.exit_code == 0, copied.stderr
    assert (tmp_path / "out.csv").read_text().splitlines()[0] == "qrels_id,query_id,doc_id,grade"
    read = run_cli(*db, "sql", "--write", "SELECT count(*) AS n FROM 'out.csv'", "-f", "csv")
    assert read.stdout.splitlines() == ["n", "3"]
    both = run_cli(*db, "--read-only", "sql", "--write", "SELECT 1", db=False)
    assert both.exit_code == 1
    assert both.stderr == "Error: this command writes to the warehouse; drop --read-only\n"


@pytest.mark.parametrize(
    "statement",
    ["CREATE TABLE notes (a INTEGER)", "DELETE FROM judgments", "DROP VIEW latest_evaluations"],
)
def test_postgresql_sql_runs_in_a_read_only_transaction(postgres_url, tmp_path, run_cli, statement):
    (tmp_path / "qrels.txt").write_bytes(QRELS)
    with Warehouse(postgres_url) as wh:
        wh.ingest_qrels(tmp_path / "qrels.txt")
    refused = run_cli("--db", postgres_url, "sql", statement, db=False)
    assert refused.exit_code == 1
    assert re.match(ERROR_LINE, refused.stderr), refused.stderr
    assert "read-only transaction" in refused.stderr
    with Warehouse(postgres_url) as wh, wh.connect() as conn:
        assert conn.execute("SELECT count(*) FROM judgments").scalar_one() == 3
        assert conn.execute("SELECT count(*) FROM latest_evaluations").scalar_one() == 0
