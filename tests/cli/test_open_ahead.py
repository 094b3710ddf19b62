"""The database a command line will open is opened ahead in a thread, and taken by the command.

A connection opened ahead must be the one the command would have opened (same file, same
mode, same settings), must never create or fill a file, and must be closed when the command
asks for something else. These cases run in-process (the real CLI's behaviour with it is
covered by every CLI test, which runs through it).
"""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from engine_helpers import is_closed

from rankhouse import Warehouse, engine
from rankhouse import duck as scratch
from rankhouse.backends.duckdb_file import store
from rankhouse.cli import process
from rankhouse.cli.entry import _open_ahead
from rankhouse.duck import duckdb


@pytest.fixture()
def opened(monkeypatch):
    """Every DuckDB file connection made, in order, as (thread name, path, read_only, conn)."""
    made = []
    original = store.open_file

    def recording(path, read_only, config):
        connection = original(path, read_only, config)
        made.append((threading.current_thread().name, path, read_only, connection))
        return connection

    monkeypatch.setattr(store, "open_file", recording)
    yield made
    process.discard()


@pytest.fixture()
def warehouse_file(tmp_path):
    path = tmp_path / "w.duckdb"
    Warehouse(path).close()
    return path


def test_the_command_takes_the_connection_opened_ahead(warehouse_file, opened):
    _open_ahead(["--db", str(warehouse_file), "ingest", "run", "x.run"])
    with Warehouse(warehouse_file, create=False, hold=True) as wh:
        [(thread, path, read_only, connection)] = opened
        assert thread == "rankhouse-open-ahead"
        assert (path, read_only) == (str(warehouse_file), False)
        assert wh.backend.duck is connection
        assert wh.runs().empty


@pytest.mark.parametrize(
    "args",
    [
        ["--read-only", "--db={path}", "runs", "list"],
        ["--db", "{path}", "sql", "SELECT 1"],
        ["--db", "{path}", "runs", "list"],
        ["--db", "{path}", "history", "-m", "AP"],
    ],
    ids=["--read-only", "sql", "runs list", "history"],
)
def test_read_only_is_opened_ahead_read_only(warehouse_file, opened, args):
    # a read-write open, even brief, would make concurrent readers of the file wait
    _open_ahead([arg.format(path=warehouse_file) for arg in args])
    with Warehouse(warehouse_file, read_only=True, hold=True) as wh:
        [(thread, _, read_only, connection)] = opened
        assert read_only and wh.backend.duck is connection
        with pytest.raises(duckdb.Error, match="read-only"):
            connection.execute("CREATE TABLE t (x INTEGER)")


def test_sql_write_is_opened_ahead_for_writing(warehouse_file, opened):
    _open_ahead(["--db", str(warehouse_file), "sql", "--write", "CREATE TABLE t (x INTEGER)"])
    with Warehouse(warehouse_file, hold=True) as wh:
        [(_, _, read_only, connection)] = opened
        assert not read_only and wh.backend.duck is connection


def test_another_request_closes_the_connection_opened_ahead(warehouse_file, opened):
    _open_ahead(["--db", str(warehouse_file), "eval", "q", "r", "-m", "AP"])
    with Warehouse(warehouse_file, read_only=True, hold=True) as wh:  # not what was opened ahead
        (_, _, ahead_mode, ahead_connection), (thread, _, mode, connection) = opened
        assert (ahead_mode, mode) == (False, True)
        assert thread == threading.current_thread().name
        assert is_closed(ahead_connection)
        assert wh.backend.duck is connection


def test_a_connection_nobody_takesis_closed(warehouse_file, opened):
    _open_ahead(["--db", str(warehouse_file), "sql", "SELECT 1"])
    process.discard()
    [(_, _, _, connection)] = opened
    assert is_closed(connection)
    assert process.take(store.database_key(str(warehouse_file), False, {})) is None


@pytest.mark.parametrize("content", [None, b""], ids=["missing", "empty"])
def test_no_file_is_created_or_filled_ahead(opened, tmp_path, content):
    path = tmp_path / "w.duckdb"
    if content is not None:
        path.write_bytes(content)
    _open_ahead(["--db", str(path), "ingest", "run", "x.run"])
    process.discard()
    assert opened == []
    if content is None:
        assert not path.exists()
    else:
        assert path.read_bytes() == content


@pytest.mark.parametrize(
    "args",
    [
        ["--db", "{path}", "measures"],
        ["--db", "{path}", "eval", "--help"],
        ["--db", "{path}", "--help"],
        ["--db", "postgresql://nobody@localhost:1/none", "history"],
    ],
)
def test_what_opens_nothing_ahead(warehouse_file, opened, args):
    _open_ahead([arg.format(path=warehouse_file) for arg in args])
    process.discard()
    assert opened == []


def test_a_failure_ahead_leaves_the_command_to_report_it(opened, tmp_path):
    path = tmp_path / "w.duckdb"
    path.write_bytes(b"not a database, but not empty either")
    _open_ahead(["--db", str(path), "history"])
    assert process.take(store.database_key(str(path), False, {})) is None
    assert path.read_bytes() == b"not a database, but not empty either"


def test_trec_eval_without_a_warehouse_takes_the_engine_database(monkeypatch, tmp_path):
    monkeypatch.delenv("RANKHOUSE_DB", raising=False)
    made = []
    original = scratch.new_database

    def recording(limit):
        made.append((threading.current_thread().name, original(limit)))
        return made[-1][1]

    monkeypatch.setattr(scratch, "new_database", recording)
    _open_ahead(["trec-eval", "-m", "map", "qrels", "run"])
    duck = engine.scratch_database()
    try:
        [(thread, connection)] = made
        assert thread == "rankhouse-open-ahead" and duck is connection
        assert duck.execute("SELECT count(*) FROM run_rows").fetchone() == (0,)
        assert engine.scratch_database() is not duck  # taken once: the next one is new
    finally:
        duck.close()


def test_trec_eval_with_a_warehouse_opens_the_file(warehouse_file, opened, monkeypatch):
    monkeypatch.setenv("RANKHOUSE_DB", str(warehouse_file))
    _open_ahead(["trec-eval", "-m", "map", "qrels", "run"])
    with Warehouse(warehouse_file, hold=True) as wh:
        [(thread, _, _, connection)] = opened
        assert thread == "rankhouse-open-ahead" and wh.backend.duck is connection


def test_the_engine_database_is_made_without_importing_the_engine():
    # The thread that makes it ahead connects as soon as DuckDB is loaded; importing the
    # measure engine first (its catalogue, its SQL files) made the database come late.
    script = (
        "import sys\n"
        "from rankhouse.cli import process\n"
        "key, duck = process.trec_eval_database(None, True)\n"
        "assert duck.execute('SELECT count(*) FROM run_rows, judgments').fetchone() == (0,)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('rankhouse.', 'pandas'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.strip()
    for heavy in ("rankhouse.engine", "rankhouse.measures", "rankhouse.warehouse", "pandas"):
        assert f"'{heavy}" not in loaded, loaded
