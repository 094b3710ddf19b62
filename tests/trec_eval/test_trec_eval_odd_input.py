"""``rankhouse trec-eval`` on odd bytes reads files exactly as trec_eval 10 does.

Expected outputs were produced by trec_eval 10.0 (built from usnistgov/trec_eval) on the same
bytes: a BOM stays part of the first query id, a lone CR is whitespace (not a line end),
control bytes belong to fields, a file name is never a pattern, and a NaN score survives the
scratch warehouse of an aborted evaluation.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma

import pytest
import zstandard

from rankhouse.trec_eval.runner import main

Q = b"q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n"
R = b"q1 Q0 b 1 2 r\nq1 Q0 a 2 1 r\nq2 Q0 c 1 1 r\n"
LINE = "map                   \t{}\t{}\n"
BOTH = LINE.format("q1", "0.5000") + LINE.format("q2", "1.0000") + LINE.format("all", "0.7500")

CASES = [
    (
        "BOM in the run",
        Q,
        b"\xef\xbb\xbf" + R,
        LINE.format("q1", "1.0000") + LINE.format("q2", "1.0000") + LINE.format("all", "1.0000"),
        0,
        "",
    ),
    (
        "BOM in the qrels",
        b"\xef\xbb\xbf" + Q,
        R,
        LINE.format("q1", "0.0000") + LINE.format("q2", "1.0000"),
        4,
        "not found in qrels",
    ),
    (
        "lone CR in the run is not a line end",
        Q,
        b"q1 Q0 b 1 2 r\rq2 Q0 c 1 1 r\nq1 Q0 a 2 1 r\n",
        LINE.format("q1", "0.5000"),
        4,
        "trec_eval: result qid 'q2' not found in qrels\n",
    ),
    ("CRLF run", Q, R.replace(b"\n", b"\r\n"), BOTH, 0, ""),
    # the long document is unjudged, as b is not relevant: the same values
    ("a line over 2 MB", Q, R.replace(b" b ", b" " + b"x" * 3_000_000 + b" "), BOTH, 0, ""),
    ("CR as a separator", Q, b"q1\rQ0 b 1 2 r\nq1 Q0 a\r2 1 r\nq2 Q0 c 1 1\rr\n", BOTH, 0, ""),
    (
        "lone CR in the qrels",
        b"q1 0 a 1\rq1 0 b 0\nq2 0 c 1\n",
        R,
        "",
        2,
        "trec_eval.get_qrels: Malformed line 1\ntrec_eval: Quit in file 'q'\n",
    ),
    ("CRLF qrels", Q.replace(b"\n", b"\r\n"), R, BOTH, 0, ""),
    (
        "control bytes belong to fields",
        b"q1 0 a\x01 1\nq1 0 b 0\nq2\x1c 0 c 1\n",
        b"q1 Q0 b 1 2 r\x01x\nq1 Q0 a\x01 2 1 r\nq2\x1c Q0 c 1 1 r\x1f\n",
        LINE.format("q1", "0.5000")
        + LINE.format("q2\x1c", "1.0000")
        + LINE.format("all", "0.7500"),
        0,
        "",
    ),
    (
        "a NaN score of an unjudged query, then an abort",
        b"q27 0 d34 0\nqextra 0 dextra 1\n",
        b"q9 Q0 d4 40 nan tagB\nq27 Q0 d34 32 1 tagA\n",
        LINE.format("q27", "0.0000"),
        4,
        "trec_eval: result qid 'qextra' not found in qrels\n",
    ),
    (
        "a score atof reads as NaN, then an abort",
        Q + b"q3 0 e 1\n",
        b"q1 Q0 b 1 2 r\nq1 Q0 a 2 1 r\nq2 Q0 c 1 nanx r\n",
        LINE.format("q1", "0.5000") + LINE.format("q2", "1.0000"),
        4,
        "trec_eval: result qid 'q3' not found in qrels\n",
    ),
    (
        "a short line is numbered among data lines",
        Q,
        b"# c\nq1 Q0 b 1 2 r\n\nq2 Q0 c\n",
        "",
        2,
        "trec_eval.get_results: Malformed line 2\ntrec_eval: Quit in file 'r'\n",
    ),
]


def _evaluate(tmp_path, monkeypatch, qrels_name: str, run_name: str) -> tuple[str, int, str]:
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    code = main(["-q", "-m", "map", qrels_name, run_name], out=out, err=err, read_only=True)
    return out.getvalue(), code, err.getvalue()


@pytest.mark.parametrize(
    ("case", "qrels", "run", "stdout", "code", "stderr"), CASES, ids=[c[0] for c in CASES]
)
def test_odd_bytes_read_as_trec_eval_does(
    tmp_path, monkeypatch, case, qrels, run, stdout, code, stderr
):
    (tmp_path / "q").write_bytes(qrels)
    (tmp_path / "r").write_bytes(run)
    got_out, got_code, got_err = _evaluate(tmp_path, monkeypatch, "q", "r")
    assert (got_out, got_code) == (stdout, code)
    assert stderr in got_err


@pytest.mark.parametrize("name", ["run[1].txt", "r?.txt", "*", "{r,s}.txt"])
def test_a_run_name_is_never_a_pattern(tmp_path, monkeypatch, name):
    (tmp_path / "q").write_bytes(Q)
    (tmp_path / "run1.txt").write_bytes(b"q1 Q0 b 1 1 other\n")  # what a glob would match
    (tmp_path / "r1.txt").write_bytes(b"q1 Q0 b 1 1 other\n")
    (tmp_path / name).write_bytes(R)
    assert _evaluate(tmp_path, monkeypatch, "q", name) == (BOTH, 0, "")


@pytest.mark.parametrize("name", ["run[1].txt", "r?.txt"])
def test_a_missing_run_named_like_a_pattern_is_missing(tmp_path, monkeypatch, name):
    (tmp_path / "q").write_bytes(Q)
    (tmp_path / "run1.txt").write_bytes(R)
    (tmp_path / "r1.txt").write_bytes(R)
    out, code, err = _evaluate(tmp_path, monkeypatch, "q", name)
    assert (out, code) == ("", 2)
    assert f"Cannot read results file '{name}'" in err


COMPRESSORS = {
    "gzip": gzip.compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
    "zstd": lambda data: zstandard.ZstdCompressor().compress(data),
}


@pytest.mark.parametrize("method", sorted(COMPRESSORS))
def test_compressed_inputs_are_read_decompressed(tmp_path, monkeypatch, method):
    """A documented extension: trec_eval reads no compressed file (it reports a malformed
    line); rankhouse decompresses by the magic bytes, whatever the name."""
    (tmp_path / "q").write_bytes(COMPRESSORS[method](Q))
    (tmp_path / "r").write_bytes(COMPRESSORS[method](R))
    (tmp_path / "plain.gz").write_bytes(R)
    assert _evaluate(tmp_path, monkeypatch, "q", "r") == (BOTH, 0, "")
    assert _evaluate(tmp_path, monkeypatch, "q", "plain.gz") == (BOTH, 0, "")


def test_damaged_compressed_run_is_a_clean_error(tmp_path, monkeypatch):
    (tmp_path / "q").write_bytes(Q)
    (tmp_path / "r.gz").write_bytes(gzip.compress(R * 50)[:-12])
    from rankhouse.errors import RankhouseError

    try:
        out, code, err = _evaluate(tmp_path, monkeypatch, "q", "r.gz")
    except RankhouseError as exc:
        assert "r.gz" in str(exc) and "damaged or truncated" in str(exc)
    else:
        assert code == 2 and "r.gz" in err and "damaged or truncated" in err
