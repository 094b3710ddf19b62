"""rankhouse.evaluate keeps one in-memory engine database per process and gives each call a
connection of its own (engine.scratch_cursor): calls must stay independent of each other, of
other threads and of a forked parent, and a memory limit lifted for one call comes back."""

from __future__ import annotations

import os
import threading

import pytest

import rankhouse
from rankhouse import duck as scratch
from rankhouse.duck import BOUND_VARIABLE
from rankhouse.engine import scratch_cursor

QRELS = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"d": 1}}


def _run(first: str, second: str) -> dict[str, dict[str, float]]:
    return {"q1": {first: 3.0, second: 2.0, "x": 1.0}, "q2": {"y": 2.0, "d": 1.0}}


def _means(run) -> list[float]:
    return rankhouse.evaluate(QRELS, run, ["P@1", "RR"]).summary.iloc[0, 1:].tolist()


# By hand: q1 ranks its first document at 1; q2 has d (relevant) at rank 2 (RR 1/2, P@1 0).
#   a, b: q1 P@1 = 1, RR = 1        -> means P@1 = 1/2, RR = 3/4
#   b, c: q1 P@1 = 0, RR = 1/2      -> means P@1 = 0,   RR = 1/2
A_FIRST = [0.5, 0.75]
B_FIRST = [0.0, 0.5]


def test_calls_in_turn_see_only_their_own_rows():
    assert _means(_run("a", "b")) == A_FIRST
    assert _means(_run("b", "c")) == B_FIRST  # a's rows from the call before are gone
    assert _means(_run("a", "b")) == A_FIRST


def test_calls_on_several_threads_at_once_keep_their_rows_apart():
    results: dict[int, list[list[float]]] = {}
    start = threading.Barrier(4)

    def work(i: int) -> None:
        start.wait()
        run = _run("a", "b") if i % 2 == 0 else _run("b", "c")
        results[i] = [_means(run) for _ in range(5)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i in range(4):
        assert results[i] == [A_FIRST if i % 2 == 0 else B_FIRST] * 5


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_evaluates_on_a_database_of_its_own():
    assert _means(_run("a", "b")) == A_FIRST  # the parent has its database
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            ok = _means(_run("b", "c")) == B_FIRST
        except BaseException:
            ok = False
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.waitpid(pid, 0)
    assert answer == b"1"
    assert _means(_run("a", "b")) == A_FIRST  # the parent's database still works


def test_a_lifted_memory_limit_is_put_back_when_the_call_ends(monkeypatch):
    monkeypatch.setenv("RANKHOUSE_MEMORY_LIMIT", "200MB")
    with scratch_cursor() as duck:
        assert duck.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "190.7 MiB"
        # what compute() does when an evaluation ran out of memory under the limit
        duck.execute("RESET memory_limit")
        duck.execute(f"RESET VARIABLE {BOUND_VARIABLE}")
        assert duck.execute("SELECT current_setting('memory_limit')").fetchone()[0] != "190.7 MiB"
    with scratch_cursor() as duck:
        assert duck.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "190.7 MiB"
        tables = duck.execute("SELECT table_name, temporary FROM duckdb_tables() ORDER BY 1")
        assert tables.fetchall() == [("judgments", True), ("run_rows", True)]


def _shared_databases() -> list:
    """This process's databases under the memory limit in force (each limit has its own)."""
    from rankhouse.engine import values as engine

    key = (os.getpid(), scratch.memory_limit())
    return [shared for found, shared in engine._SHARED.items() if found == key]


def test_small_calls_share_one_database_and_a_large_call_retires_it(monkeypatch):
    from rankhouse.engine import values as engine

    assert _means(_run("a", "b")) == A_FIRST
    [kept] = _shared_databases()
    assert _means(_run("b", "c")) == B_FIRST
    assert _shared_databases() == [kept]  # the same database, not a new one per call
    # 4 judgments and 5 run rows: more than this threshold, so the call retires the database
    monkeypatch.setattr(engine, "KEEP_DATABASE_UP_TO", 8)
    assert _means(_run("a", "b")) == A_FIRST
    assert _shared_databases() == []
    assert kept.retired and kept.users == 0
    with pytest.raises(Exception, match="closed"):  # its memory went back with it
        kept.connection.execute("SELECT 1")
    assert _means(_run("b", "c")) == B_FIRST  # the next call makes a new one


def test_a_call_that_fails_gives_its_connection_back():
    import pandas as pd

    assert _means(_run("a", "b")) == A_FIRST
    [shared] = _shared_databases()
    bad_run = pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"]})  # no score column
    with pytest.raises(rankhouse.InputError):
        rankhouse.evaluate(QRELS, bad_run, ["P@1"])
    assert _shared_databases() == [shared] and shared.users == 0
    assert _means(_run("b", "c")) == B_FIRST  # the failed call's rows are gone
