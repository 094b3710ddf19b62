"""A notebook holding ``rankhouse.Warehouse(path)`` leaves the DuckDB file free between calls.

A Warehouse opens its DuckDB file for each call (or ``with wh.session():`` block) and closes it
after, so the command line, a second notebook and DuckDB itself read and write the file in
turn while the notebook keeps its object. The notebook here is a real Python process that
keeps one Warehouse and runs the statements it is sent, as a Jupyter kernel would; the other
processes run with ``$RANKHOUSE_LOCK_TIMEOUT=0``, so a file still held would fail them at once
("in use by another process") rather than after a wait.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli_env
from schema_helpers import RawDatabase, insert_run_and_qrels, migrate_by_hand

from rankhouse import NoWarehouseError, SchemaError, Warehouse
from rankhouse.backends import resolve_target
from rankhouse.backends.duckdb_file import store
from rankhouse.backends.schema import known_migrations
from rankhouse.duck import duckdb

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NO_WAIT = {"RANKHOUSE_LOCK_TIMEOUT": "0"}

# A kernel: one statement per line on stdin, its value as JSON on stdout (or the error's).
_KERNEL = r"""
import json, sys, traceback
import rankhouse
namespace = {"rankhouse": rankhouse}
for line in sys.stdin:
    try:
        value = eval(compile(line, "<cell>", "eval"), namespace)
        print(json.dumps({"value": value}, default=str), flush=True)
    except SyntaxError:
        exec(compile(line, "<cell>", "exec"), namespace)
        print(json.dumps({"value": None}), flush=True)
    except Exception as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
