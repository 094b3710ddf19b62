"""The reading rules of docs/ingest.md, one reproducer each: a file is read as the bytes it holds.

Names are never patterns, compression is known by its first bytes, a BOM is dropped, LF, CRLF
and a lone CR each end a line, every byte that is not a separator belongs to a field, numbers
follow one rule in SQL and in the rescan, and errors name the right line and field.
"""

from __future__ import annotations

import bz2
import gzip
import lzma

import pytest
import zstandard

from rankhouse.errors import InputError

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n"
RUN = b"q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d3 1 0.5 sys\n"
COMPRESSORS = {
    "gzip": gzip.compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
    "zstd": lambda data: zstandard.ZstdCompressor().compress(data),
}


def judgments(wh, result=None) -> list[tuple]:
    with wh.connect() as conn:
        duck = wh.duckdb_connection(conn)
        where = f"WHERE qrels_id = {result.id}" if result is not None else ""
        return duck.execute(
            f"SELECT query_id, doc_id, grade FROM judgments {where} ORDER BY ALL"
        ).fetchall()


def run_rows(wh, results) -> list[tuple]:
    ids = [r.id for r in results]
    with wh.connect() as conn:
        duck = wh.duckdb_connection(conn)
        return duck.execute(
            "SELECT r.system_tag, query_id, doc_id, rank, score FROM run_rows JOIN runs r "
            "ON r.id = run_id WHERE run_id IN (SELECT unnest(?)) ORDER BY ALL",
            [ids],
        ).fetchall()


# --- a path is a path ---------------------------------------------------------------------


@pytest.mark.parametrize("name", ["run[1].txt", "r?.txt", "*", "{r,s}.txt", "a\\b.txt"])
def test_a_file_name_is_never_a_pattern(warehouse, tmp_path, name):
    (tmp_path / "run1.txt").write_bytes(b"q9 Q0 other 1 1 wrong\n")
    (tmp_path / "r1.txt").write_bytes(b"q9 Q0 other 1 1 wrong\n")
    (tmp_path / name).write_bytes(RUN)
    [result] = warehouse.ingest_run(tmp_path / name)
    assert result.system_tag == "sys" and result.num_rows == 3
    (tmp_path / ("q" + name)).write_bytes(QRELS)
    assert len(judgments(warehouse, warehouse.ingest_qrels(tmp_path / ("q" + name)))) == 3


@pytest.mark.parametrize("name", ["run[1].txt", "r?.txt", "*"])
def test_a_missing_file_named_like_a_pattern_is_missing(warehouse, tmp_path, name):
    (tmp_path / "run1.txt").write_bytes(RUN)
    (tmp_path / "r1.txt").write_bytes(RUN)
    with pytest.raises(InputError, match="no such file"):
        warehouse.ingest_run(tmp_path / name)


def test_cli_ingest_and_eval_read_the_named_file(run_cli, tmp_path):
    (tmp_path / "q.txt").write_bytes(QRELS)
    (tmp_path / "run1.txt").write_bytes(b"q1 Q0 d2 1 1 wrong\n")
    (tmp_path / "run[1].txt").write_bytes(RUN)
    done = run_cli("eval", "q.txt", "run[1].txt", "-m", "AP", "--format", "csv")
    assert done.exit_code == 0, done.stderr
    assert "sys" in done.stdout and "wrong" not in done.stdout
    assert run_cli("ingest", "run", "r?.txt").stderr.startswith("Error: no such file")
    assert run_cli("eval", "q.txt", "run[2].txt", "-m", "AP").exit_code == 1


# --- compression by magic bytes ---------------------------------------------------------


@pytest.mark.parametrize("method", sorted(COMPRESSORS))
@pytest.mark.parametrize("name", ["run.txt", "run.txt.{suffix}", "run.csv.{suffix}"])
def test_compression_is_known_by_its_bytes(warehouse, tmp_path, method, name):
    suffix = {"gzip": "gz", "bz2": "bz2", "xz": "xz", "zstd": "zst"}[method]
    path = tmp_path / name.format(suffix=suffix)
    path.write_bytes(COMPRESSORS[method](RUN))
    if name.startswith("run.csv"):  # the compression suffix is stripped: csv by extension
        with pytest.raises(InputError, match="no column for"):
            warehouse.ingest_run(path)
        return
    [result] = warehouse.ingest_run(path)
    assert (result.num_rows, result.num_queries) == (3, 2)


