"""A run file read with trec_eval 10's rules (TREC_EVAL_SEMANTICS section 3).

Runs can hold millions of lines, so DuckDB reads and splits them: as six fixed columns when
every line is six fields joined by single spaces, else each line split in SQL; only the scores
DuckDB cannot cast exactly like C ``atof`` go through the Python emulation. A run that DuckDB's
CSV reader would read otherwise than trec_eval (a byte order mark, which trec_eval keeps in
the first query id; a carriage return, which trec_eval does not take as a line end; a ``\x01``
byte, the SQL line reader's delimiter) is split in Python instead. A regular run seldom comes
here: ``trec-eval`` reads it with the direct reader first (:mod:`.direct`).
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass

from ..c_numbers import atof
from ..duck import duckdb
from ..errors import InputError
from .input_files import FIELD_SPACE, check_results_file, plain_copy, quit_in, results_file


@dataclass
class Run:
    """A run read into the DuckDB table ``table`` (qid, docno, score) and its run tag."""

    table: str
    runid: str


_SPLIT_SQL = r"""
CREATE OR REPLACE TEMP TABLE {table} AS
WITH lines AS (
    SELECT line,
           contains(line, chr(9)) OR contains(line, chr(13)) OR contains(line, chr(11))
           OR contains(line, chr(12)) OR contains(line, '  ') OR starts_with(line, ' ')
           OR ends_with(line, ' ') AS irregular
    FROM read_csv(?, delim = chr(1), header = false, columns = {{'line': 'VARCHAR'}},
                  quote = '', escape = '', auto_detect = false, strict_mode = false,
                  max_line_size = {max_line}, compression = 'none')
    WHERE line IS NOT NULL
), split AS (
    SELECT CASE WHEN irregular
                THEN regexp_split_to_array(
                         trim(regexp_replace(line, '[\t\r\x0b\x0c]', ' ', 'g')), ' +')
                ELSE string_split(line, ' ') END AS f
    FROM lines
)
SELECT f[1] AS qid, f[3] AS docno, f[5] AS score_text, len(f) AS num_fields,
       CASE WHEN NOT contains(f[5], '_') THEN try_cast(f[5] AS DOUBLE) END AS score
FROM split
WHERE f[1] <> '' AND NOT starts_with(f[1], '#')
"""


# The common case, read at full speed: every line is exactly six fields separated by single
# spaces. Anything else (tabs, runs of spaces, extra fields, ...) makes DuckDB fail and the
# general _SPLIT_SQL takes over. Scores go through the same exactness rules as there.
_FAST_SQL = r"""
CREATE OR REPLACE TEMP TABLE {table} AS
SELECT qid, docno, score AS score_text, 6 AS num_fields,
       CASE WHEN NOT contains(score, '_') THEN try_cast(score AS DOUBLE) END AS score,
       coalesce(iter, '') = '' OR coalesce(rank, '') = '' OR coalesce(tag, '') = '' AS empty_field
FROM read_csv(?, delim = ' ', header = false, quote = '', escape = '', auto_detect = false,
              strict_mode = true, null_padding = false, max_line_size = {fast_max_line},
              compression = 'none',
              columns = {{'qid': 'VARCHAR', 'iter': 'VARCHAR', 'docno': 'VARCHAR',
                          'rank': 'VARCHAR', 'score': 'VARCHAR', 'tag': 'VARCHAR'}})
WHERE qid IS NULL OR NOT starts_with(qid, '#')
"""
_FAST_CHECK = """
SELECT count(*) FROM {table}
WHERE qid IS NULL OR qid = '' OR docno IS NULL OR docno = '' OR score_text IS NULL
   OR score_text = '' OR empty_field
