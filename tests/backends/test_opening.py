"""Opening a warehouse can harm nothing: reading never creates, another application's file is
never migrated, damage and odd URLs are one ``Error:`` line, a locked file is waited for.

CLI cases run the real ``rankhouse`` in subprocesses and hold stderr to the exact shape of one
error line (so no traceback).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys

import duckdb
import pytest
from cli_helpers import ERROR_LINE, finish, run_many, start

from rankhouse import MeasureError, NoWarehouseError, SchemaError, Warehouse
from rankhouse.backends import Opening
from rankhouse.backends.duckdb_file import DuckDBFile
from rankhouse.backends.duckdb_file.connection import DuckDBConnection
from rankhouse.backends.duckdb_file.locking import lock_timeout
from rankhouse.backends.duckdb_file.store import holds_nothing, object_names
from rankhouse.backends.schema import OBJECTS_QUERY, expected_objects, known_migrations

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN_A = b"q1 Q0 d1 1 2.0 sysA\nq1 Q0 d2 2 1.0 sysA\nq2 Q0 d3 1 1.0 sysA\n"
RUN_B = b"q1 Q0 d2 1 2.0 sysB\nq1 Q0 d1 2 1.0 sysB\nq2 Q0 d3 1 1.0 sysB\n"

#: Commands that only read what is stored (regress exits 2 on bad input, the others 1).
READ_COMMANDS = [
    (["runs", "list"], 1),
    (["qrels", "list"], 1),
    (["runs", "show", "sysA"], 1),
    (["runs", "rm", "sysA"], 1),
    (["qrels", "rm", "qrels"], 1),
    (["history"], 1),
    (["sql", "SELECT 1"], 1),
    (["eval", "qrels", "sysA", "-m", "AP"], 1),
    (["compare", "qrels", "sysA", "sysB", "-m", "AP"], 1),
    (["regress", "sysA", "--baseline", "previous", "--qrels", "qrels", "-m", "AP"], 2),
    (["report", "-o", "report.html"], 1),
]


def _files(folder) -> None:
    (folder / "qrels.txt").write_bytes(QRELS)
    (folder / "a.txt").write_bytes(RUN_A)
    (folder / "b.txt").write_bytes(RUN_B)


def _one_error_line(result, exit_code: int = 1) -> str:
    assert result.exit_code == exit_code, (result.stdout, result.stderr)
    assert re.match(ERROR_LINE, result.stderr), result.stderr
    return result.stderr


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- reading never creates ---------------------------------------------------------------------


def test_read_commands_say_there_is_no_warehouse(tmp_path):
    _files(tmp_path)
    target = tmp_path / "new" / "folder" / "w.duckdb"
    commands = [["--db", target, *args] for args, _ in READ_COMMANDS]
    for (args, code), result in zip(READ_COMMANDS, run_many(commands, cwd=tmp_path), strict=True):
        message = _one_error_line(result, code)
        assert message.startswith(f"Error: no warehouse at {target}; "), (args, message)
    assert not (tmp_path / "new").exists()
    assert not (tmp_path / "report.html").exists()


def test_default_warehouse_is_not_created_by_reading(tmp_path, run_cli):
    result = run_cli("runs", "list", db=False)
    assert _one_error_line(result).startswith(
        f"Error: no warehouse at {tmp_path / 'rankhouse.duckdb'}; "
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["ingest", "qrels", "qrels.txt"],
        ["eval", "qrels.txt", "a.txt", "-m", "AP"],
        ["compare", "qrels.txt", "a.txt", "b.txt", "-m", "AP"],
    ],
)
def test_commands_given_files_create_the_warehouse(tmp_path, run_cli, args):
    _files(tmp_path)
    target = tmp_path / "new" / "w.duckdb"
    result = run_cli("--db", target, *args, db=False)
    assert result.exit_code == 0, result.stderr
    with Warehouse(target, read_only=True) as wh:
        assert wh.qrels_sets()["name"].tolist() == ["qrels"]


def test_python_api_creates_unless_told_not_to(tmp_path):
    with pytest.raises(NoWarehouseError, match=r"^no warehouse at .*absent\.duckdb; "):
        Warehouse(tmp_path / "absent.duckdb", create=False)
    with pytest.raises(NoWarehouseError, match="no warehouse at"):
        Warehouse(tmp_path / "absent.duckdb", read_only=True)
    assert list(tmp_path.iterdir()) == []
    Warehouse(tmp_path / "made" / "w.duckdb").close()
    assert (tmp_path / "made" / "w.duckdb").is_file()


def test_an_empty_duckdb_database_is_initialised_by_a_write(tmp_path, run_cli):
    _files(tmp_path)
    target = tmp_path / "empty.duckdb"
    duckdb.connect(str(target)).close()
    listed = run_cli("--db", target, "runs", "list", db=False)
    assert _one_error_line(listed).startswith(f"Error: no warehouse at {target}: ")
    stored = run_cli("--db", target, "ingest", "qrels", "qrels.txt", db=False)
    assert stored.exit_code == 0, stored.stderr
    assert run_cli("--db", target, "qrels", "list", db=False).exit_code == 0


def test_an_empty_file_is_not_a_warehouse(tmp_path, run_cli):
    _files(tmp_path)
    target = tmp_path / "zero.duckdb"
    target.touch()
    result = run_cli("--db", target, "ingest", "qrels", "qrels.txt", db=False)
    assert _one_error_line(result) == (
        f"Error: {target} is an empty file, not a DuckDB database; delete it or name a new path\n"
    )
    assert target.stat().st_size == 0


# --- another application's file ----------------------------------------------------------------


@pytest.fixture
def foreign_file(tmp_path):
    path = tmp_path / "crm.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER, name VARCHAR)")
        conn.execute("INSERT INTO customers VALUES (1, 'Ada')")
        conn.execute("CREATE VIEW names AS SELECT name FROM customers")
    return path


# A process that commits a table and dies before DuckDB checkpoints: the table is in the WAL.
_DIES_BEFORE_CHECKPOINT = """
import os, sys, duckdb
conn = duckdb.connect(sys.argv[1])
conn.execute("SET checkpoint_threshold = '1GB'")
conn.execute("CREATE TABLE customers (id INTEGER, name VARCHAR)")
conn.execute("INSERT INTO customers VALUES (1, 'Ada')")
os._exit(0)
"""


def test_tables_only_in_the_write_ahead_log_make_a_file_foreign(tmp_path):
    """A new file is recognised from DuckDB's storage (no block, an empty WAL), without a
    look at its catalogue: a table that only the WAL holds still makes it another
    application's file, refused untouched."""
    path = tmp_path / "crashed.duckdb"
    subprocess.run([sys.executable, "-c", _DIES_BEFORE_CHECKPOINT, str(path)], check=True)
    wal = path.with_name(path.name + ".wal")
    assert wal.stat().st_size > 0
    with pytest.raises(SchemaError, match="it holds 1 other table or view \\(customers\\)"):
        Warehouse(path)
    with duckdb.connect(str(path), read_only=True) as conn:
        assert conn.execute("SHOW TABLES").fetchall() == [("customers",)]


