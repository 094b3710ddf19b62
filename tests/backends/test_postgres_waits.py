"""Every wait of rankhouse on a PostgreSQL server is bounded, and says what it waited for.

The issue's cases, on a real server: a login holding the advisory lock an ``eval`` needs
(``SELECT pg_advisory_lock(K), pg_sleep(30)`` held one for 28.7 s), a server that stops
answering (a paused postmaster, a port that accepts and never replies: ``runs list`` and
``eval`` still waited after 60 s), a statement that runs on. Each now fails after its limit
(docs/scaling.md, Time limits) with one ``Error:`` line; limits come from the environment or
the URL, and a role's own settings are kept.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import threading
import time

import psycopg
import pytest
import sqlalchemy as sa
from cli_helpers import ERROR_LINE
from conftest import EXAMPLES

from rankhouse import Warehouse
from rankhouse.backends.postgresql.connection import key_number
from rankhouse.backends.schema import MIGRATION_LOCK

#: Seconds a command may take beyond its limit (starting Python, importing, connecting).
SLACK = 8.0


def _one_error_line(result) -> str:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert re.match(ERROR_LINE, result.stderr), result.stderr
    return result.stderr


def _timed(run_cli, *args, env=None):
    started = time.monotonic()
    result = run_cli(*args, db=False, env=env)
    return result, time.monotonic() - started


@pytest.fixture
def stored(postgres_url):
    """A warehouse with qrels, a run and the run's AP; (url, run id, qrels id)."""
    with Warehouse(postgres_url) as wh:
        wh.evaluate(EXAMPLES / "qrels.txt", EXAMPLES / "run.bm25.txt", ["AP"])
        run_id = wh.run("bm25")["id"]
        qrels_id = wh.qrels("qrels")["id"]
    return postgres_url, run_id, qrels_id


@pytest.fixture
def holder(stored):
    """Another login's session (as any login can: no role setup here) that takes advisory
    locks and holds them until the test ends."""
    url = stored[0]
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("SET application_name = 'holder'")
    yield conn
    conn.close()


def _pid_and_login(conn) -> tuple[int, str]:
    return conn.execute("SELECT pg_backend_pid(), current_user").fetchone()


def test_a_held_evaluation_lock_fails_eval_after_the_lock_timeout(stored, holder, run_cli):
    url, run_id, qrels_id = stored
    holder.execute("SELECT pg_advisory_lock(%s)", [key_number(f"evaluations:{run_id}:{qrels_id}")])
    pid, login = _pid_and_login(holder)
    result, took = _timed(run_cli, "--db", url, "eval", "qrels", "bm25", "-m", "AP",
                          "--recompute", env={"RANKHOUSE_LOCK_TIMEOUT": "2"})  # fmt: skip
    assert _one_error_line(result) == (
        f"Error: waited 2s for the lock on the evaluations of run {run_id} against qrels set "
        f"{qrels_id}, which another session holds (PID {pid}, login {login}, holder): run again "
        "when it has finished, or wait longer with $RANKHOUSE_LOCK_TIMEOUT=SECONDS\n"
    )
    assert 2.0 <= took < 2.0 + SLACK
    holder.execute("SELECT pg_advisory_unlock_all()")
    done = run_cli("--db", url, "eval", "qrels", "bm25", "-m", "AP", "--recompute", db=False)
    assert done.exit_code == 0, done.stderr


def test_a_held_name_lock_fails_ingest_after_the_lock_timeout(stored, holder, run_cli):
    url = stored[0]
    holder.execute("SELECT pg_advisory_lock(%s)", [key_number("name:runs:dense")])
    result, took = _timed(run_cli, "--db", url, "ingest", "run", EXAMPLES / "run.dense.txt",
                          env={"RANKHOUSE_LOCK_TIMEOUT": "1.5"})  # fmt: skip
    assert _one_error_line(result).startswith(
        "Error: waited 1500ms for the lock on the name 'dense' of the runs, which another "
        "session holds (PID "
    )
    assert took < 1.5 + SLACK
    with Warehouse(url, read_only=True) as wh:
        assert list(wh.runs()["name"]) == ["bm25"]


def test_a_held_migration_lock_fails_a_new_warehouse_after_the_lock_timeout(postgres_url, run_cli):
    with psycopg.connect(postgres_url, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK])
        wait = {"RANKHOUSE_LOCK_TIMEOUT": "1"}
        qrels = EXAMPLES / "qrels.txt"
        result, took = _timed(run_cli, "--db", postgres_url, "ingest", "qrels", qrels, env=wait)
    assert _one_error_line(result).startswith(
        "Error: waited 1s for the lock on the warehouse's schema (held while a process migrates "
        "it), which another session holds (PID "
    )
    assert took < 1 + SLACK


