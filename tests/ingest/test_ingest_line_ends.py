"""LF, CRLF and a lone CR each end a line (docs/ingest.md), mixed in one file too: a lone CR
before a byte that is not ASCII once stopped DuckDB's reader ("CSV Error on Line: 3")."""

from __future__ import annotations

import pytest
from cli_helpers import finish, start

LINES = [b"q1 Q0 a 1 3.0 r", b"q1 Q0 b 2 2.0 r", "\u00e9 Q0 c 3 1.0 r".encode(), b"q2 Q0 d 1 1 r"]


@pytest.mark.parametrize(
    "ends",
    [
        [b"\r\n", b"\r", b"\r\n", b"\n"],
        [b"\r", b"\r", b"\r", b"\r"],
        [b"\n", b"\r", b"\r\n", b"\r"],
        [b"\r\n", b"\r\n", b"\r", b""],
    ],
    ids=["crlf-then-cr", "cr-only", "all-three", "no-last-end"],
)
def test_every_line_end_ends_a_line(tmp_path, ends):
    (tmp_path / "mixed.run").write_bytes(b"".join(a + b for a, b in zip(LINES, ends, strict=True)))
    done = finish(start(["--db", "w.duckdb", "ingest", "run", "mixed.run"], cwd=tmp_path))
    assert done.exit_code == 0, done.stderr
    listed = finish(start(["--db", "w.duckdb", "runs", "list", "--format", "tsv"], cwd=tmp_path))
    header, row = listed.stdout.splitlines()
    fields = dict(zip(header.split("\t"), row.split("\t"), strict=True))
    assert (fields["queries"], fields["rows"]) == ("3", "4")