@pytest.mark.parametrize("state", ["created", "table", "checkpointed"])
def test_only_a_file_duckdb_has_just_created_holds_nothing(tmp_path, state):
    path = tmp_path / "w.duckdb"
    conn = duckdb.connect(str(path))
    if state != "created":
        conn.execute("CREATE TABLE t (i INTEGER)")
    if state == "checkpointed":
        conn.execute("CHECKPOINT")
    assert holds_nothing(DuckDBConnection(conn)) == (state == "created")
    conn.close()


@pytest.mark.parametrize("args", [["runs", "list"], ["ingest", "qrels", "qrels.txt"]])
def test_another_applications_file_is_refused_untouched(foreign_file, tmp_path, run_cli, args):
    _files(tmp_path)
    before = _digest(foreign_file)
    result = run_cli("--db", foreign_file, *args, db=False)
    assert _one_error_line(result) == (
        f"Error: {foreign_file} is not a rankhouse warehouse: it holds 2 other tables or views "
        "(customers, names) and no schema_migrations table; rankhouse does not add its tables "
        "to another application's database: name a new file with --db\n"
    )
    assert _digest(foreign_file) == before
    with duckdb.connect(str(foreign_file), read_only=True) as conn:
        assert sorted(r[0] for r in conn.execute("SHOW TABLES").fetchall()) == [
            "customers",
            "names",
        ]


def test_another_applications_file_is_refused_by_the_api(foreign_file):
    with pytest.raises(SchemaError, match="is not a rankhouse warehouse"):
        Warehouse(foreign_file)
    with duckdb.connect(str(foreign_file)) as conn:  # refused, so left unlocked
        assert conn.execute("SELECT count(*) FROM customers").fetchone() == (1,)


# --- damage is one error line ------------------------------------------------------------------