def test_a_plain_file_named_gz_is_plain(warehouse, tmp_path):
    (tmp_path / "qrels.txt.gz").write_bytes(QRELS)
    assert len(judgments(warehouse, warehouse.ingest_qrels(tmp_path / "qrels.txt.gz"))) == 3
    (tmp_path / "run.gz").write_bytes(RUN)
    assert warehouse.ingest_run(tmp_path / "run.gz")[0].num_rows == 3


def _damaged(method: str, truncate: bool) -> bytes:
    packed = COMPRESSORS[method](RUN * 200)
    if truncate:
        return packed[: len(packed) // 2]
    middle = len(packed) // 2
    return packed[:middle] + bytes([packed[middle] ^ 0xFF]) + packed[middle + 1 :]


@pytest.mark.parametrize("method", sorted(COMPRESSORS))
@pytest.mark.parametrize("truncate", [True, False], ids=["truncated", "corrupt"])
def test_damaged_compressed_file_is_a_clean_error(warehouse, tmp_path, method, truncate):
    path = tmp_path / "run.txt"
    path.write_bytes(_damaged(method, truncate))
    # a corrupt stream without a checksum (zstd's default) may decode to other bytes: then
    # those bytes are what is refused, still in one clean error naming the file
    pattern = r"damaged or truncated.*run\.txt" if truncate else r"run\.txt"
    with pytest.raises(InputError, match=pattern):
        warehouse.ingest_run(path)
    with pytest.raises(InputError, match=r"run\.txt"):
        warehouse.ingest_qrels(path)


def test_damaged_gzip_on_the_cli_is_one_error_line(run_cli, tmp_path):
    (tmp_path / "run.txt.gz").write_bytes(_damaged("gzip", truncate=True))
    done = run_cli("ingest", "run", "run.txt.gz")
    assert done.exit_code == 1
    assert done.stderr.startswith("Error: ") and "run.txt.gz" in done.stderr
    assert "Aborted" not in done.stderr and "Traceback" not in done.stderr


# --- BOM, line ends, control bytes ------------------------------------------------------


def test_a_bom_is_dropped_and_lines_keep_their_numbers(warehouse, tmp_path):
    path = tmp_path / "q.txt"
    path.write_bytes(b"\xef\xbb\xbfq1 0 d1 1\n")
    assert judgments(warehouse, warehouse.ingest_qrels(path)) == [("q1", "d1", 1)]
    path.write_bytes(b"\xef\xbb\xbfq1 0 d1 1\nq2 0 d2 x\n")
    with pytest.raises(InputError, match=r"grade 'x' is not an integer \(.*line 2, field 'rel'\)"):
        warehouse.ingest_qrels(path)
    run = tmp_path / "r.txt"
    run.write_bytes(b"\xef\xbb\xbf" + RUN)
    assert run_rows(warehouse, warehouse.ingest_run(run))[0][1] == "q1"


@pytest.mark.parametrize(
    ("data", "queries"),
    [
        (b"q1 0 d1 1\r\nq2 0 d2 1\r10 0 d3 1\r\n", ["10", "q1", "q2"]),  # the file
        (b"q1 0 d1 1\n\rq2 0 d2 1\n", ["q1", "q2"]),  # LF then CR: an empty line between
        (b"q1 0 d1 1\rq2 0 d2 1\r", ["q1", "q2"]),  # old Mac line ends
        (b"q1 0 d1 1\r\r\nq2 0 d2 1", ["q1", "q2"]),
    ],
)
def test_every_line_end_ends_a_line_and_no_byte_is_lost(warehouse, tmp_path, data, queries):
    path = tmp_path / "q.txt"
    path.write_bytes(data)
    assert sorted({q for q, _, _ in judgments(warehouse, warehouse.ingest_qrels(path))}) == queries


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"q1 0 d1 1\rq2 0 d2 1\rq3 0 d3 x\r", 3),
        (b"q1 0 d1 1\r\nq2 0 d2 1\r\n\r\nq3 0 d3 x\r\n", 4),
        (b"q1 0 d1 1\n\rq3 0 d3 x\n", 3),
        (b"\xef\xbb\xbf# c\rq3 0 d3 \xd9\xa1.5\n", 2),  # a BOM, a CR, a Unicode digit
    ],
)
def test_errors_name_the_line_counting_every_line_end(warehouse, tmp_path, data, line):
    path = tmp_path / "q.txt"
    path.write_bytes(data)
    with pytest.raises(InputError, match=rf"line {line}, field 'rel'"):
        warehouse.ingest_qrels(path)


