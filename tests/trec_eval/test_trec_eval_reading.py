"""trec-eval without a warehouse reads the run on a second connection while it reads the
qrels: the numbers are the same, and trec_eval's order of errors holds (the qrels' first)."""

from __future__ import annotations

import io
import threading

import duckdb
import pytest

from rankhouse.engine import scratch_database
from rankhouse.trec_eval import files as qrels_reader
from rankhouse.trec_eval import unstored
from rankhouse.trec_eval import unstored as direct
from rankhouse.trec_eval.runner import main

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n"
RUN = "q1 Q0 b 1 2.0 r\nq1 Q0 a 2 1.0 r\nq2 Q0 c 1 5.0 r\n"


def _trec_eval(tmp_path, monkeypatch, qrels: str | None, run: str | None, *args: str):
    monkeypatch.chdir(tmp_path)
    if qrels is not None:
        (tmp_path / "qrels").write_text(qrels)
    if run is not None:
        (tmp_path / "run").write_text(run)
    out, err = io.StringIO(), io.StringIO()
    code = main([*args, "qrels", "run"], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_run_is_read_beside_the_qrels(tmp_path, monkeypatch):
    threads: dict[str, str] = {}
    for module, name in ((direct, "read_unstored"), (qrels_reader, "read_qrels")):
        original = getattr(module, name)

        def spied(*args, _original=original, _name=name, **kwargs):
            threads[_name] = threading.current_thread().name
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, spied)
    monkeypatch.setattr("rankhouse.trec_eval.unstored.read_unstored", direct.read_unstored)
    monkeypatch.setattr("rankhouse.trec_eval.unstored.read_qrels", qrels_reader.read_qrels)
    code, out, err = _trec_eval(tmp_path, monkeypatch, QRELS, RUN, "-q", "-m", "map")
    assert threads == {"read_unstored": "rankhouse-run", "read_qrels": "MainThread"}
    # q1: a (relevant) at rank 2 of 2, R = 1: AP 1/2; q2: c at rank 1: AP 1
    assert (code, err) == (0, "")
    assert out == (
        "map                   \tq1\t0.5000\n"
        "map                   \tq2\t1.0000\n"
        "map                   \tall\t0.7500\n"
    )


@pytest.mark.parametrize(
    ("qrels", "run", "message"),
    [
        # both files missing: trec_eval names the qrels
        (None, None, "trec_eval.get_qrels: Cannot read qrels file 'qrels'"),
        # a malformed qrels line and an empty run
        ("q1 0 a 1\n\nq1 0 b 0\n", "", "trec_eval.get_qrels: Malformed line 2"),
        # good qrels: the run's own problem
        (QRELS, None, "trec_eval.get_results: Cannot read results file 'run'"),
        (QRELS, "", "trec_eval.get_results: Cannot read results file 'run'\n"),
    ],
    ids=["both-missing", "bad-qrels-empty-run", "run-missing", "run-empty"],
)
def test_the_qrels_problem_is_reported_first(tmp_path, monkeypatch, qrels, run, message):
    code, out, err = _trec_eval(tmp_path, monkeypatch, qrels, run, "-m", "map")
    assert (code, out) == (2, "")
    assert err.startswith(message)


def test_a_run_trec_eval_stops_on_is_evaluated_as_it_does(tmp_path, monkeypatch):
    """A regular run without a topic of the qrels (no -c): trec_eval prints the topics before
    it and stops; the rows read beside the qrels give way to the general reader."""
    code, out, err = _trec_eval(
        tmp_path,
        monkeypatch,
        "1 0 a 1\n2 0 b 1\n3 0 c 1\n",
        "1 Q0 a 1 1 r\n3 Q0 c 1 1 r\n",
        "-q",
        "-m",
        "map",
    )
    assert (code, out) == (4, "map                   \t1\t1.0000\n")
    assert "trec_eval: result qid '2' not found in qrels" in err


def test_a_qrels_error_before_the_run_is_read_leaves_it_unread(monkeypatch):
    """The qrels fail while the run's bytes are still being scanned: the run is not read."""
    release, read = threading.Event(), []

    def odd_bytes(path):
        release.wait(10)
        return frozenset()

    monkeypatch.setattr(unstored, "results_odd_bytes", odd_bytes)
    monkeypatch.setattr(unstored, "read_unstored", lambda *args: read.append(args))
    duck = scratch_database()
    reading = unstored._RunReading(duck, "run")
    # the scan ends only once the reading has been told to stop
    threading.Thread(target=lambda: (reading._stopped.wait(10), release.set())).start()
    with pytest.raises(ValueError), reading:
        raise ValueError("the qrels' error")
    duck.close()
    assert read == []


def test_a_qrels_error_interrupts_the_run_being_read(monkeypatch):
    """The qrels fail while DuckDB reads the run: the statement is interrupted, not waited for."""
    started = threading.Event()

    def read_unstored(cursor, *args):
        started.set()
        # about 15 s on two cores, unless interrupted
        return cursor.execute("SELECT sum(hash(range) % 7) FROM range(2000000000)").fetchone()

    monkeypatch.setattr(unstored, "results_odd_bytes", lambda path: frozenset())
    monkeypatch.setattr(unstored, "read_unstored", read_unstored)
    duck = scratch_database()
    reading = unstored._RunReading(duck, "run")
    with pytest.raises(ValueError), reading:
        started.wait(10)
        raise ValueError("the qrels' error")
    duck.close()
    with pytest.raises(duckdb.InterruptException):
        reading.result()
