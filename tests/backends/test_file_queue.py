"""Processes waiting for one DuckDB file take turns, first come, first served.

Sixteen writers started together on one file failed by the luck of DuckDB's retries (issue 29:
1-5 of 16 after the 30 s wait, on their first step, while the batch took 41-46 s). They now
queue (rankhouse.backends.duckdb_file.locking): each gets the file in the order it came, and
``$RANKHOUSE_LOCK_TIMEOUT`` bounds how long the file may stay with one process, not how long
the queue is. A process that dies while it waits leaves no gap.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import pytest
from cli_helpers import finish, start

from rankhouse import Warehouse

QRELS = "".join(f"q{q} 0 d{d} {int(d % 3 == 0)}\n" for q in range(20) for d in range(30))


def _run(tag: str) -> str:
    return "".join(
        f"q{q} Q0 d{d} {r + 1} {100 - r}.0 {tag}\n"
        for q in range(20)
        for r, d in enumerate(sorted(range(30), key=lambda d: (d * len(tag) * ord(tag[-1])) % 31))
    )


def _files(folder, count: int) -> None:
    (folder / "qrels.txt").write_text(QRELS)
    for i in range(count):
        (folder / f"run{i}.txt").write_text(_run(f"sys{i:02d}"))


def test_sixteen_writers_on_one_new_file_all_finish(tmp_path):
    """Each holds the file for a fraction of a second; together they take several times the
    lock timeout, and none fails: the timeout bounds one holder, the queue keeps the order."""
    _files(tmp_path, 16)
    target = tmp_path / "nightly" / "w.duckdb"
    env = {"RANKHOUSE_LOCK_TIMEOUT": "3"}
    started = time.monotonic()
    jobs = [
        start(
            ["--db", target, "eval", "qrels.txt", f"run{i}.txt", "-m", "AP", "-m", "P@5"],
            cwd=tmp_path,
            env=env,
        )  # fmt: skip
        for i in range(16)
    ]
    results = [finish(job) for job in jobs]
    took = time.monotonic() - started
    failed = [r.stderr for r in results if r.exit_code != 0]
    assert failed == [], f"{len(failed)} of 16 failed in {took:.1f} s: {failed[:2]}"
    with Warehouse(target, read_only=True) as wh, wh.connect() as conn:
        assert conn.execute("SELECT count(*) FROM evaluations").scalar() == 32


HOLD = (
    "import duckdb, sys, time\n"
    "conn = duckdb.connect(sys.argv[1])\n"
    "print('locked', flush=True)\n"
    "sys.stdin.readline()\n"
)


def _holder(path) -> subprocess.Popen:
    """A process outside rankhouse that holds the file until a line arrives on its stdin."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline() == "locked\n"
    return holder


def _release(holder: subprocess.Popen) -> None:
    holder.stdin.write("\n")
    holder.stdin.flush()
    holder.wait()


def _waiting(job: subprocess.Popen) -> str:
    """The job's first line on stderr, which says that it waits."""
    line = job.stderr.readline()
    assert line.startswith("waiting for "), line
    return line


def _stored_order(path) -> list[str]:
    with Warehouse(path, read_only=True) as wh, wh.connect() as conn:
        return [row[0] for row in conn.execute("SELECT system_tag FROM runs ORDER BY id")]


def test_waiters_get_the_file_in_the_order_they_came(tmp_path):
    _files(tmp_path, 6)
    path = tmp_path / "w.duckdb"
    Warehouse(path).close()
    holder = _holder(path)
    jobs, lines = [], []
    try:
        for i in range(6):
            job = start(["--db", path, "ingest", "run", f"run{i}.txt"], cwd=tmp_path)
            lines.append(_waiting(job))
            jobs.append(job)
    finally:
        _release(holder)
    results = [finish(job) for job in jobs]
    assert [r.exit_code for r in results] == [0] * 6, [r.stderr for r in results]
    assert _stored_order(path) == [f"sys{i:02d}" for i in range(6)]
    assert re.fullmatch(r"waiting for \S+, which another process holds \(python[\d.]*, PID \d+\): "
                        r"up to 30 s \(\$RANKHOUSE_LOCK_TIMEOUT\)\n", lines[0])  # fmt: skip
    assert lines[1] == (
        f"waiting for {path} in turn behind other processes: up to 30 s for each "
        "($RANKHOUSE_LOCK_TIMEOUT)\n"
    )


def test_a_waiter_that_dies_leaves_no_gap(tmp_path):
    _files(tmp_path, 3)
    path = tmp_path / "w.duckdb"
    Warehouse(path).close()
    holder = _holder(path)
    try:
        first = start(["--db", path, "ingest", "run", "run0.txt"], cwd=tmp_path)
        _waiting(first)
        doomed = start(["--db", path, "ingest", "run", "run1.txt"], cwd=tmp_path)
        _waiting(doomed)
        last = start(["--db", path, "ingest", "run", "run2.txt"], cwd=tmp_path)
        _waiting(last)
        doomed.send_signal(signal.SIGKILL)
        doomed.wait()
    finally:
        _release(holder)
    assert finish(first).exit_code == 0
    assert finish(last).exit_code == 0
    assert _stored_order(path) == ["sys00", "sys02"]


@pytest.mark.parametrize("waiters", [4])
def test_a_holder_that_keeps_the_file_fails_every_waiter_after_the_timeout(tmp_path, waiters):
    """The queue does not lengthen the wait: when the file stays with one process, every
    waiter fails after the timeout, not the last one after the timeout times the queue."""
    _files(tmp_path, waiters)
    path = tmp_path / "w.duckdb"
    Warehouse(path).close()
    holder = _holder(path)
    try:
        started = time.monotonic()
        jobs = [
            start(
                ["--db", path, "ingest", "run", f"run{i}.txt"],
                cwd=tmp_path,
                env={"RANKHOUSE_LOCK_TIMEOUT": "2"},
            )  # fmt: skip
            for i in range(waiters)
        ]
        results = [finish(job) for job in jobs]
        took = time.monotonic() - started
    finally:
        _release(holder)
    for result in results:
        assert result.exit_code == 1
        assert re.search(
            r"\nError: the warehouse \S+ is in use by another process \(python[\d.]*, PID \d+\) "
            r"and stayed locked for 2 s; ",
            result.stderr,
        ), result.stderr
    assert took < 2 + 8
    assert _stored_order(path) == []