def test_control_bytes_belong_to_fields(warehouse, tmp_path):
    path = tmp_path / "r.txt"
    path.write_bytes(b"q\x1c1 Q0 d\x1f1 1 1.5 ta\x01g\nq\x1c1 Q0 d\x7f2 2 0.5 ta\x01g\n")
    assert run_rows(warehouse, warehouse.ingest_run(path)) == [
        ("ta\x01g", "q\x1c1", "d\x1f1", 1, 1.5),
        ("ta\x01g", "q\x1c1", "d\x7f2", 2, 0.5),
    ]


def test_a_comment_line_does_not_change_how_the_rest_is_read(warehouse, tmp_path):
    plain, commented = tmp_path / "a.txt", tmp_path / "b.txt"
    plain.write_bytes(b"q1 0 d1 0\x01junk\n")
    commented.write_bytes(b"# comment\nq1 0 d1 0\x01junk\n")
    with pytest.raises(InputError, match=r"grade '0\\x01junk' is not an integer .*line 1"):
        warehouse.ingest_qrels(plain)
    with pytest.raises(InputError, match=r"grade '0\\x01junk' is not an integer .*line 2"):
        warehouse.ingest_qrels(commented)


def test_a_line_longer_than_2_mb_is_read(warehouse, tmp_path):
    path = tmp_path / "r.txt"
    long_id = "d" * 3_000_000
    path.write_text(f"q1 Q0 {long_id} 1 1.0 sys\nq1 Q0 d2 2 0.5 sys\n")
    [result] = warehouse.ingest_run(path)
    assert result.num_rows == 2
    path.write_text(f"q1 0 {long_id} 1\nq1\t0\td2\t0\n")
    assert len(judgments(warehouse, warehouse.ingest_qrels(path))) == 2


# --- numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "score", ["1_000", "+-1", "\u0661.5", "1.5\x1c", "1.5\x1f", "0x10", "nan", "1e", "."]
)
def test_score_spellings_refused_with_line_and_field(warehouse, tmp_path, score):
    path = tmp_path / "r.txt"
    path.write_bytes(RUN + f"q3 Q0 d9 1 {score} sys\n".encode())
    with pytest.raises(InputError, match=r"score .* \(.*line 4, field 'score'\)"):
        warehouse.ingest_run(path)


@pytest.mark.parametrize(
    ("score", "value"),
    [("+3", 3.0), ("1.", 1.0), (".5", 0.5), ("-2.5E-3", -0.0025), ("inf", float("inf"))],
)
def test_score_spellings_accepted(warehouse, tmp_path, score, value):
    path = tmp_path / "r.txt"
    path.write_bytes(f"q3 Q0 d9 1 {score} sys\n".encode())
    assert run_rows(warehouse, warehouse.ingest_run(path))[0][4] == value


@pytest.mark.parametrize(("grade", "value"), [("1.0", 1), ("2.00", 2), ("+1", 1), ("007", 7)])
def test_grade_spellings_accepted(warehouse, tmp_path, grade, value):
    path = tmp_path / "q.txt"
    path.write_bytes(f"q1 0 d1 {grade}\n".encode())
    assert judgments(warehouse, warehouse.ingest_qrels(path)) == [("q1", "d1", value)]


@pytest.mark.parametrize("grade", ["1.5", "1_0", "\u0661", "2147483648", "1e0", "+-1", "0x1"])
def test_grade_spellings_refused(warehouse, tmp_path, grade):
    path = tmp_path / "q.txt"
    path.write_bytes(f"q1 0 d0 1\nq1 0 d1 {grade}\n".encode())
    with pytest.raises(InputError, match=r"grade .* \(.*line 2, field 'rel'\)"):
        warehouse.ingest_qrels(path)


# --- rank-only runs -----------------------------------------------------------------------


def test_rank_only_run_with_order_rank(warehouse, tmp_path):
    path = tmp_path / "ranks.txt"
    path.write_bytes(b"q1 Q0 d1 1 sys\nq1 Q0 d2 2 sys\nq2 Q0 d3 1 sys\n")
    assert run_rows(warehouse, warehouse.ingest_run(path, order="rank")) == [
        ("sys", "q1", "d1", 1, -1.0),
        ("sys", "q1", "d2", 2, -2.0),
        ("sys", "q2", "d3", 1, -1.0),
    ]
    with pytest.raises(InputError, match=r"line 1.*needs order='rank'"):
        warehouse.ingest_run(path, name="by-score")


def test_columns_do_not_apply_to_trec_text(warehouse, tmp_path):
    path = tmp_path / "r.txt"
    path.write_bytes(RUN)
    with pytest.raises(InputError, match="^columns applies to csv, tsv, parquet and jsonl"):
        warehouse.ingest_run(path, columns="qid=a,docid=b,score=c")