def test_a_statement_that_runs_on_is_stopped(stored, run_cli):
    url = stored[0]
    result, took = _timed(run_cli, "--db", url, "sql", "SELECT pg_sleep(30)",
                          env={"RANKHOUSE_STATEMENT_TIMEOUT": "1"})  # fmt: skip
    assert _one_error_line(result) == (
        "Error: the server stopped the statement at its time limit (statement_timeout: "
        "$RANKHOUSE_STATEMENT_TIMEOUT seconds, default 600; 0: none)\n"
    )
    assert took < 1 + SLACK


def _show(run_cli, url: str, setting: str, env=None) -> str:
    shown = run_cli("--db", url, "sql", f"SHOW {setting}", "-f", "csv", db=False, env=env)
    assert shown.exit_code == 0, shown.stderr
    return shown.stdout.splitlines()[1]


def test_limits_come_from_the_environment_unless_the_role_set_them(
    stored, postgres_server, run_cli
):
    url = stored[0]
    assert _show(run_cli, url, "lock_timeout") == "30s"
    assert _show(run_cli, url, "statement_timeout") == "10min"
    assert _show(run_cli, url, "lock_timeout", {"RANKHOUSE_LOCK_TIMEOUT": "4"}) == "4s"
    login = sa.make_url(url).username
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"ALTER ROLE {login} SET statement_timeout = '7s'")
    assert _show(run_cli, url, "statement_timeout") == "7s"  # the administrator's choice
    forced = {"RANKHOUSE_STATEMENT_TIMEOUT": "3"}
    assert _show(run_cli, url, "statement_timeout", forced) == "3s"  # unless told otherwise


# --- a server that stops answering -------------------------------------------------------------


@pytest.fixture
def silent_port():
    """A TCP port that accepts connections and never answers (a hung server or proxy)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    listener.close()


@pytest.mark.parametrize(
    "command",
    [["runs", "list"], ["eval", "qrels", "bm25", "-m", "AP"], ["ingest", "qrels", "q.txt"]],
    ids=" ".join,
)
def test_a_port_that_never_answers_fails_after_the_connect_timeout(
    silent_port, run_cli, tmp_path, command
):
    (tmp_path / "q.txt").write_bytes((EXAMPLES / "qrels.txt").read_bytes())
    url = f"postgresql://nightly@127.0.0.1:{silent_port}/evals"
    result, took = _timed(run_cli, "--db", url, *command, env={"PGCONNECT_TIMEOUT": "2"})
    assert _one_error_line(result) == (
        f"Error: cannot connect to the warehouse postgresql://nightly@127.0.0.1:"
        f"{silent_port}/evals: the server did not answer within 2 s (connect_timeout; wait "
        "longer with ?connect_timeout=SECONDS in the URL or $PGCONNECT_TIMEOUT)\n"
    )
    assert took < 2 + SLACK


def _postmaster(url: str) -> int | None:
    """The process id of the test server's postmaster when this machine can signal it."""
    with psycopg.connect(url) as conn:
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    try:
        with open(f"/proc/{backend}/status") as status:
            parent = int(re.search(r"^PPid:\s+(\d+)", status.read(), re.M).group(1))
        os.kill(parent, 0)
    except (OSError, AttributeError):
        return None
    return parent


@pytest.mark.parametrize("command", [["runs", "list"], ["eval", "qrels", "bm25", "-m", "AP"]])
def test_a_paused_server_fails_after_the_connect_timeout(stored, run_cli, command):
    url = stored[0]
    postmaster = _postmaster(url)
    if postmaster is None:
        pytest.skip("the test server's postmaster is not a process this test may signal")
    configured = url.replace("?", "?connect_timeout=2&")  # the URL sets it, too
    os.kill(postmaster, signal.SIGSTOP)
    try:
        result, took = _timed(run_cli, "--db", configured, *command)
    finally:
        os.kill(postmaster, signal.SIGCONT)
    assert re.fullmatch(
        r"Error: cannot connect to the warehouse \S+: the server did not answer within 2 s "
        r"\(connect_timeout; [^\n]+\)\n",
        _one_error_line(result),
    )
    assert took < 2 + SLACK
