"""Wrong arguments are named as what they are: swapped qrels and runs, a folder, a run with
no query in common with the qrels, a reserved --meta key, a read-only warehouse asked to
compute (it serves what is stored), and a syntax error in `sql` (no read-only hint)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from conftest import EXAMPLES, PROJECT_ROOT

import rankhouse
from rankhouse import InputError, RankhouseError, RankhouseWarning

QRELS = "examples/qrels.txt"
BM25 = "examples/run.bm25.txt"
DENSE = "examples/run.dense.txt"


def test_swapped_files_are_named_as_swapped(run_cli):
    done = run_cli("eval", BM25, QRELS, "-m", "AP", cwd=PROJECT_ROOT)
    assert done.exit_code == 1
    assert done.stderr == (
        "Error: the qrels and the run look swapped: 'examples/run.bm25.txt' is a run (6 fields: "
        "qid Q0 docid rank score tag) and 'examples/qrels.txt' is qrels (4 fields: qid iter "
        "docid rel); the qrels come first: rankhouse eval examples/qrels.txt "
        "examples/run.bm25.txt ...\n"
    )


def test_swapped_files_in_python_say_it_in_python():
    with pytest.raises(InputError) as raised:
        rankhouse.evaluate(EXAMPLES / "run.bm25.txt", EXAMPLES / "qrels.txt", "AP")
    assert str(raised.value).endswith(
        f"the qrels come first: evaluate({str(EXAMPLES / 'qrels.txt')!r}, "
        f"{str(EXAMPLES / 'run.bm25.txt')!r}, ...)"
    )


def test_a_run_file_as_qrels_alone(run_cli):
    done = run_cli("eval", BM25, "bm25", "-m", "AP", cwd=PROJECT_ROOT)
    assert done.exit_code == 1
    assert done.stderr == (
        "Error: 'examples/run.bm25.txt' looks like a run (6 fields: qid Q0 docid rank score "
        "tag), not qrels (4 fields: qid iter docid rel); the qrels come first, then the runs\n"
    )


def test_swapped_stored_names(run_cli):
    assert run_cli("eval", QRELS, BM25, "-m", "AP", cwd=PROJECT_ROOT).exit_code == 0
    done = run_cli("eval", "bm25", "qrels", "-m", "AP")
    assert done.exit_code == 1
    assert done.stderr == (
        "Error: 'bm25' is a stored run, not a qrels set; the qrels come first, then the runs\n"
    )


def test_a_folder_is_named_as_a_folder(run_cli):
    done = run_cli("eval", QRELS, "examples/nights", "-m", "AP", cwd=PROJECT_ROOT)
    assert done.exit_code == 1
    assert done.stderr == (
        "Error: 'examples/nights' is a folder, not a run file; give the run files in it one "
        "by one (e.g. examples/nights/*)\n"
    )
    as_qrels = run_cli("eval", "examples", BM25, "-m", "AP", cwd=PROJECT_ROOT)
    assert as_qrels.stderr == (
        "Error: 'examples' is a folder, not a qrels file; give the qrels file in it\n"
    )


def test_sql_hints_at_write_only_when_a_write_was_refused(run_cli):
    assert run_cli("ingest", "qrels", QRELS, cwd=PROJECT_ROOT).exit_code == 0
    syntax = run_cli("sql", "SELEC 1")
    assert syntax.exit_code == 1
    assert syntax.stderr.startswith("Error: the query failed: Parser Error: syntax error")
    assert "read-only" not in syntax.stderr and "--write" not in syntax.stderr
    refused = run_cli("sql", "DELETE FROM judgments")
    assert refused.exit_code == 1
    assert refused.stderr.rstrip().endswith("pass --write to change it")


def _renamed_queries(tmp_path, keep: int):
    """The bm25 run with all but ``keep`` of its 8 queries renamed out of the qrels."""
    lines = (EXAMPLES / "run.bm25.txt").read_text().splitlines()
    kept = [f"q{i}" for i in range(1, keep + 1)]
    out = [line if line.split()[0] in kept else "x" + line for line in lines]
    path = tmp_path / f"keep{keep}.run"
    path.write_text("\n".join(out) + "\n")
    return path


def test_no_query_in_common_is_an_error(run_cli, tmp_path):
    run = _renamed_queries(tmp_path, 0)
    done = run_cli("eval", EXAMPLES / "qrels.txt", run, "-m", "AP")
    assert done.exit_code == 1
    assert done.stderr.endswith(
        "Error: run 'bm25' and qrels set 'qrels' have no query in common (the run answers 8 "
        "queries, none of the 8 judged): is one of them the wrong file? Pass "
        "--allow-no-overlap to evaluate it anyway\n"
    )
    allowed = run_cli(
        "eval", EXAMPLES / "qrels.txt", run, "-m", "AP", "--allow-no-overlap", "-f", "csv"
    )
    assert allowed.exit_code == 0, allowed.stderr
    # every query scores 0: the interval of the mean is [0, 0]
    assert allowed.stdout == "run,num_q,AP,AP low,AP high\nbm25,8,0.0,0.0,0.0\n"


def test_no_query_in_common_in_python(tmp_path):
    run = _renamed_queries(tmp_path, 0)
    with pytest.raises(InputError, match=r"Pass allow_no_overlap=True to evaluate it anyway$"):
        rankhouse.evaluate(EXAMPLES / "qrels.txt", run, "AP")
    result = rankhouse.evaluate(EXAMPLES / "qrels.txt", run, "AP", allow_no_overlap=True)
    assert result.summary["AP"].tolist() == [0.0]


def test_fewer_than_half_answered_is_a_warning(run_cli, tmp_path):
    run = _renamed_queries(tmp_path, 3)
    done = run_cli("eval", EXAMPLES / "qrels.txt", run, "-m", "AP")
    assert done.exit_code == 0, done.stderr
    assert done.stderr.splitlines()[0] == (
        "Warning: run 'bm25' answers 3 of the 8 queries of qrels set 'qrels': fewer than half "
        "(is it a run of this collection?)"
    )
    with pytest.warns(RankhouseWarning, match="answers 3 of the 8 queries"):
        rankhouse.evaluate(EXAMPLES / "qrels.txt", run, "AP")
    half = _renamed_queries(tmp_path, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # half answered: no warning
        rankhouse.evaluate(EXAMPLES / "qrels.txt", half, "AP")


def test_read_only_serves_stored_values_and_says_what_it_cannot_compute(run_cli):
    stored = run_cli("eval", QRELS, BM25, DENSE, "-m", "AP", "-f", "csv", cwd=PROJECT_ROOT)
    assert stored.exit_code == 0, stored.stderr
    by_name = run_cli("--read-only", "eval", "qrels", "bm25", "dense", "-m", "AP", "-f", "csv")
    assert by_name.exit_code == 0, by_name.stderr
    assert by_name.stdout == stored.stdout
    by_file = run_cli(
        "--read-only", "eval", QRELS, BM25, DENSE, "-m", "AP", "-f", "csv", cwd=PROJECT_ROOT
    )
    assert by_file.exit_code == 0, by_file.stderr
    assert by_file.stdout == stored.stdout
    compared = run_cli(
        "--read-only",
        "compare",
        "qrels",
        "bm25",
        "dense",
        "-m",
        "AP",
        "--baseline",
        "bm25",
        "-f",
        "csv",
    )
    assert compared.exit_code == 0, compared.stderr

    missing = run_cli("--read-only", "eval", "qrels", "bm25", "dense", "-m", "AP", "-m", "P@5")
    assert missing.exit_code == 1
    assert missing.stderr == (
        "Error: the warehouse is open read-only and these values are not stored: P@5 of run "
        "'bm25'; P@5 of run 'dense' against qrels set 'qrels'; drop --read-only to compute "
        "and store them\n"
    )
    new_file = run_cli(
        "--read-only", "eval", QRELS, "examples/nights/bm25.night1.txt", cwd=PROJECT_ROOT
    )
    assert new_file.exit_code == 1
    assert new_file.stderr == (
        "Error: the warehouse is open read-only and does not hold the run file "
        "'examples/nights/bm25.night1.txt' (its content is not stored); drop --read-only to "
        "ingest it\n"
    )


def test_read_only_in_python_says_it_in_python(backend_target):
    with rankhouse.Warehouse(backend_target) as wh:
        wh.evaluate(EXAMPLES / "qrels.txt", EXAMPLES / "run.bm25.txt", "AP")
    with rankhouse.Warehouse(backend_target, read_only=True) as wh:
        assert wh.evaluate("qrels", "bm25", "AP").num_reused == 1
        by_file = wh.evaluate(EXAMPLES / "qrels.txt", EXAMPLES / "run.bm25.txt", "AP")
        assert by_file.num_reused == 1
        with pytest.raises(RankhouseError, match=r"open the warehouse without read_only=True"):
            wh.evaluate("qrels", "bm25", "RR")


def test_reserved_meta_keys_are_refused(run_cli, tmp_path):
    done = run_cli("ingest", "run", EXAMPLES / "run.bm25.txt", "--meta", "source=laptop")
    assert done.exit_code == 1
    assert done.stderr == (
        "Error: --meta source=laptop: 'source' is recorded by rankhouse itself (the file the run "
        "was read from); use another key, e.g. --meta source_given=laptop\n"
    )
    assert (
        run_cli("runs", "list", "-f", "csv").stdout
        == "id,name,tag,queries,rows,ingested_at,aliases,pruned\n"
    )
    frame = pd.DataFrame({"qid": ["1"], "docid": ["a"], "score": [1.0]})
    with pytest.raises(InputError) as raised:
        rankhouse.Warehouse(":memory:").ingest_run(frame, meta={"content_sha256": "x"})
    assert str(raised.value) == (
        "meta={'content_sha256': 'x'}: 'content_sha256' is recorded by rankhouse itself (the "
        "hash of its content); use another key, e.g. meta={'content_sha256_given': 'x'}"
    )
