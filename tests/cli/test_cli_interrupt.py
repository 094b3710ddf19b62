"""Ctrl-C (SIGINT) during ``ingest run`` or ``eval``: one line, exit 130, the warehouse intact.

DuckDB turns the signal into its own error while it works (``RuntimeError: Query
interrupted``), and printed a traceback in 6 of 8 tries; rankhouse notes the signal itself, so
that whatever exception it becomes ends the command as an interruption. Each case sends SIGINT
at several moments of a command on a large generated run, measured first without a signal,
and checks after each that the warehouse opens and holds whole runs and evaluations only.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import cli_env

from rankhouse import NoWarehouseError, Warehouse

INTERRUPTED = (
    "Interrupted: the warehouse is intact (the step under way was rolled back; what finished "
    "before it stays stored)\n"
)
QUERIES, DEPTH = 1500, 1000
#: Where in the command's uninterrupted duration SIGINT arrives.
MOMENTS = (0.15, 0.3, 0.45, 0.6, 0.75, 0.9)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]


@pytest.fixture(scope="module")
def big_files(tmp_path_factory) -> tuple[Path, Path]:
    """A 1.5-million-line run and its qrels (random documents, a fixed seed)."""
    folder = tmp_path_factory.mktemp("big")
    rng = random.Random(29)
    run, qrels = folder / "big.run", folder / "big.qrels"
    with run.open("w") as out:
        for q in range(QUERIES):
            out.writelines(
                f"q{q} Q0 d{rng.randrange(10**7)}x{r} {r + 1} {DEPTH - r}.5 big\n"
                for r in range(DEPTH)
            )
    with qrels.open("w") as out:
        for q in range(QUERIES):
            out.writelines(f"q{q} 0 d{rng.randrange(10**7)}x{r} {r % 3}\n" for r in range(40))
    return qrels, run


def _cli(db: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "rankhouse", "--db", str(db), *args],
        cwd=db.parent,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_at_a_terminal,
    )


def _as_at_a_terminal() -> None:
    """SIGINT as a terminal's Ctrl-C finds it: a suite started in the background by a shell
    (``scripts/check &``) runs with SIGINT ignored, which every child would inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _whole(db: Path) -> tuple[int, int]:
    """(runs, evaluations) of a warehouse that opens, each run with all of its rows and each
    evaluation with a value per query; (0, 0) where none was made yet."""
    if not db.exists():
        return 0, 0
    try:
        wh = Warehouse(db, read_only=True)
    except NoWarehouseError:  # interrupted before its tables were created: none was made
        return 0, 0
    with wh, wh.connect() as conn:
        runs = conn.execute("SELECT id, num_rows FROM runs").all()
        for run_id, num_rows in runs:
            found = conn.execute(
                "SELECT count(*) FROM run_rows WHERE run_id = :id", {"id": run_id}
            ).scalar()
            assert found == num_rows
        assert conn.execute("SELECT count(*) FROM run_rows").scalar() == sum(n for _, n in runs)
        evaluations = conn.execute(
            "SELECT e.id, count(v.query_id) FROM evaluations e "
            "LEFT JOIN evaluation_values v ON v.evaluation_id = e.id GROUP BY e.id"
        ).all()
        assert all(values == QUERIES for _, values in evaluations)
        return len(runs), len(evaluations)


def _interrupt_at_moments(tmp_path: Path, prepare, args: list[str]) -> list[int]:
    """Run ``args`` once to time it, then once per moment with SIGINT; the exit codes."""
    db = tmp_path / "timing.duckdb"
    prepare(db)
    started = time.monotonic()
    timed = _cli(db, *args)
    out, err = timed.communicate(timeout=600)
    assert timed.returncode == 0, err
    duration = time.monotonic() - started
    codes = []
    for number, moment in enumerate(MOMENTS):
        db = tmp_path / f"w{number}.duckdb"
        prepare(db)
        process = _cli(db, *args)
        time.sleep(duration * moment)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=600)
        codes.append(process.returncode)
        assert "Traceback" not in err, err
        if process.returncode == 130:  # what finished before the signal may have said so
            assert err.endswith(INTERRUPTED) and "Error" not in err, err
        else:  # the signal came after the command's work
            assert process.returncode == 0, err
        _whole(db)
    assert 130 in codes, f"no try was interrupted: {codes} (duration {duration:.2f} s)"
    return codes


def test_ctrl_c_during_ingest_run(big_files, tmp_path):
    qrels, run = big_files
    _interrupt_at_moments(tmp_path, lambda db: None, ["ingest", "run", str(run)])


def test_ctrl_c_during_eval_of_a_stored_run(big_files, tmp_path):
    qrels, run = big_files

    def prepare(db: Path) -> None:
        with Warehouse(db) as wh:
            wh.ingest_qrels(qrels, name="q")
            wh.ingest_run(run, name="big")

    _interrupt_at_moments(tmp_path, prepare, ["eval", "q", "big", "-m", "AP", "-m", "nDCG@10"])


def test_ctrl_c_during_eval_of_a_file_keeps_no_part_of_it(big_files, tmp_path):
    """``eval QRELS FILE`` ingests the file first: interrupted, the call keeps no part of it,
    and no evaluation; the run, whole, only when the signal came as its ingest committed
    (the ingest's last step, before the call could note the run as its own); the run and all
    its evaluations when the signal came after they were stored (while the table printed).
    Never a part: a run without all its rows, or some of the evaluations."""
    qrels, run = big_files

    def prepare(db: Path) -> None:
        with Warehouse(db) as wh:
            wh.ingest_qrels(qrels, name="q")

    args = ["eval", "q", str(run), "-m", "AP", "-m", "nDCG@10"]
    codes = _interrupt_at_moments(tmp_path, prepare, args)
    kept = [_whole(tmp_path / f"w{n}.duckdb") for n, code in enumerate(codes) if code == 130]
    assert all(found in ((0, 0), (1, 0), (1, 2)) for found in kept), kept
    assert (0, 0) in kept, kept  # interrupted while it evaluated: the run removed again
