"""Evaluating files: a qrels file is ingested in a thread while the run files are ingested
(rankhouse.evaluation._resolve_qrels_and_runs). What the caller sees must be what the two
ingests one after the other give: the qrels' error before a run's, and no run stored when
the qrels fail."""

from __future__ import annotations

import threading
import time

import pytest

from rankhouse import InputError, Warehouse, evaluation
from rankhouse.ingest import progress

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\nq2 Q0 d3 1 3.0 sys\n"
BAD_QRELS = "q1 0 d1 1\nq1 0 d2 high\n"
BAD_RUN = "q1 Q0 d1 1 2.0 sys\nq1 Q0 d1 2 1.0 sys\n"  # d1 twice for q1


@pytest.fixture
def files(tmp_path):
    def write(name: str, text: str):
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture
def qrels_threads(monkeypatch) -> list[str]:
    """The threads the qrels were resolved on."""
    seen: list[str] = []
    original = evaluation.resolve_qrels

    def recording(wh, qrels):
        seen.append(threading.current_thread().name)
        return original(wh, qrels)

    monkeypatch.setattr(evaluation, "resolve_qrels", recording)
    return seen


def _stored(wh: Warehouse, table: str) -> int:
    with wh.connect() as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").scalar()


def test_the_qrels_are_read_beside_the_runs_with_the_same_result(files, tmp_path, qrels_threads):
    qrels, run = files("q.txt", QRELS), files("r.txt", RUN)
    with Warehouse(tmp_path / "w.duckdb") as wh:
        beside = wh.evaluate(qrels, run, ["AP", "P@2"]).summary
    assert qrels_threads == ["rankhouse-qrels"]
    with Warehouse(tmp_path / "again.duckdb") as wh:
        in_turn = evaluation.evaluate(
            wh, wh.qrels(wh.ingest_qrels(qrels).id)["name"], run, ["AP", "P@2"]
        )
    assert beside.equals(in_turn.summary)


def test_a_big_qrels_file_is_read_first(files, tmp_path, qrels_threads, monkeypatch):
    monkeypatch.setattr(progress, "BIG_FILE_BYTES", 10)  # its progress bar would meet the run's
    with Warehouse(tmp_path / "w.duckdb") as wh:
        wh.evaluate(files("q.txt", QRELS), files("r.txt", RUN), ["AP"])
    assert qrels_threads == ["MainThread"]


def test_bad_qrels_are_reported_and_no_run_is_stored(files, tmp_path, monkeypatch):
    original = evaluation.resolve_qrels

    def slow(wh, qrels):  # the run is read and ready to commit well before the qrels fail
        time.sleep(0.5)
        return original(wh, qrels)

    monkeypatch.setattr(evaluation, "resolve_qrels", slow)
    with Warehouse(tmp_path / "w.duckdb") as wh:
        with pytest.raises(InputError, match="q.txt"):
            wh.evaluate(files("q.txt", BAD_QRELS), files("r.txt", RUN), ["AP"])
        assert _stored(wh, "runs") == _stored(wh, "run_rows") == 0
        assert _stored(wh, "qrels_sets") == 0


def test_when_both_files_are_bad_the_qrels_error_is_reported(files, tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        with pytest.raises(InputError, match="q.txt"):
            wh.evaluate(files("q.txt", BAD_QRELS), files("r.txt", BAD_RUN), ["AP"])
        assert _stored(wh, "runs") == _stored(wh, "qrels_sets") == 0


def test_a_bad_run_is_reported_and_the_qrels_stay_stored(files, tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        with pytest.raises(InputError, match="r.txt"):
            wh.evaluate(files("q.txt", QRELS), files("r.txt", BAD_RUN), ["AP"])
        assert _stored(wh, "qrels_sets") == 1  # as when the qrels are ingested first
        assert _stored(wh, "runs") == 0