@pytest.fixture(scope="module")
def whole_warehouse(tmp_path_factory):
    folder = tmp_path_factory.mktemp("whole")
    _files(folder)
    path = folder / "w.duckdb"
    with Warehouse(path) as wh:
        wh.evaluate(folder / "qrels.txt", [folder / "a.txt", folder / "b.txt"], ["AP"])
    return path


def _damaged_copy(whole_warehouse, tmp_path, statement: str):
    path = tmp_path / "damaged.duckdb"
    path.write_bytes(whole_warehouse.read_bytes())
    with duckdb.connect(str(path)) as conn:
        conn.execute(statement)
    return path


DAMAGE = [
    (
        "DROP VIEW run_ranking",
        "the warehouse {path} is damaged: run_ranking is missing from its schema",
    ),
    (
        "DROP TABLE regress_verdicts",
        "the warehouse {path} is damaged: regress_verdicts is missing from its schema",
    ),
    (
        "DROP VIEW latest_evaluations; DROP VIEW query_values",
        "the warehouse {path} is damaged: latest_evaluations, query_values are missing",
    ),
    (
        "ALTER TABLE runs DROP COLUMN tied_pairs",
        "the warehouse {path} is damaged: column runs.tied_pairs is missing from its schema",
    ),
    (
        "ALTER TABLE run_rows RENAME score TO s",
        "the warehouse {path} is damaged: column run_rows.score is missing from its schema",
    ),
    (
        "ALTER TABLE judgments DROP COLUMN grade; ALTER TABLE evaluations DROP COLUMN label",
        "the warehouse {path} is damaged: column judgments.grade, column evaluations.label are "
        "missing",
    ),
    (
        "ALTER TABLE runs ADD COLUMN x INTEGER; CREATE OR REPLACE VIEW run_catalog AS "
        "SELECT x AS run_id FROM runs; ALTER TABLE runs DROP COLUMN x",
        "the warehouse {path} is damaged: the view run_catalog no longer reads its tables "
        "(Binder Error: ",
    ),
    (
        "DROP TABLE schema_migrations",
        "the warehouse {path} is damaged: schema_migrations is missing from its schema",
    ),
    (
        "DELETE FROM schema_migrations WHERE version >= 6",
        "cannot open the warehouse {path}: migration 0006_labels failed (Catalog Error: Column "
        'with name "label" already exists!)',
    ),
    (
        "DELETE FROM schema_migrations WHERE version = 5",
        "cannot open the warehouse {path}: schema_migrations records version "
        f"{len(known_migrations())} but not 5",
    ),
    (
        "DELETE FROM schema_migrations WHERE version >= 5",
        "cannot open the warehouse {path}: migration 0005_rank_at_evaluation failed",
    ),
]


@pytest.mark.parametrize(("damage", "message"), DAMAGE, ids=[d for d, _ in DAMAGE])
def test_a_damaged_schema_is_one_error_line(whole_warehouse, tmp_path, run_cli, damage, message):
    path = _damaged_copy(whole_warehouse, tmp_path, damage)
    before = _digest(path)
    result = run_cli("--db", path, "history", "-m", "AP", db=False)
    assert _one_error_line(result).startswith("Error: " + message.format(path=path))
    with pytest.raises(SchemaError, match=re.escape(message.format(path=path))):
        Warehouse(path)
    assert _digest(path) == before  # a failed migration is rolled back


@pytest.mark.parametrize("command", [["history", "-m", "AP"], ["ingest", "qrels", "qrels.txt"]])
def test_a_damaged_warehouse_is_left_as_it_is(whole_warehouse, tmp_path, run_cli, command):
    """Without schema_migrations, neither a command that reads nor one that writes creates a
    new, empty one (nor anything else): the damage is reported first."""
    _files(tmp_path)
    path = _damaged_copy(whole_warehouse, tmp_path, "DROP TABLE schema_migrations")
    before = _digest(path)
    result = run_cli("--db", path, *command, db=False)
    assert "schema_migrations is missing" in _one_error_line(result)
    assert _digest(path) == before


def test_an_unforeseen_database_error_is_one_error_line(whole_warehouse, tmp_path, run_cli):
    """A column whose type was changed by hand passes the opening checks; the query that needs
    it fails, and the CLI prints DuckDB's reason as one line, naming the SQL file that
    failed."""
    path = _damaged_copy(whole_warehouse, tmp_path, "ALTER TABLE judgments ALTER grade TYPE TEXT")
    result = run_cli("--db", path, "eval", "qrels", "sysA", "-m", "P@2", db=False)
    assert re.match(
        r"Error: sql/ranking_(sorted|per_query)\.sql could not be computed: Binder Error: ",
        _one_error_line(result),
    )
    assert "VARCHAR" in result.stderr


