"""Files and URLs that are not a rankhouse warehouse are refused in one line, untouched, and
DuckDB never installs or loads code on rankhouse's behalf.

* A SQLite database (or any file that is not DuckDB's) given as ``--db`` is refused before
  DuckDB opens it: given one, DuckDB downloaded its SQLite extension from the network.
* Every DuckDB connection rankhouse opens (warehouse files, read-only ones, the engine's
  in-memory databases, a server warehouse's workspace, the CLI's opened-ahead file) has
  extension auto-install and auto-load off.
* Another application's DuckDB file whose ``schema_migrations`` is not rankhouse's (a text
  ``version``, other names, other columns) is refused, as one with no ``schema_migrations``.
* A ``postgresql://`` URL whose port is not a number is one line, not a traceback.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3

import duckdb
import pytest
from cli_helpers import ERROR_LINE

from rankhouse import SchemaError, Warehouse
from rankhouse.backends import Opening
from rankhouse.backends.duckdb_file import DuckDBFile
from rankhouse.cli.process import warehouse_file
from rankhouse.engine.values import scratch_cursor, scratch_database

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"

#: Commands that read and commands that write, each refused the same way.
COMMANDS = [
    ["runs", "list"],
    ["--read-only", "runs", "list"],
    ["sql", "SELECT 1"],
    ["ingest", "qrels", "qrels.txt"],
    ["eval", "qrels.txt", "qrels.txt", "-m", "AP"],
]


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_error_line(result) -> str:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert re.match(ERROR_LINE, result.stderr), result.stderr
    return result.stderr


@pytest.fixture
def home(tmp_path):
    """A home folder of the test's own: DuckDB installs extensions under ``~/.duckdb``."""
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


# --- files that are not DuckDB's ---------------------------------------------------------------


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_sqlite_file_is_refused_without_loading_an_extension(tmp_path, home, run_cli, args):
    (tmp_path / "qrels.txt").write_bytes(QRELS)
    path = tmp_path / "crm.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
    before = _digest(path)
    result = run_cli("--db", path, *args, db=False, env={"HOME": str(home)})
    assert _one_error_line(result) == (
        f"Error: {path} is a SQLite database, not a DuckDB database: a warehouse is a DuckDB "
        "file (or a PostgreSQL server); name a new file with --db\n"
    )
    assert _digest(path) == before
    assert list(home.iterdir()) == []  # no ~/.duckdb: nothing installed, nothing fetched


def test_a_text_file_is_not_a_warehouse(tmp_path, run_cli):
    path = tmp_path / "notes.txt"
    path.write_text("not a database\n")
    result = run_cli("--db", path, "ingest", "qrels", "notes.txt", db=False)
    assert _one_error_line(result) == (
        f"Error: {path} is not a DuckDB database: a warehouse is a DuckDB file (or a "
        "PostgreSQL server); name a new file with --db\n"
    )
    assert path.read_text() == "not a database\n"


def test_the_api_refuses_a_sqlite_file(tmp_path):
    path = tmp_path / "crm.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    with pytest.raises(SchemaError, match="is a SQLite database, not a DuckDB database"):
        Warehouse(path)


# --- DuckDB never installs or loads an extension on its own ------------------------------------


def _extension_settings(duck) -> tuple:
    return duck.execute(
        "SELECT current_setting('autoinstall_known_extensions'), "
        "current_setting('autoload_known_extensions')"
    ).fetchone()


def _connections(tmp_path):
    """(what, a DuckDB connection rankhouse opened) for every kind it opens."""
    path = tmp_path / "w.duckdb"
    writer = DuckDBFile(str(path), Opening(hold=True))
    yield "a warehouse file", writer.duck
    writer.close()
    reader = DuckDBFile(str(path), Opening(read_only=True, hold=True))
    yield "a read-only warehouse file", reader.duck
    reader.close()
    memory = DuckDBFile(":memory:")
    yield "an in-memory warehouse (a server's workspace and staging)", memory.duck
    memory.close()
    engine = scratch_database()
    yield "the engine's in-memory database", engine
    engine.close()
    with scratch_cursor() as cursor:
        yield "the engine's shared in-memory database", cursor


