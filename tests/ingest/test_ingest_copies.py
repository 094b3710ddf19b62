"""A copy of a stored file with other bytes but the same rows (CRLF line ends, tabs for spaces)
is the stored run or qrels set, under its name: reused and said so, never a new version
(docs/ingest.md, Identity and safety). Different rows under a taken name say how they differ.
Both stores; the CLI in a subprocess."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from cli_helpers import finish, start

import rankhouse
from rankhouse.errors import ConflictError

RUN = b"1 Q0 d1 1 2.5 bm25\n1 Q0 d2 2 1.5 bm25\n2 Q0 d3 1 3 bm25\n"
QRELS = b"1 0 d1 1\n2 0 d3 1\n"


def _crlf(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "run.bm25.txt").write_bytes(RUN)
    (tmp_path / "crlf.run").write_bytes(_crlf(RUN))
    (tmp_path / "tabs.run").write_bytes(RUN.replace(b" ", b"\t"))
    (tmp_path / "changed.run").write_bytes(_crlf(RUN.replace(b"1.5", b"1.25")))
    (tmp_path / "qrels.txt").write_bytes(QRELS)
    (tmp_path / "crlf.qrels").write_bytes(_crlf(QRELS))
    (tmp_path / "changed.qrels").write_bytes(QRELS.replace(b"d3 1", b"d3 2"))
    return tmp_path


def _cli(target, folder, *args):
    return finish(start(["--db", target, *args], cwd=folder))


@pytest.fixture
def bm25_stored(backend_target, files) -> None:
    """The warehouse with run.bm25.txt stored as run 'bm25' (id 1)."""
    done = _cli(backend_target, files, "ingest", "run", "run.bm25.txt", "--name", "bm25")
    assert done.exit_code == 0, done.stderr


def _runs(target, folder) -> list[tuple[str, str]]:
    listed = _cli(target, folder, "runs", "list", "--format", "tsv")
    header, *rows = listed.stdout.splitlines()
    fields = header.split("\t")
    return [(r.split("\t")[fields.index("id")], r.split("\t")[fields.index("name")]) for r in rows]


def test_a_crlf_copy_of_a_stored_run_is_that_run(backend_target, files, bm25_stored):
    done = _cli(backend_target, files, "ingest", "run", "crlf.run", "--name", "bm25")
    assert done.exit_code == 0, done.stderr
    assert done.stderr == (
        "Warning: run file crlf.run holds the same rows as run 'bm25' (id 1); its bytes differ "
        "(CRLF line ends instead of LF): reusing it\n"
        "already stored as run 'bm25' (id 1), nothing new\n"
    )
    assert _runs(backend_target, files) == [("1", "bm25")]


def test_eval_of_a_crlf_copy_evaluates_the_stored_run(backend_target, files, bm25_stored):
    done = _cli(backend_target, files, "eval", "qrels.txt", "crlf.run", "-m", "P@1")
    assert done.exit_code == 0, done.stderr
    assert "holds the same rows as run 'bm25' (id 1)" in done.stderr
    assert "bm25@2" not in done.stdout + done.stderr
    assert _runs(backend_target, files) == [("1", "bm25")]


def test_a_tab_separated_copy_says_its_whitespace(backend_target, files, bm25_stored):
    done = _cli(backend_target, files, "ingest", "run", "tabs.run", "--name", "bm25")
    assert done.exit_code == 0, done.stderr
    assert done.stderr.splitlines()[0] == (
        "Warning: run file tabs.run holds the same rows as run 'bm25' (id 1); its bytes differ "
        "(tabs between fields instead of single spaces): reusing it"
    )


def test_without_the_stored_file_the_copy_says_its_own_line_ends(
    backend_target, files, bm25_stored
):
    (files / "run.bm25.txt").unlink()
    done = _cli(backend_target, files, "ingest", "run", "crlf.run", "--name", "bm25")
    assert done.stderr.splitlines()[0] == (
        "Warning: run file crlf.run holds the same rows as run 'bm25' (id 1); its bytes differ "
        "(CRLF line ends): reusing it"
    )


def test_other_rows_under_the_name_say_how_they_differ(backend_target, files, bm25_stored):
    done = _cli(backend_target, files, "ingest", "run", "changed.run", "--name", "bm25")
    assert done.exit_code == 1
    assert done.stderr == (
        "Error: run name 'bm25' is already used by different content (id 1: 1 row differs, in "
        "1 query, first at query '1', document 'd2'); pass --replace to overwrite it, or --name "
        "to choose another name\n"
    )
    # eval keeps its versions: other rows are the next version
    evaluated = _cli(backend_target, files, "eval", "qrels.txt", "changed.run", "-m", "P@1")
    assert evaluated.exit_code == 0, evaluated.stderr
    assert [name for _, name in _runs(backend_target, files)] == ["bm25", "bm25@2"]


def test_a_crlf_copy_of_stored_qrels_is_that_qrels_set(backend_target, files):
    assert _cli(backend_target, files, "ingest", "qrels", "qrels.txt", "--name", "q").exit_code == 0
    done = _cli(backend_target, files, "ingest", "qrels", "crlf.qrels", "--name", "q")
    assert done.exit_code == 0, done.stderr
    assert done.stderr == (
        "Warning: qrels file crlf.qrels holds the same rows as qrels set 'q' (id 1); its bytes "
        "differ (CRLF line ends instead of LF): reusing it\n"
        "already stored as qrels set 'q' (id 1), nothing new\n"
    )
    # other judgments under the name are its next version (docs/judgments.md)
    changed = _cli(backend_target, files, "ingest", "qrels", "changed.qrels", "--name", "q")
    assert (changed.exit_code, changed.stderr) == (
        0,
        "stored qrels set 'q@2' (id 2): 2 queries, 2 judgments\n",
    )
    # a CRLF copy of the second version is that version
    crlf = files / "crlf-changed.qrels"
    crlf.write_bytes((files / "changed.qrels").read_bytes().replace(b"\n", b"\r\n"))
    again = _cli(backend_target, files, "ingest", "qrels", crlf.name, "--name", "q")
    assert (again.exit_code, again.stderr.splitlines()[-1]) == (
        0,
        "already stored as qrels set 'q@2' (id 2), nothing new",
    )


def test_python_gets_the_stored_run_and_a_warning(any_warehouse, files):
    [first] = any_warehouse.ingest_run(files / "run.bm25.txt", name="bm25", progress=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        [again] = any_warehouse.ingest_run(files / "crlf.run", name="bm25", progress=False)
    assert (again.id, again.name, again.created) == (first.id, "bm25", False)
    assert [type(w.message) for w in caught] == [rankhouse.RankhouseWarning]
    with pytest.raises(ConflictError, match=r"1 row differs, in 1 query"):
        any_warehouse.ingest_run(files / "changed.run", name="bm25", progress=False)
    # a frame with the same rows under the name is the stored run too
    frame = pd.DataFrame(
        {
            "qid": ["1", "1", "2"],
            "docno": ["d1", "d2", "d3"],
            "rank": [1, 2, 1],
            "score": [2.5, 1.5, 3.0],
            "system": ["bm25"] * 3,
        }
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        [framed] = any_warehouse.ingest_run(frame, name="bm25")
    assert (framed.id, framed.created) == (first.id, False)
    assert str(caught[0].message) == (
        "the DataFrame holds the same rows as run 'bm25' (id 1): reusing it"
    )


def test_another_tag_under_the_name_is_said(tmp_path):
    (tmp_path / "run.bm25.txt").write_bytes(RUN)
    (tmp_path / "other.run").write_bytes(RUN.replace(b"bm25", b"other"))
    assert _cli("w.duckdb", tmp_path, "ingest", "run", "run.bm25.txt").exit_code == 0
    done = _cli("w.duckdb", tmp_path, "ingest", "run", "other.run", "--name", "bm25")
    assert done.stderr == (
        "Error: run name 'bm25' is already used by different content (id 1, tag 'bm25': the same "
        "rows); pass --replace to overwrite it, or --name to choose another name\n"
    )
