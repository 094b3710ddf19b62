"""The end of a rankhouse process (rankhouse.cli.process.leave).

A finished command ends the process without the interpreter's teardown only when nothing is
left that the teardown would do: the exit handlers have run, no database the connector handed
out is open, no thread is running, and the output is flushed. Each case below breaks when one
of those is skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import is_closed

from rankhouse import engine
from rankhouse.cli import process
from rankhouse.duck import open_database
from rankhouse.measures import parse_measures, sqlfile

# What the interpreter's teardown does that os._exit skips: a module-level object's __del__
# runs when the modules are cleared. The exit handler and the unflushed output must not be lost.
_SCRIPT = """
import atexit, sys, threading, time
from rankhouse import Warehouse
from rankhouse.cli import process

process.install()

class Teardown:
    def __del__(self):
        sys.stdout.write("teardown ran\\n")
        sys.stdout.flush()

witness = Teardown()
atexit.register(lambda: sys.stdout.write("handler ran\\n"))
sys.stdout.write("output " * 20000 + "\\n")  # more than a pipe's buffer, not all flushed
if sys.argv[1] == "open":
    database = Warehouse(sys.argv[2], hold=True)  # as a command holds its warehouse
elif sys.argv[1] == "thread":
    threading.Thread(target=time.sleep, args=(0.5,)).start()
process.leave("Error: a message" if sys.argv[1] == "message" else 3)
sys.stdout.write("leave returned\\n")
sys.exit(3)
"""


def _run_script(*args: str) -> list[str]:
    """The script's lines after its long one (checked whole), run with buffered output."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 3, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "output " * 20000
    return lines[1:]


def test_leave_ends_the_process_after_the_handlers_with_the_output_flushed():
    assert _run_script("nothing") == ["handler ran"]  # no teardown; leave did not return


@pytest.mark.parametrize("memory", [False, True])
def test_leave_returns_while_a_database_is_open(tmp_path: Path, memory: bool):
    path = ":memory:" if memory else str(tmp_path / "w.duckdb")
    # the ordinary exit: the handler once, then the teardown
    assert _run_script("open", path) == ["leave returned", "handler ran", "teardown ran"]
    assert not (tmp_path / "w.duckdb.wal").exists()  # closed by the teardown


def test_leave_returns_while_another_thread_runs():
    assert _run_script("thread") == ["leave returned", "handler ran", "teardown ran"]


def test_leave_returns_for_a_message():
    # sys.exit("...") prints its message: the ordinary exit does that
    assert _run_script("message") == ["leave returned", "handler ran", "teardown ran"]


def test_a_closed_connection_is_known_as_closed(monkeypatch):
    import duckdb

    monkeypatch.setattr(process, "_HANDED_OUT", type(process._HANDED_OUT)())
    connection = process.connector(("test", 1), lambda: duckdb.connect(":memory:"))
    assert process.is_open(connection) and process._any_open()
    connection.close()
    assert not process.is_open(connection) and not process._any_open()


def test_a_command_closes_its_warehouse_before_the_process_ends(run_cli, db_path: Path):
    qrels = db_path.parent / "q.txt"
    run = db_path.parent / "r.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run.write_text("1 Q0 a 1 2.0 s\n1 Q0 b 2 1.0 s\n")
    result = run_cli("eval", str(qrels), str(run), "-m", "P@2")
    assert result.exit_code == 0, result.stderr
    assert "0.5000" in result.stdout
    assert db_path.exists()
    assert not Path(f"{db_path}.wal").exists()  # checkpointed and closed, not left to the WAL


def test_a_scratch_database_is_opened_through_the_installed_connector(monkeypatch):
    seen = []

    def connector(key, make):
        seen.append(key)
        return make()

    monkeypatch.setattr("rankhouse.duck._connector", connector)
    duck = engine.scratch_database()
    try:
        assert seen == [("scratch", engine.memory_limit())]
        assert duck.execute("SELECT count(*) FROM run_rows").fetchone() == (0,)
    finally:
        duck.close()
    assert is_closed(duck)
    assert open_database(("other",), lambda: "made") == "made" and seen[-1] == ("other",)


def test_load_files_reads_every_file_a_computation_runs(monkeypatch):
    measures = parse_measures(["AP", "nDCG@10", "P@5"])
    sqlfile.load_sql.cache_clear()
    engine.load_files(measures)

    def no_file(path):
        raise AssertionError(f"{path} read after load_files")

    monkeypatch.setattr(sqlfile, "read_sql", no_file)
    duck = engine.scratch_database()
    try:
        duck.execute("INSERT INTO judgments VALUES (1, 'q', 'a', 1), (1, 'q', 'b', 0)")
        duck.execute("INSERT INTO run_rows VALUES (1, 'q', 'b', NULL, 2.0), (1, 'q', 'a', NULL, 1)")
        values = engine.compute(duck, [1], 1, measures)
        _, columns = values.columns(1)
        assert columns["AP"] == [0.5]
        assert columns["P@5"] == [0.2]
        with pytest.raises(AssertionError, match="rr.sql read after load_files"):
            engine.compute(duck, [1], 1, parse_measures(["RR"]))
    finally:
        duck.close()