def test_a_cutoff_beyond_32_bits_is_a_measure_error(whole_warehouse, run_cli):
    result = run_cli("--db", whole_warehouse, "eval", "qrels", "sysA", "-m", "P@3000000000")
    assert _one_error_line(result) == (
        "Error: P: parameter cutoff must be a 32-bit integer (-2147483648 to 2147483647), "
        "not 3000000000\n"
    )
    level = run_cli(
        "--db", whole_warehouse, "eval", "qrels", "sysA", "-m", "AP", "-l", "3000000000"
    )
    assert _one_error_line(level) == (
        "Error: relevance_level must be a 32-bit integer (grades are), not 3000000000\n"
    )
    with Warehouse(whole_warehouse) as wh:
        with pytest.raises(MeasureError, match="must be a 32-bit integer"):
            wh.evaluate("qrels", "sysA", "nDCG@3000000000")
        with pytest.raises(MeasureError, match="must be a 32-bit integer"):
            wh.evaluate("qrels", "sysA", "AP(rel=3000000000)")


# --- URLs --------------------------------------------------------------------------------------


def test_postgresql_without_its_drivers_is_one_error_line(tmp_path):
    """The drivers are hidden from this process as an absent package is (import fails)."""
    program = (
        "import sys\n"
        "sys.modules['psycopg'] = sys.modules['adbc_driver_postgresql'] = None\n"
        "url = 'postgresql://analyst@db.example/evals'\n"
        "sys.argv = ['rankhouse', '--db', url, 'runs', 'list']\n"
        "from rankhouse.cli.app import app\n"
        "app()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path, timeout=600
    )
    assert done.returncode == 1
    assert re.fullmatch(
        r"Error: a postgresql:// warehouse needs the PostgreSQL drivers \(\S+ is missing\); "
        r'install them with: pip install "rankhouse\[postgres\]"\n',
        done.stderr,
    ), done.stderr


@pytest.mark.parametrize("url", ["sqlite:///w.db", "mysql://u@host/db", "s3://bucket/w.duckdb"])
def test_an_unsupported_url_is_refused_without_a_file(tmp_path, run_cli, url):
    result = run_cli("--db", url, "runs", "list", db=False)
    scheme = url.split("://")[0]
    assert _one_error_line(result) == (
        f"Error: unsupported warehouse URL scheme '{scheme}://': a warehouse is a DuckDB file "
        "(a path, or duckdb:///path) or a PostgreSQL server (postgresql://...)\n"
    )
    assert list(tmp_path.iterdir()) == []


# --- one writer at a time ----------------------------------------------------------------------

HOLD = (
    "import duckdb, sys, time\n"
    "conn = duckdb.connect(sys.argv[1])\n"
    "print('locked', flush=True)\n"
    "time.sleep(float(sys.argv[2]))\n"
)


