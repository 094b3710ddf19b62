"""CSV, TSV, Parquet, JSON lines and DataFrames: column mapping, common names, string ids."""

from __future__ import annotations

import hashlib
import struct

import pandas as pd
import pytest

from rankhouse import InputError
from rankhouse.ingest.files import frame_sha256

RUN = pd.DataFrame(
    {"QUERY_KEY": ["010", "010", "10"], "DOC_KEY": ["a", "b", "a"], "SCORE": [1.5, 2.5, 0.5]}
)
MAPPING = "qid=QUERY_KEY,docid=DOC_KEY,score=SCORE"


def _write(frame: pd.DataFrame, path, fmt: str):
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif fmt == "parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_json(path, orient="records", lines=True)
    return path


def _rows(wh):
    with wh.connect() as conn:
        return conn.execute(
            "SELECT query_id, doc_id, score, position FROM run_ranking ORDER BY query_id, position"
        ).fetchall()


EXPECTED = [("010", "b", 2.5, 1), ("010", "a", 1.5, 2), ("10", "a", 0.5, 1)]


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet", "jsonl"])
def test_mapped_columns(warehouse, tmp_path, fmt):
    path = _write(RUN, tmp_path / f"run.{fmt}", fmt)
    [result] = warehouse.ingest_run(path, columns=MAPPING, name="r")
    assert (result.num_queries, result.num_rows) == (2, 3)
    assert _rows(warehouse) == EXPECTED


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl", "dataframe"])
def test_common_names_recognised(warehouse, tmp_path, fmt):
    frame = RUN.rename(columns={"QUERY_KEY": "query_id", "DOC_KEY": "docno", "SCORE": "sim"})
    frame["system"] = "bm25"
    source = frame if fmt == "dataframe" else _write(frame, tmp_path / f"x.{fmt}", fmt)
    [result] = warehouse.ingest_run(source)
    assert (result.name, result.system_tag) == ("bm25", "bm25")
    assert _rows(warehouse) == EXPECTED


def test_dataframe_mapping_dedup_and_default_name(warehouse):
    [first] = warehouse.ingest_run(RUN, columns=MAPPING)
    assert first.name.startswith("dataframe-") and first.system_tag == "run"
    [again] = warehouse.ingest_run(RUN.copy(), columns=MAPPING)
    assert not again.created and again.id == first.id


@pytest.mark.parametrize("dtype", ["str", "string[pyarrow]", "string[python]", object])
def test_a_frame_is_named_by_its_content_whatever_its_string_dtype(warehouse, dtype):
    frame = RUN.astype({"QUERY_KEY": dtype, "DOC_KEY": dtype})
    [stored] = warehouse.ingest_run(frame, columns=MAPPING)
    # frame_sha256's serialization, by hand: the field names, then each field's values
    digest = hashlib.sha256(b"qid\tdocid\tscore")
    digest.update(b"\x00qid\x00" + "\x1f".join(["010", "010", "10", ""]).encode())
    digest.update(b"\x00docid\x00" + "\x1f".join(["a", "b", "a", ""]).encode())
    digest.update(b"\x00score\x00" + struct.pack("=3d", 1.5, 2.5, 0.5))
    assert stored.name == f"dataframe-{digest.hexdigest()[:8]}"


def test_arrow_held_text_hashes_as_python_text():
    """Arrow-backed ids are hashed from Arrow's buffers: the same digest as Python strings,
    for text beyond ASCII, for a slice (an offset into the buffers) and for several chunks."""
    import pyarrow as pa

    values = ["q1", "é", "日本語", "x\x1fy", "🙂", "d" * 300]
    chunked = pa.chunked_array([pa.array(values[:2]), pa.array(values[2:], pa.string())])
    held = {
        "arrow": pd.Series(values, dtype="string[pyarrow]"),
        "chunks": pd.Series(pd.arrays.ArrowStringArray(chunked)),
        "object": pd.Series(values, dtype=object),
    }
    assert held["chunks"].array._pa_array.num_chunks == 2  # really two chunks
    for part in (slice(None), slice(2, 5), slice(0, 0)):
        digests = {
            name: frame_sha256(pd.DataFrame({"qid": series.iloc[part].reset_index(drop=True)}))
            for name, series in held.items()
        }
        text = "".join(value + "\x1f" for value in values[part])
        expected = hashlib.sha256(b"qid\x00qid\x00" + text.encode()).hexdigest()
        assert set(digests.values()) == {expected}, part


def test_qrels_from_csv_with_mapping_and_dataframe(warehouse, tmp_path):
    frame = pd.DataFrame({"q": ["1", "1", "2"], "d": ["x", "y", "x"], "label": [2, 0, -1]})
    path = _write(frame, tmp_path / "judged.csv", "csv")
    result = warehouse.ingest_qrels(path, columns={"qid": "q", "docid": "d"})
    assert (result.name, result.num_queries, result.num_rows) == ("judged", 2, 3)
    again = warehouse.ingest_qrels(frame, columns="qid=q,docid=d")
    assert again.created and again.name.startswith("dataframe-")
    assert warehouse.qrels(result.id)["max_grade"] == 2


def test_missing_column_hint(warehouse, tmp_path):
    path = _write(RUN, tmp_path / "run.csv", "csv")
    with pytest.raises(
        InputError,
        match=r"no column for qid, docid \(.*its columns are QUERY_KEY, DOC_KEY, SCORE; "
        r"pass columns=\{'qid': '<column>', 'docid': '<column>'\}$",
    ):
        warehouse.ingest_run(path)


def test_ranks_only_suggests_order_rank(warehouse):
    frame = pd.DataFrame({"qid": ["1"], "docid": ["a"], "rank": [1]})
    with pytest.raises(InputError, match="pass order='rank'$"):
        warehouse.ingest_run(frame)
    [result] = warehouse.ingest_run(frame, order="rank")
    assert result.num_rows == 1


def test_bad_value_in_csv_names_line_and_column(warehouse, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("QUERY_KEY,DOC_KEY,SCORE\n1,a,1.0\n1,b,high\n")
    with pytest.raises(
        InputError, match=r"score 'high' is not a number \(.*bad.csv, line 3, field 'SCORE'\)"
    ):
        warehouse.ingest_run(path, columns=MAPPING)
    assert warehouse.runs().empty


def test_duplicate_in_dataframe_names_rows(warehouse):
    frame = pd.DataFrame({"qid": ["1", "1"], "docid": ["a", "a"], "rel": [1, 0]})
    with pytest.raises(InputError, match=r"appears twice for query '1': rows 0 and 1"):
        warehouse.ingest_qrels(frame)
    assert warehouse.qrels_sets().empty