def test_every_duckdb_connection_has_extension_autoloading_off(tmp_path):
    seen = []
    for what, duck in _connections(tmp_path):
        seen.append(what)
        assert _extension_settings(duck) == (False, False), what
        with pytest.raises(duckdb.Error) as refused:
            duck.execute("SELECT * FROM sqlite_scan('crm.sqlite', 'customers')")
        assert "download" not in str(refused.value).lower(), what
    assert len(seen) == 5


def test_the_cli_opens_ahead_with_the_same_settings(tmp_path):
    Warehouse(tmp_path / "w.duckdb").close()
    _, duck = warehouse_file(str(tmp_path / "w.duckdb"), read_only=False)
    try:
        assert _extension_settings(duck) == (False, False)
    finally:
        duck.close()
    with sqlite3.connect(tmp_path / "crm.sqlite") as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    assert warehouse_file(str(tmp_path / "crm.sqlite"), read_only=False) is None


# --- another application's schema_migrations ---------------------------------------------------

FOREIGN_MIGRATIONS = [
    (
        "CREATE TABLE schema_migrations (version VARCHAR PRIMARY KEY, name VARCHAR);"
        "INSERT INTO schema_migrations VALUES ('20240101_init', 'init')",
        "version holds '20240101_init'",
    ),
    (
        "CREATE TABLE schema_migrations (version INTEGER, name VARCHAR);"
        "INSERT INTO schema_migrations VALUES (1, 'create_users')",
        "version 1 is named 'create_users'",
    ),
    (
        "CREATE TABLE schema_migrations (version VARCHAR PRIMARY KEY);"
        "INSERT INTO schema_migrations VALUES ('20240101120000')",
        "it has the columns version",
    ),
]


@pytest.mark.parametrize(
    ("statements", "found"), FOREIGN_MIGRATIONS, ids=["text", "names", "rails"]
)
@pytest.mark.parametrize("args", COMMANDS[:4], ids=" ".join)
def test_another_applications_schema_migrations_is_refused(
    tmp_path, run_cli, statements, found, args
):
    (tmp_path / "qrels.txt").write_bytes(QRELS)
    path = tmp_path / "app.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute(statements)
        conn.execute("CREATE TABLE users (id INTEGER)")
    before = _digest(path)
    result = run_cli("--db", path, *args, db=False)
    assert _one_error_line(result) == (
        f"Error: cannot open the warehouse {path}: it is not a rankhouse warehouse: its "
        f"schema_migrations table is another application's ({found}, not one of rankhouse's "
        "numbered migrations); rankhouse does not add its tables to another application's "
        "database\n"
    )
    assert _digest(path) == before
    with duckdb.connect(str(path), read_only=True) as conn:
        assert sorted(r[0] for r in conn.execute("SHOW TABLES").fetchall()) == [
            "schema_migrations",
            "users",
        ]


# --- URLs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("postgresql://analyst@db.example:abc/evals", "its port 'abc' is not a number"),
        ("postgresql://analyst:secret@db.example:5432x/evals", "its port '5432x' is not a number"),
        (
            "postgresql://analyst@db.example:99999/evals",
            "its port 99999 is not between 1 and 65535",
        ),
    ],
)
def test_a_url_whose_port_is_not_a_number_is_one_line(tmp_path, run_cli, url, reason):
    result = run_cli("--db", url, "runs", "list", db=False)
    shown = url.replace(":secret@", ":***@")
    assert _one_error_line(result).startswith(
        f"Error: cannot read the warehouse URL {shown}: {reason}"
    )
    assert "secret" not in result.stderr
    assert list(tmp_path.iterdir()) == []
