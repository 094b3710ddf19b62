"""``rankhouse trec-eval`` as a process, where it once crashed or stored before failing.

Expected bytes were printed by trec_eval 10.0 (built from usnistgov/trec_eval) on the same
files; tests/trec_eval/test_trec_eval_binary.py holds the rest of the drop-in to the binary's
outputs.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from cli_helpers import ERROR_LINE, cli_env

Q = b"q1 0 a 2\nq1 0 b 1\nq1 0 c 0\n"
R = b"q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 c 3 1.0 r\n"


def _trec_eval(tmp_path, *args) -> subprocess.CompletedProcess:
    """``rankhouse [--db ...] trec-eval ...`` in ``tmp_path``, its output as bytes."""
    return subprocess.run(
        [sys.executable, "-m", "rankhouse", *map(str, args)],
        cwd=tmp_path,
        env=cli_env(),
        capture_output=True,
        timeout=300,
    )


def test_a_folder_as_the_run_is_trec_eval_s_error(tmp_path):
    (tmp_path / "q").write_bytes(Q)
    (tmp_path / "folder").mkdir()
    done = _trec_eval(tmp_path, "trec-eval", "q", "folder")
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr == (
        b"trec_eval.get_results: Cannot read results file 'folder'\n"
        b"trec_eval: Quit in file 'folder'\n"
    )


def test_files_that_are_not_utf8_print_their_own_bytes(tmp_path):
    """Latin-1 bytes in ids and tags: read and printed as the bytes they are, as trec_eval."""
    (tmp_path / "q").write_bytes(b"q\xe9 0 caf\xe9 1\nq\xe9 0 b 0\n")
    (tmp_path / "r").write_bytes(b"q\xe9 Q0 caf\xe9 1 3.0 r\xff\nq\xe9 Q0 b 2 2.0 r\xff\n")
    done = _trec_eval(tmp_path, "trec-eval", "-q", "-m", "map", "-m", "runid", "q", "r")
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == (
        b"map                   \tq\xe9\t1.0000\n"
        b"runid                 \tall\tr\xff\n"
        b"map                   \tall\t1.0000\n"
    )
    # with a warehouse: the same bytes, nothing stored (a stored id is text)
    stored = _trec_eval(tmp_path, "--db", "w.duckdb", "trec-eval", "-q", "-m", "map", "q", "r")
    assert (stored.returncode, stored.stdout.splitlines()[0]) == (0, done.stdout.splitlines()[0])
    runs = _trec_eval(tmp_path, "--db", "w.duckdb", "runs", "list", "--format", "tsv")
    assert runs.stdout.decode().splitlines()[1:] == []


def test_a_qid_that_is_not_utf8_in_trec_eval_s_abort(tmp_path):
    (tmp_path / "q").write_bytes(b"q\xe9 0 caf\xe9 1\nq2 0 b 0\n")
    (tmp_path / "r").write_bytes(b"q\xe9 Q0 caf\xe9 1 3.0 r\n")
    done = _trec_eval(tmp_path, "trec-eval", "-m", "map", "q", "r")
    assert (done.returncode, done.stdout) == (4, b"")
    assert done.stderr == b"trec_eval: result qid 'q2' not found in qrels\n"


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["-M", "-1"], "max_rank must be >= 0, not -1"),
        (["-l", "-1"], "relevance level must be >= 0, not -1"),
        (["-m", "P.3000000000"], "P: parameter cutoff must be a 32-bit integer"),
        (["-m", "ndcg_cut.5,3000000000"], "nDCG: parameter cutoff must be a 32-bit integer"),
        (["-N", "99999999999", "-m", "utility"], "Utility: parameter docs must be a 32-bit"),
    ],
)
def test_an_invalid_option_value_stores_nothing(tmp_path, option, message):
    """Options are checked before the warehouse is opened: a new file is not created, a
    stored one is left byte for byte as it was (the run below is new to it)."""
    (tmp_path / "q").write_bytes(Q)
    (tmp_path / "r").write_bytes(R)
    (tmp_path / "new.run").write_bytes(R.replace(b" r\n", b" new\n"))
    first = _trec_eval(tmp_path, "--db", "w.duckdb", "trec-eval", "q", "r")
    assert first.returncode == 0
    before = (tmp_path / "w.duckdb").read_bytes()
    for db in ("w.duckdb", "fresh.duckdb"):
        done = _trec_eval(tmp_path, "--db", db, "trec-eval", *option, "q", "new.run")
        assert (done.returncode, done.stdout) == (1, b"")
        assert message in done.stderr.decode()
        assert re.match(ERROR_LINE, done.stderr.decode())
    assert (tmp_path / "w.duckdb").read_bytes() == before
    assert not (tmp_path / "fresh.duckdb").exists()


def test_a_grade_past_32_bits_stops_as_trec_eval_does(tmp_path):
    """trec_eval cannot allocate the grade levels of such a topic: "Can't calculate", exit
    4, after the topics before it (its own output on a machine of 23 GiB)."""
    (tmp_path / "q").write_bytes(b"q0 0 x 1\nq1 0 a 99999999999\nq1 0 b 1\n")
    (tmp_path / "r").write_bytes(b"q0 Q0 x 1 1 r\nq1 Q0 a 1 1 r\n")
    done = _trec_eval(tmp_path, "trec-eval", "-q", "-m", "P.1", "q", "r")
    assert done.returncode == 4
    assert done.stdout == b"P_1                   \tq0\t1.0000\n"
    assert done.stderr == b"trec_eval: Can't calculate measure 'P'\n"
