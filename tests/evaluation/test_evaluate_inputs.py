"""Evaluating files: the qrels file is ingested first, then the run files. The qrels' error
comes before a run's, and no run is stored when the qrels fail."""

from __future__ import annotations

import pytest

from rankhouse import InputError, Warehouse

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


def _stored(wh: Warehouse, table: str) -> int:
    with wh.connect() as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").scalar()


def test_bad_qrels_are_reported_and_no_run_is_stored(files, tmp_path):
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


def test_a_bad_run_is_reported_and_nothing_stays_stored(files, tmp_path):
    """A failed call leaves the warehouse as it found it: the qrels file it ingested before
    the run failed is removed again (docs/cli.md)."""
    with Warehouse(tmp_path / "w.duckdb") as wh:
        with pytest.raises(InputError, match="r.txt"):
            wh.evaluate(files("q.txt", QRELS), files("r.txt", BAD_RUN), ["AP"])
        assert _stored(wh, "qrels_sets") == 0
        assert _stored(wh, "runs") == 0