"""


class Notebook:
    """A Python process that keeps its variables between cells."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _KERNEL],
            cwd=cwd,
            env=cli_env(NO_WAIT),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, cell: str):
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(cell + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        assert "error" not in answer, answer["error"]
        return answer["value"]

    def fails(self, cell: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(cell + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())["error"]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


@pytest.fixture
def notebook(tmp_path: Path):
    book = Notebook(tmp_path)
    yield book
    book.close()


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rankhouse", "--db", "nb.duckdb", *args],
        cwd=tmp_path,
        env=cli_env(NO_WAIT),
        capture_output=True,
        text=True,
        timeout=600,
    )


def duckdb_process(tmp_path: Path, *statements: str) -> list:
    """DuckDB itself, in a process of its own: the rows of the last statement."""
    script = (
        "import json, sys, duckdb\n"
        "con = duckdb.connect('nb.duckdb')\n"
        "for s in sys.argv[1:]: rows = con.execute(s).fetchall()\n"
        "print(json.dumps(rows, default=str))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *statements],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_cli_a_second_notebook_and_duckdb_use_the_file_between_calls(notebook, tmp_path):
    notebook.run("wh = rankhouse.Warehouse('nb.duckdb')")
    notebook.run(f"wh.ingest_qrels({str(EXAMPLES / 'qrels.txt')!r}, name='dl19').name")
    bm25 = str(EXAMPLES / "run.bm25.txt")
    assert notebook.run(f"wh.evaluate('dl19', [{bm25!r}], ['AP']).runs") == ["bm25"]

    # the notebook keeps its Warehouse; the command line reads, read-only or not, and writes
    listed = cli(tmp_path, "--read-only", "runs", "list", "--format", "csv")
    assert listed.returncode == 0, listed.stderr
    assert ",bm25," in listed.stdout
    ingested = cli(tmp_path, "ingest", "run", str(EXAMPLES / "run.dense.txt"))
    assert ingested.returncode == 0, ingested.stderr
    evaluated = cli(tmp_path, "eval", "dl19", "dense", "-m", "AP", "--format", "csv")
    assert evaluated.returncode == 0, evaluated.stderr

    # the notebook sees what the command line wrote, and its stored evaluation
    assert notebook.run("wh.runs()['name'].tolist()") == ["bm25", "dense"]
    assert notebook.run("wh.evaluate('dl19', ['dense'], ['AP']).num_reused") == 1

    # a second notebook writes while the first keeps its Warehouse
    other = Notebook(tmp_path)
    try:
        other.run("wh2 = rankhouse.Warehouse('nb.duckdb')")
        night = str(EXAMPLES / "nights" / "bm25.night1.txt")
        assert other.run(f"wh2.ingest_run({night!r}, name='night1')[0].name") == "night1"
        assert notebook.run("len(wh.runs())") == 3
    finally:
        other.close()

    # DuckDB itself reads and writes the file between the notebook's calls
    assert duckdb_process(tmp_path, "SELECT count(*) FROM runs") == [[3]]
    duckdb_process(tmp_path, "CREATE TABLE notes (text VARCHAR)", "INSERT INTO notes VALUES ('x')")
    assert notebook.run("len(wh.runs())") == 3
    assert notebook.run("wh.history(measures=['AP'])['run'].tolist()") == ["bm25", "dense"]

    # a session holds the file for its block, and frees it when the block ends
    notebook.run("held = wh.session(); held.__enter__()")
    locked = cli(tmp_path, "--read-only", "runs", "list")
    assert locked.returncode == 1
    assert "in use by another process" in locked.stderr
    notebook.run("held.__exit__(None, None, None)")
    assert cli(tmp_path, "--read-only", "runs", "list").returncode == 0


def test_reading_commands_share_the_file_with_a_reader(notebook, tmp_path):
    """A read-only block of a notebook holds the file shared: the commands that only read open
    it read-only without being told and run beside it; one that writes is refused, told that a
    reader holds the file (not DuckDB's shell advice "-readonly")."""
    with Warehouse(tmp_path / "nb.duckdb") as wh:
        wh.evaluate(EXAMPLES / "qrels.txt", [EXAMPLES / "run.bm25.txt"], ["AP"])
    notebook.run("ro = rankhouse.Warehouse('nb.duckdb', read_only=True)")
    notebook.run("held = ro.connect(); held.__enter__()")
    pid = notebook.process.pid
    for command in (
        ["runs", "list", "--format", "csv"],
        ["runs", "show", "bm25"],
        ["qrels", "list"],
        ["history", "-m", "AP"],
        ["gate", "status"],
        ["sql", "SELECT count(*) FROM runs"],
    ):
        done = cli(tmp_path, *command)
        assert done.returncode == 0, (command, done.stderr)
    writing = cli(tmp_path, "ingest", "run", str(EXAMPLES / "run.dense.txt"))
    assert writing.returncode == 1
    assert f"PID {pid}, reading it)" in writing.stderr
    assert "this command writes" in writing.stderr and "-readonly" not in writing.stderr
    notebook.run("held.__exit__(None, None, None)")
    assert cli(tmp_path, "ingest", "run", str(EXAMPLES / "run.dense.txt")).returncode == 0

    # a writable Warehouse's connect() block keeps out every other process, readers too
    notebook.run("wh = rankhouse.Warehouse('nb.duckdb')")
    notebook.run("block = wh.connect(); block.__enter__()")
    locked = cli(tmp_path, "--read-only", "runs", "list")
    assert locked.returncode == 1
    assert f"in use by another process (python{sys.version_info.major}" in locked.stderr
    assert f"PID {pid})" in locked.stderr
    notebook.run("block.__exit__(None, None, None)")
    assert cli(tmp_path, "--read-only", "runs", "list").returncode == 0


def test_a_reading_command_upgrades_an_older_file_first(tmp_path):
    """``runs list`` opens read-only; a file at an older schema (the one before the newest
    migration, built by hand) is upgraded first, as by any command, not refused with "open it
    once without --read-only"."""
    path = tmp_path / "nb.duckdb"
    older = known_migrations()[-2].version
    db = RawDatabase(resolve_target(str(path)))
    with db.transaction() as con:
        migrate_by_hand(con, db.dialect, older)
        insert_run_and_qrels(con)
    db.close()
    listed = cli(tmp_path, "runs", "list", "--format", "csv")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[1].startswith("1,r,")
    con = duckdb.connect(str(path), read_only=True)
    newest = known_migrations()[-1].version
    assert con.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == newest


def test_a_held_warehouse_keeps_the_file_until_it_is_closed(notebook, tmp_path):
    Warehouse(tmp_path / "nb.duckdb").close()
    notebook.run("wh = rankhouse.Warehouse('nb.duckdb', hold=True)")
    locked = cli(tmp_path, "runs", "list")
    assert locked.returncode == 1 and "in use by another process" in locked.stderr
    notebook.run("wh.close()")
    assert cli(tmp_path, "runs", "list").returncode == 0


def test_a_call_waits_for_a_command_that_holds_the_file(notebook, tmp_path):
    # the notebook's call meets the file held (here: by DuckDB in another process) and says so
    Warehouse(tmp_path / "nb.duckdb").close()
    notebook.run("wh = rankhouse.Warehouse('nb.duckdb')")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, time; c = duckdb.connect('nb.duckdb'); "
            "print('held', flush=True); time.sleep(30)",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        error = notebook.fails("wh.runs()")
        assert error.startswith("WarehouseLockedError: the warehouse")
    finally:
        holder.kill()
        holder.wait()
    assert notebook.run("len(wh.runs())") == 0


# --- the schema check on opening, in process --------------------------------------------------


@pytest.fixture
def checks(monkeypatch):
    """How many times a DuckDB file's schema was checked on opening."""
    made: list[str] = []
    original = store.DuckDBFile._prepare

    def counting(self, create):
        made.append(self.path)
        return original(self, create)

    monkeypatch.setattr(store.DuckDBFile, "_prepare", counting)
    return made


def test_the_schema_is_checked_once_unless_the_file_changed(tmp_path, checks):
    path = tmp_path / "w.duckdb"
    wh = Warehouse(path)
    wh.ingest_qrels(EXAMPLES / "qrels.txt", name="q")
    wh.runs()
    wh.qrels_sets()
    assert len(checks) == 1  # its own writes do not count as a change
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE notes (x INTEGER)")
    con.close()
    assert wh.runs().empty
    assert len(checks) == 2  # another process wrote: checked again, once
    wh.runs()
    assert len(checks) == 2
    wh.close()


def test_a_file_damaged_or_removed_between_calls_is_said_so(tmp_path):
    path = tmp_path / "w.duckdb"
    wh = Warehouse(path)
    con = duckdb.connect(str(path))
    con.execute("DROP VIEW query_values")
    con.close()
    with pytest.raises(SchemaError, match="is damaged: query_values is missing"):
        wh.runs()
    path.unlink()
    with pytest.raises(NoWarehouseError, match="the file was removed"):
        wh.runs()
    assert not path.exists()  # not created again behind the caller's back


def test_an_in_memory_warehouse_keeps_its_data(tmp_path):
    with Warehouse(":memory:") as wh:
        wh.ingest_qrels(EXAMPLES / "qrels.txt", name="q")
        assert wh.qrels_sets()["name"].tolist() == ["q"]


def test_a_closed_warehouse_says_so(tmp_path):
    wh = Warehouse(tmp_path / "w.duckdb")
    wh.close()
    with pytest.raises(Exception, match="was closed"):
        wh.runs()