def _hold(path, seconds: float) -> subprocess.Popen:
    """Another process holding the DuckDB file for ``seconds`` (returns once it holds it)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline() == "locked\n"
    return holder


def test_a_locked_file_is_waited_for(whole_warehouse, tmp_path):
    _files(tmp_path)
    holder = _hold(whole_warehouse, 3)
    result = finish(
        start(["--db", whole_warehouse, "eval", "qrels", "sysB", "-m", "P@1"], cwd=tmp_path)
    )
    holder.wait()
    assert result.exit_code == 0, result.stderr
    waiting = [line for line in result.stderr.splitlines() if line.startswith("waiting for")]
    assert len(waiting) == 1
    assert re.fullmatch(
        rf"waiting for {re.escape(str(whole_warehouse))}, which another process holds "
        r"\(python[\d.]*, PID \d+\): up to 30 s \(\$RANKHOUSE_LOCK_TIMEOUT\)",
        waiting[0],
    )


def test_a_file_locked_too_long_is_one_error_after_the_wait(whole_warehouse, tmp_path):
    holder = _hold(whole_warehouse, 20)
    try:
        result = finish(
            start(
                ["--db", whole_warehouse, "runs", "list"],
                cwd=tmp_path,
                env={"RANKHOUSE_LOCK_TIMEOUT": "0.5"},
            )
        )
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 1
    waited, error = result.stderr.splitlines()
    assert waited.startswith(f"waiting for {whole_warehouse}, which another process holds")
    assert re.fullmatch(
        rf"Error: the warehouse {re.escape(str(whole_warehouse))} is in use by another process "
        r"\(python[\d.]*, PID \d+\) and stayed locked for 0.5 s; a DuckDB file takes one "
        r"writing process at a time: run again when it has finished, wait longer with "
        r"\$RANKHOUSE_LOCK_TIMEOUT=SECONDS, or share a PostgreSQL warehouse",
        error,
    )


def test_two_nightly_jobs_on_one_new_file_both_finish(tmp_path):
    _files(tmp_path)
    target = tmp_path / "nightly" / "w.duckdb"
    jobs = [
        start(["--db", target, "eval", "qrels.txt", run, "-m", "AP", "-m", "P@1"], cwd=tmp_path)
        for run in ("a.txt", "b.txt")
    ]
    results = [finish(job) for job in jobs]
    assert [r.exit_code for r in results] == [0, 0], [r.stderr for r in results]
    with Warehouse(target, read_only=True) as wh, wh.connect() as conn:
        stored = conn.execute(
            "SELECT run_name, measure, value FROM latest_evaluations ORDER BY run_name, measure"
        ).all()
    assert [tuple(row) for row in stored] == [
        ("sysA", "AP", 1.0),
        ("sysA", "P@1", 1.0),
        ("sysB", "AP", 0.75),
        ("sysB", "P@1", 0.5),
    ]


@pytest.mark.parametrize("text", ["abc", "-1", "nan"])
def test_a_bad_lock_timeout_is_named(monkeypatch, text):
    monkeypatch.setenv("RANKHOUSE_LOCK_TIMEOUT", text)
    with pytest.raises(Exception, match=r"\$RANKHOUSE_LOCK_TIMEOUT is .*write a number of seconds"):
        lock_timeout()


def test_expected_objects_come_from_the_migrations():
    for dialect in ("duckdb", "postgresql"):
        names = expected_objects(dialect)
        assert {"runs", "run_rows", "run_ranking", "latest_evaluations"} <= names
        assert "run_rows_0005" not in names  # renamed to run_rows by migration 5


def test_object_names_of_a_whole_warehouse_are_the_catalogues(whole_warehouse, tmp_path):
    """The one-statement recognition of a whole warehouse gives what listing the catalogue
    gives; a missing object sends it to the catalogue, which lacks that object."""
    path = tmp_path / "copy.duckdb"
    path.write_bytes(whole_warehouse.read_bytes())
    with duckdb.connect(str(path)) as conn:
        listed = sorted(row[0].lower() for row in conn.execute(OBJECTS_QUERY).fetchall())
        conn.execute("CREATE TABLE notes (x INTEGER)")  # a table of the user's own
        conn.execute("DROP VIEW query_values")
    assert "query_values" in listed and "schema_migrations" in listed
    whole = duckdb.connect(str(whole_warehouse), read_only=True)
    damaged = duckdb.connect(str(path), read_only=True)
    try:
        assert object_names(DuckDBConnection(whole)) == listed
        found = object_names(DuckDBConnection(damaged))
        assert "query_values" not in found and "notes" in found
        assert sorted(set(listed) - {"query_values"} | {"notes"}) == sorted(found)
    finally:
        whole.close()
        damaged.close()


def test_has_table_names_the_warehouse_schemas_tables_and_views(tmp_path):
    """Asked outside a transaction, DuckDB's has_table probes the name; inside one it reads the
    catalogue. Both say yes to a table or view of the warehouse's schema, and no to a missing
    name, a temporary table or a table of another schema."""
    db = DuckDBFile(str(tmp_path / "w.duckdb"), Opening(hold=True))
    try:
        db.duck.execute("CREATE TABLE plain (x INTEGER)")
        db.duck.execute('CREATE VIEW "odd ""name""" AS SELECT 1 AS x')
        db.duck.execute("CREATE SCHEMA other")
        db.duck.execute("CREATE TABLE other.elsewhere (x INTEGER)")
        db.duck.execute("CREATE TEMP TABLE scratch (x INTEGER)")
        expected = {
            "plain": True,
            'odd "name"': True,
            "elsewhere": False,
            "scratch": False,
            "missing": False,
        }
        with db.connect() as conn:
            assert {name: conn.has_table(name) for name in expected} == expected
        with db.transaction() as conn:
            assert {name: conn.has_table(name) for name in expected} == expected
            conn.execute("INSERT INTO plain VALUES (1)")  # the transaction is still usable
        assert db.duck.execute("SELECT x FROM plain").fetchall() == [(1,)]
    finally:
        db.close()
