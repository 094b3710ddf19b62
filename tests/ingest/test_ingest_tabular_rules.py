"""The tabular reading rules of docs/ingest.md: ids as written, delimiters, line ends, BOM,
quoting, missing values in DataFrames and Parquet, and errors that name the line and field."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankhouse import InputError


def _file(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _judgments(wh) -> list[tuple]:
    with wh.connect() as conn:
        return conn.execute(
            "SELECT query_id, doc_id, grade FROM judgments ORDER BY query_id, doc_id"
        ).fetchall()


def _run_rows(wh) -> list[tuple]:
    with wh.connect() as conn:
        return conn.execute(
            "SELECT query_id, doc_id, score FROM run_rows ORDER BY query_id, doc_id"
        ).fetchall()


# --- JSON lines: ids are text as written ------------------------------------------------------


def test_jsonl_string_and_integer_ids_are_their_text(warehouse, tmp_path):
    path = _file(
        tmp_path,
        "q.jsonl",
        b'{"qid": "q1", "docid": "d", "rel": 1}\n{"qid": 2, "docid": 10, "rel": 0}\n',
    )
    warehouse.ingest_qrels(path)
    assert _judgments(warehouse) == [("2", "10", 0), ("q1", "d", 1)]


def test_jsonl_duplicate_across_spellings(warehouse, tmp_path):
    path = _file(
        tmp_path,
        "q.jsonl",
        b'{"qid": "1", "docid": "d", "rel": 1}\n\n{"qid": 1, "docid": "d", "rel": 1}\n',
    )
    with pytest.raises(InputError, match="appears twice") as caught:
        warehouse.ingest_qrels(path)
    assert caught.value.line == 3 and "first at line 1" in str(caught.value)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("2.0", "'2.0' is a JSON number with a fraction or exponent"),
        ("1e3", "'1e3' is a JSON number with a fraction or exponent"),
        ("true", "is a JSON true/false"),
        ("null", "is missing"),
        ("[1]", "is a JSON array"),
        ('{"a": 1}', "is a JSON object"),
        ('""', "is empty"),
    ],
)
def test_jsonl_id_that_is_not_a_string_or_integer(warehouse, tmp_path, value, words):
    data = f'{{"qid": "1", "docid": "a", "rel": 1}}\n{{"qid": {value}, "docid": "b", "rel": 1}}\n'
    path = _file(tmp_path, "q.jsonl", data.encode())
    with pytest.raises(InputError, match="write ids as JSON strings") as caught:
        warehouse.ingest_qrels(path)
    assert words in str(caught.value)
    assert (caught.value.line, caught.value.field) == (2, "qid")


def test_jsonl_missing_key_and_bad_json_name_the_line(warehouse, tmp_path):
    path = _file(tmp_path, "q.jsonl", b'{"qid": "1", "docid": "a", "rel": 1}\n{"qid": "1"}\n')
    with pytest.raises(InputError, match="document id is missing") as caught:
        warehouse.ingest_qrels(path)
    assert (caught.value.line, caught.value.field) == (2, "docid")
    path.write_bytes(b'{"qid": "1", "docid": "a", "rel": 1}\r\n{"qid": "1",\n')
    with pytest.raises(InputError, match="not valid JSON") as caught:
        warehouse.ingest_qrels(path)
    assert caught.value.line == 2


def test_jsonl_scores_numbers_or_numeric_text(warehouse, tmp_path):
    path = _file(
        tmp_path,
        "r.jsonl",
        b'{"qid": 1, "docid": "a", "score": 2}\n{"qid": 1, "docid": "b", "score": "1.5"}\n'
        b'{"qid": 1, "docid": "c", "score": -1e2}\n',
    )
    warehouse.ingest_run(path, name="r")
    assert _run_rows(warehouse) == [("1", "a", 2.0), ("1", "b", 1.5), ("1", "c", -100.0)]
    path.write_bytes(b'{"qid": 1, "docid": "a", "score": true}\n')
    with pytest.raises(InputError, match="score is a JSON true/false, not a number"):
        warehouse.ingest_run(path, name="r2")


# --- CSV / TSV ----------------------------------------------------------------------------


@pytest.mark.parametrize("delimiter", ["|", ";", "\t", ","])
def test_delimiter_is_sniffed_from_the_header(warehouse, tmp_path, delimiter):
    lines = [["qid", "docid", "rel"], ["010", "d,1" if delimiter != "," else "d1", "1"]]
    data = "\n".join(delimiter.join(fields) for fields in lines) + "\n"
    warehouse.ingest_qrels(_file(tmp_path, "q.csv", data.encode()))
    assert _judgments(warehouse) == [("010", "d,1" if delimiter != "," else "d1", 1)]


def test_delimiter_given_overrides_the_sniffer(warehouse, tmp_path):
    # the header holds more commas than semicolons, but the file is ';'-separated
    path = _file(tmp_path, "q.csv", b"qid;docid,x;rel\n1;a,b;2\n")
    warehouse.ingest_qrels(path, delimiter=";", columns={"docid": "docid,x"})
    assert _judgments(warehouse) == [("1", "a,b", 2)]
    with pytest.raises(InputError, match="unknown delimiter"):
        warehouse.ingest_qrels(path, delimiter=":")
    with pytest.raises(InputError, match="applies to csv and tsv"):
        warehouse.ingest_qrels(_file(tmp_path, "q.jsonl", b"{}\n"), delimiter=";")


def test_delimiter_option_on_the_cli(run_cli, tmp_path):
    path = _file(tmp_path, "q.txt", b"qid|docid|rel\n1|a|2\n")
    result = run_cli("ingest", "qrels", str(path), "--format", "csv", "--delimiter", "|")
    assert result.exit_code == 0, result.stderr
    assert "1 query, 1 judgment" in result.stderr


@pytest.mark.parametrize(
    "data",
    [
        b"qid,docid,rel\r\nq1,d1,1\r\nq2,d2,1\r\n",  # CRLF
        b"qid,docid,rel\rq1,d1,1\rq2,d2,1\r",  # lone CR (old Mac)
        b"qid,docid,rel\nq1,d1,1\r\nq2,d2,1\r",  # mixed
        b"\xef\xbb\xbfqid,docid,rel\nq1,d1,1\n\nq2,d2,1",  # BOM, blank line, no last line end
    ],
)
def test_line_ends_and_bom(warehouse, tmp_path, data):
    warehouse.ingest_qrels(_file(tmp_path, "q.csv", data))
    assert _judgments(warehouse) == [("q1", "d1", 1), ("q2", "d2", 1)]


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"qid,docid,rel\r\nq1,d1,1\r\nq2,d2,x\r\n", 3),
        (b"qid,docid,rel\rq1,d1,1\r\rq2,d2,x\r", 4),
        (b"\xef\xbb\xbfqid,docid,rel\nq1,d1,1\nq2,d2,x\n", 3),
        (b'qid,docid,rel\n"q\n1","d\r\n1",1\nq2,d2,x\n', 5),
        (b'qid,docid,rel\n"q\n1","d\r\n1",x\n', 2),
        (b"qid,docid,rel\nq1,d1\n", 2),
        (b'qid,docid,rel\nq1,"d1"x,1\n', 2),
        (b"qid,docid,rel\nq1,d\xff,1\n", 2),
        (b"qid,docid,rel,x\rq1,d1,1,\rq2,d2,1,\xff\r", 3),
        (b"qid,docid,rel\nq1,,1\n", 2),
    ],
)
def test_line_errors_name_the_physical_line(warehouse, tmp_path, data, line):
    with pytest.raises(InputError) as caught:
        warehouse.ingest_qrels(_file(tmp_path, "q.csv", data))
    assert caught.value.line == line, str(caught.value)


def test_quoted_fields_keep_their_bytes(warehouse, tmp_path):
    data = b'qid,docid,rel\n"q,1","d""1\r\n2",1\n'
    warehouse.ingest_qrels(_file(tmp_path, "q.csv", data))
    assert _judgments(warehouse) == [("q,1", 'd"1\r\n2', 1)]


def test_ids_are_never_type_inferred(warehouse, tmp_path):
    data = b"qid,docid,score\n010,1e3,1\n10,007,2\nq,1.0,3\n"
    warehouse.ingest_run(_file(tmp_path, "r.csv", data), name="r")
    assert _run_rows(warehouse) == [("010", "1e3", 1.0), ("10", "007", 2.0), ("q", "1.0", 3.0)]


def test_the_sniffed_delimiter_given_again_is_the_same_content(warehouse, tmp_path):
    path = _file(tmp_path, "q.csv", b"qid|docid|rel\n1|a|1\n")
    assert warehouse.ingest_qrels(path, name="a").created
    again = warehouse.ingest_qrels(path, delimiter="|", name="b")
    assert not again.created and again.name == "a"


# --- DataFrames and Parquet with missing values -----------------------------------------------

_NA_CASES = {
    "None id": ({"qid": ["1", None]}, "query id is missing", "qid"),
    "pd.NA id": ({"docid": pd.array(["a", pd.NA], dtype="string")}, "doc.* id is missing", "docid"),
    "NaN grade": ({"rel": [1, np.nan]}, "grade is missing", "rel"),
    "Int64 NA grade": ({"rel": pd.array([1, None], dtype="Int64")}, "grade is missing", "rel"),
    "mixed object grade": ({"rel": pd.Series([1, "x"], dtype=object)}, "'x' is not an int", "rel"),
    "1.5 grade": ({"rel": [1.0, 1.5]}, "not an integer", "rel"),
    "float id": ({"qid": [1.0, 2.0]}, "query id is a float", "qid"),
    "object id with a float": ({"qid": pd.Series(["1", 2.5], dtype=object)}, "is a float", "qid"),
}


@pytest.mark.parametrize("case", list(_NA_CASES))
def test_dataframe_missing_or_odd_values(warehouse, case):
    change, words, column = _NA_CASES[case]
    frame = pd.DataFrame({"qid": ["1", "2"], "docid": ["a", "b"], "rel": [1, 0], **change})
    with pytest.raises(InputError, match=words) as caught:
        warehouse.ingest_qrels(frame)
    assert caught.value.field == column
    assert "at row" in str(caught.value)


@pytest.mark.parametrize(
    "score",
    [[1.0, np.nan], pd.array([1.0, None], dtype="Float64"), pd.Series([1.0, None], dtype=object)],
)
def test_dataframe_missing_score(warehouse, score):
    frame = pd.DataFrame({"qid": ["1", "1"], "docid": ["a", "b"], "score": score})
    with pytest.raises(InputError, match="score is missing .* at row 1") as caught:
        warehouse.ingest_run(frame)
    assert caught.value.field == "score"


def test_dataframe_row_named_by_position_and_index_label(warehouse):
    frame = pd.DataFrame({"qid": ["1", None], "docid": ["a", "b"], "rel": [1, 0]}, index=[7, 3])
    with pytest.raises(InputError, match=r"at row 1 \(index 3\)"):
        warehouse.ingest_qrels(frame)


def test_dataframe_mixed_ids_and_whole_float_grades(warehouse):
    frame = pd.DataFrame(
        {"qid": pd.Series([1, "q2"], dtype=object), "docid": ["a", "b"], "rel": [1.0, 0.0]}
    )
    warehouse.ingest_qrels(frame)
    assert _judgments(warehouse) == [("1", "a", 1), ("q2", "b", 0)]


def test_dataframe_ranks_under_score_order_are_kept_one_by_one(warehouse, tmp_path):
    """As in a TREC or CSV run, one rank that is no integer is stored as NULL alone."""
    frame = pd.DataFrame(
        {
            "qid": ["q"] * 4,
            "docid": list("abcd"),
            "score": [4.0, 3, 2, 1],
            "rank": [1, "x", None, 4.0],
        }
    )
    warehouse.ingest_run(frame, name="f")
    (tmp_path / "r.csv").write_text("qid,docid,score,rank\nq,a,4,1\nq,b,3,x\nq,c,2,\nq,d,1,4.0\n")
    warehouse.ingest_run(tmp_path / "r.csv", name="c")
    with warehouse.connect() as conn:
        stored = conn.execute(
            "SELECT r.name, rr.doc_id, rr.rank FROM run_rows AS rr JOIN runs AS r "
            "ON r.id = rr.run_id ORDER BY r.name, rr.doc_id"
        ).fetchall()
    expected = [("a", 1), ("b", None), ("c", None), ("d", 4)]
    assert stored == [("c", *row) for row in expected] + [("f", *row) for row in expected]


def test_parquet_nulls_and_float_ids_name_the_row(warehouse, tmp_path):
    path = tmp_path / "q.parquet"
    pd.DataFrame({"qid": ["1", None], "docid": ["a", "b"], "rel": [1, 0]}).to_parquet(path)
    with pytest.raises(InputError, match="query id is missing at row 2"):
        warehouse.ingest_qrels(path)
    pd.DataFrame({"qid": [1.0, 2.0], "docid": ["a", "b"], "rel": [1, 0]}).to_parquet(path)
    with pytest.raises(InputError, match="holds DOUBLE values"):
        warehouse.ingest_qrels(path)