"""


def read_run(con, path: str, table: str = "te_run") -> Run:
    """Read a TREC run into DuckDB table ``table`` with trec_eval's rules.

    Blank lines and lines whose first non-blank character is ``#`` are skipped; a data line
    needs at least 6 fields (iter, rank and fields past the 6th are ignored); scores follow C
    ``atof``. A name starting with ``-`` reads standard input.

    Raises:
        TrecEvalExit: unreadable or empty file, a malformed line, no data line (exit 2).
    """
    with results_file(path) as file:
        return _read_run_file(con, file, path, table)


def _read_run_file(con, file: str, shown: str, table: str) -> Run:
    check_results_file(file, shown)
    try:
        with plain_copy(file, shown) as plain:
            _split_run(con, plain, shown, table)
            count, min_fields = con.execute(
                f"SELECT count(*), min(num_fields) FROM {table}"
            ).fetchall()[0]
            if count == 0:
                message = f"trec_eval.get_results: No data lines in results file '{shown}'\n"
                raise quit_in(message, shown)
            if min_fields < 6:
                message = f"trec_eval.get_results: Malformed line {_malformed_line(plain)}\n"
                raise quit_in(message, shown)
            runid = last_tag(plain)
    except InputError as exc:
        raise quit_in(f"trec_eval.get_results: cannot read '{shown}': {exc}\n", shown) from None
    bad = con.execute(f"SELECT DISTINCT score_text FROM {table} WHERE score IS NULL").fetchall()
    if bad:
        con.execute(
            f"UPDATE {table} SET score = fixes.fixed FROM (SELECT unnest($texts) AS score_text, "
            f"CAST(unnest($fixed) AS DOUBLE) AS fixed) AS fixes "
            f"WHERE {table}.score IS NULL AND {table}.score_text = fixes.score_text",
            {"texts": [t for (t,) in bad], "fixed": [atof(t) for (t,) in bad]},
        )
    return Run(table, runid)


def _split_run(con, plain: str, shown: str, table: str) -> None:
    """Fill ``table`` (qid, docno, score_text, num_fields, score) from the plain run file."""
    if _needs_python_split(plain):
        _split_in_python(con, plain, shown, table)
        return
    sql = {"table": table, "max_line": _MAX_LINE, "fast_max_line": _FAST_MAX_LINE}
    if _split_fixed(con, plain, table, sql):
        return
    try:
        con.execute(_SPLIT_SQL.format(**sql), [plain])
    except duckdb.Error as exc:  # e.g. bytes that are not UTF-8
        raise quit_in(f"trec_eval.get_results: cannot read '{shown}': {exc}\n", shown) from exc


def _split_fixed(con, plain: str, table: str, sql: dict) -> bool:
    """Whether every line of the plain run file is six non-empty fields joined by single
    spaces; then ``table`` holds them (:data:`_FAST_SQL`)."""
    try:
        con.execute(_FAST_SQL.format(**sql), [plain])
    except duckdb.Error:  # a line of other fields (outside a transaction: nothing aborted)
        return False
    return not con.execute(_FAST_CHECK.format(table=table)).fetchall()[0][0]


_MAX_LINE = 1 << 30  # trec_eval reads lines of any length
_FAST_MAX_LINE = 1 << 21  # DuckDB sizes its buffers by it; _FAST_SQL fails over above 2 MB
_BOM = b"\xef\xbb\xbf"


def _needs_python_split(plain: str) -> bool:
    """A BOM at the start, a CR or a \x01 anywhere (one memchr each over the mapped file)."""
    with open(plain, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return m[:3] == _BOM or m.find(b"\r") >= 0 or m.find(b"\x01") >= 0


def _split_in_python(con, plain: str, shown: str, table: str) -> None:
    """trec_eval's own split: lines end at LF only; space, tab, CR, VT and FF separate."""
    qids: list[str] = []
    docnos: list[str | None] = []
    scores: list[str | None] = []
    counts: list[int] = []
    with open(plain, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            fields = _data_fields(raw.rstrip(b"\n"))
            if fields is None:
                continue
            try:
                text = [field.decode("utf-8") for field in fields[:5]]
            except UnicodeDecodeError:
                raise quit_in(
                    f"trec_eval.get_results: cannot read '{shown}': "
                    f"bytes that are not UTF-8 on line {number}\n",
                    shown,
                ) from None
            qids.append(text[0])
            docnos.append(text[2] if len(text) > 2 else None)
            scores.append(text[4] if len(text) > 4 else None)
            counts.append(len(fields))
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {table} AS "
        "SELECT qid, docno, score_text, num_fields, "
        "CASE WHEN NOT contains(score_text, '_') THEN try_cast(score_text AS DOUBLE) END "
        "AS score FROM (SELECT CAST(unnest($q) AS VARCHAR) AS qid, "
        "CAST(unnest($d) AS VARCHAR) AS docno, CAST(unnest($s) AS VARCHAR) AS score_text, "
        "CAST(unnest($n) AS BIGINT) AS num_fields, generate_subscripts($q, 1) AS line) "
        "ORDER BY line",
        {"q": qids, "d": docnos, "s": scores, "n": counts},
    )


def _data_fields(raw: bytes) -> list[bytes] | None:
    fields = FIELD_SPACE.split(raw.strip(b" \t\r\v\f"))
    if fields == [b""] or fields[0].startswith(b"#"):
        return None
    return fields


def _malformed_line(file: str) -> int:
    """trec_eval's number of the first short line: its position among the data lines."""
    number = 0
    with open(file, "rb") as handle:
        for raw in handle:
            fields = _data_fields(raw.rstrip(b"\n"))
            if fields is None:
                continue
            number += 1
            if len(fields) < 6:
                return number
    return 0


def last_tag(file: str) -> str:
    """The tag (field 6) of the last data line: trec_eval's ``runid``."""
    size = os.path.getsize(file)
    block = 1 << 16
    with open(file, "rb") as handle:
        while True:
            start = max(0, size - block)
            handle.seek(start)
            lines = handle.read().split(b"\n")
            if start > 0:
                lines = lines[1:]  # possibly cut
            for raw in reversed(lines):
                fields = _data_fields(raw)
                if fields is not None:
                    return fields[5].decode("utf-8", "surrogateescape")
            if start == 0:
                return ""
            block *= 4
