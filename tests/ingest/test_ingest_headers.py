"""A delimited file's first line and its numbers (docs/ingest.md, Formats and Reading rules):
a missing header and a decimal comma get a hint; MS MARCO's headerless ``qid pid rank`` run
(three tab-separated integers) is read as qid, docid, rank, ranked by rank. The CLI in a
subprocess."""

from __future__ import annotations

import pytest
from cli_helpers import finish, start

from rankhouse.errors import InputError

MSMARCO = b"1048585\t7187158\t1\n1048585\t7187157\t2\n2\t5\t1\n"


def _cli(folder, *args):
    return finish(start(["--db", "w.duckdb", *args], cwd=folder))


def _rows(folder) -> list[str]:
    done = _cli(
        folder,
        "sql",
        "SELECT r.name, q.query_id, q.doc_id, q.rank, q.score FROM run_rows q "
        "JOIN runs r ON r.id = q.run_id ORDER BY r.name, q.query_id, q.rank",
        "--format",
        "tsv",
    )
    assert done.exit_code == 0, done.stderr
    return done.stdout.splitlines()[1:]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (b"qid;docid;score\n1;a;1,5\n", "run"),
        (b'qid,docid,score\n1,a,"1,5"\n', "run"),
    ],
    ids=["semicolons", "quoted"],
)
def test_a_decimal_comma_gets_a_hint(tmp_path, text, kind):
    (tmp_path / "comma.csv").write_bytes(text)
    done = _cli(tmp_path, "ingest", kind, "comma.csv")
    assert done.exit_code == 1
    assert done.stderr == (
        "Error: score '1,5' is not a number (comma.csv, line 2, field 'score'); a decimal "
        "comma? rankhouse reads numbers with a decimal point: 1.5\n"
    )


def test_a_grade_with_a_decimal_comma_gets_the_hint_too(tmp_path):
    (tmp_path / "comma.csv").write_bytes(b"qid;docid;rel\n1;a;1,0\n")
    done = _cli(tmp_path, "ingest", "qrels", "comma.csv")
    assert done.stderr == (
        "Error: grade '1,0' is not an integer (comma.csv, line 2, field 'rel'); a decimal "
        "comma? rankhouse reads numbers with a decimal point: 1.0\n"
    )


@pytest.mark.parametrize(
    ("kind", "example"), [("run", "qid,docid,score"), ("qrels", "qid,docid,rel")]
)
def test_a_missing_header_is_said(tmp_path, kind, example):
    (tmp_path / "data.csv").write_bytes(b"1,doc-7,1.5\n1,doc-8,2\n")
    done = _cli(tmp_path, "ingest", kind, "data.csv")
    assert done.exit_code == 1
    assert done.stderr == (
        "Error: no header: line 1 holds data ('1,doc-7,1.5'), not column names (data.csv); add "
        f"a first line naming the columns, e.g. {example} (the names docs/ingest.md lists), or "
        "other names mapped with --columns\n"
    )


def test_a_header_of_unknown_names_is_no_missing_header(tmp_path):
    (tmp_path / "names.csv").write_bytes(b"query,doc,sc\n1,a,1.5\n")
    done = _cli(tmp_path, "ingest", "run", "names.csv")
    assert done.stderr == (
        "Error: no column for docid, score (names.csv); its columns are query, doc, sc; pass "
        "--columns docid=<column>,score=<column>\n"
    )


def test_msmarco_run_without_a_header_is_read_by_rank(tmp_path):
    (tmp_path / "run.dev.tsv").write_bytes(MSMARCO)
    refused = _cli(tmp_path, "ingest", "run", "run.dev.tsv")
    assert refused.exit_code == 1
    assert refused.stderr == (
        "Error: the file looks like MS MARCO's run format without a header "
        "('1048585\\t7187158\\t1'): query id, passage id and rank, no score (run.dev.tsv, line "
        "1); pass --order rank to rank each query by the given rank\n"
    )
    done = _cli(tmp_path, "ingest", "run", "run.dev.tsv", "--order", "rank", "--name", "ms")
    assert done.exit_code == 0, done.stderr
    assert done.stderr == "stored run 'ms' (id 1): 2 queries, 3 rows\n"
    assert _rows(tmp_path) == [
        "ms\t1048585\t7187158\t1\t-1.0",
        "ms\t1048585\t7187157\t2\t-2.0",
        "ms\t2\t5\t1\t-1.0",
    ]


def test_format_msmarco_reads_any_file_name(tmp_path):
    (tmp_path / "ms.txt").write_bytes(MSMARCO)
    as_trec = _cli(tmp_path, "ingest", "run", "ms.txt", "--order", "rank")
    assert as_trec.stderr == (
        "Error: expected at least 5 fields, found 3 (ms.txt, line 1); a run line is 'qid Q0 "
        "docid rank score tag' (or 'qid Q0 docid rank tag' under --order rank); this looks "
        "like MS MARCO's 'qid pid rank': pass --format msmarco with --order rank\n"
    )
    refused = _cli(tmp_path, "ingest", "run", "ms.txt", "--format", "msmarco")
    assert refused.stderr == (
        "Error: MS MARCO's run format: query id, passage id and rank, no score (ms.txt); pass "
        "--order rank to rank each query by the given rank\n"
    )
    done = _cli(tmp_path, "ingest", "run", "ms.txt", "--format", "msmarco", "--order", "rank")
    assert done.stderr == "stored run 'ms' (id 1): 2 queries, 3 rows\n"
    assert _rows(tmp_path)[1] == "ms\t1048585\t7187157\t2\t-2.0"
    qrels = _cli(tmp_path, "ingest", "qrels", "ms.txt", "--format", "msmarco")
    assert qrels.exit_code == 2  # not one of the qrels' formats
    assert "'msmarco' is not one of 'trec', 'csv', 'tsv', 'parquet', 'jsonl'" in qrels.stderr


def test_msmarco_qrels_are_refused_in_python(warehouse, tmp_path):
    (tmp_path / "ms.txt").write_bytes(MSMARCO)
    message = (
        "MS MARCO's format (query id, passage id, rank) is a run format (ms.txt); MS MARCO's "
        "qrels are TREC qrels: pass format='trec'"
    )
    with pytest.raises(InputError) as refused:
        warehouse.ingest_qrels(tmp_path / "ms.txt", format="msmarco")
    assert str(refused.value).replace(str(tmp_path / "ms.txt"), "ms.txt") == message
