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
from .input_files import (
    FIELD_SPACE,
    NotText,
    check_results_file,
    is_utf8,
    plain_copy,
    quit_in,
    results_file,
)
from .options import TEXT


@dataclass
class Run:
    """A run read into the DuckDB table ``table`` (qid, docno, score) and its run tag."""

    table: str
    runid: str


def _cast_score(text: str) -> str:
    """SQL: the score DuckDB reads from ``text`` as C's ``atof`` does, else NULL (then
    :func:`rankhouse.c_numbers.atof` reads it). DuckDB also takes digit separators (``1_0``)
    and a doubled sign (``+-1.4``, which is 0 to ``atof``)."""
    return (
        f"CASE WHEN NOT contains({text}, '_') AND left({text}, 2) NOT IN ('++', '+-', '-+', '--') "
        f"THEN try_cast({text} AS DOUBLE) END"
    )


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
       {score} AS score
FROM split
WHERE f[1] <> '' AND NOT starts_with(f[1], '#')
"""


# The common case, read at full speed: every line is exactly six fields separated by single
# spaces. Anything else (tabs, runs of spaces, extra fields, ...) makes DuckDB fail and the
# general _SPLIT_SQL takes over. Scores go through the same exactness rules as there.
_FAST_SQL = r"""
CREATE OR REPLACE TEMP TABLE {table} AS
SELECT qid, docno, score AS score_text, 6 AS num_fields,
       {fast_score} AS score,
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


def read_run(con, path: str, table: str = "te_run", encoding: str = TEXT) -> Run:
    """Read a TREC run into DuckDB table ``table`` with trec_eval's rules.

    Blank lines and lines whose first non-blank character is ``#`` are skipped; a data line
    needs at least 6 fields (iter, rank and fields past the 6th are ignored); scores follow C
    ``atof``. A name starting with ``-`` reads standard input. ``encoding``: the file is
    UTF-8 text (:data:`TEXT`) or read as bytes (:data:`BYTES`, split in Python).

    Raises:
        TrecEvalExit: unreadable or empty file, a malformed line, no data line (exit 2).
        NotText: the file is not UTF-8 and ``encoding`` is :data:`TEXT`.
    """
    with results_file(path) as file:
        return _read_run_file(con, file, path, table, encoding)


def _read_run_file(con, file: str, shown: str, table: str, encoding: str) -> Run:
    check_results_file(file, shown)
    try:
        with plain_copy(file, shown) as plain:
            _split_run(con, plain, shown, table, encoding)
            count, min_fields = con.execute(
                f"SELECT count(*), min(num_fields) FROM {table}"
            ).fetchall()[0]
            if count == 0:
                message = f"trec_eval.get_results: No data lines in results file '{shown}'\n"
                raise quit_in(message, shown)
            if min_fields < 6:
                message = f"trec_eval.get_results: Malformed line {_malformed_line(plain)}\n"
                raise quit_in(message, shown)
            runid = last_tag(plain, encoding)
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


def _split_run(con, plain: str, shown: str, table: str, encoding: str) -> None:
    """Fill ``table`` (qid, docno, score_text, num_fields, score) from the plain run file."""
    if encoding != TEXT or _needs_python_split(plain):
        _split_in_python(con, plain, table, encoding)
        return
    sql = {"table": table, "max_line": _MAX_LINE, "fast_max_line": _FAST_MAX_LINE}
    sql |= {"score": _cast_score("f[5]"), "fast_score": _cast_score("score")}
    if _split_fixed(con, plain, table, sql):
        return
    try:
        con.execute(_SPLIT_SQL.format(**sql), [plain])
    except duckdb.Error as exc:  # bytes that are not UTF-8, mostly
        if not is_utf8(plain):
            raise NotText(shown) from None
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


def _split_in_python(con, plain: str, table: str, encoding: str) -> None:
    """trec_eval's own split: lines end at LF only; space, tab, CR, VT and FF separate."""
    qids: list[str] = []
    docnos: list[str | None] = []
    scores: list[str | None] = []
    counts: list[int] = []
    with open(plain, "rb") as handle:
        for raw in handle:
            fields = _data_fields(raw.rstrip(b"\n"))
            if fields is None:
                continue
            try:
                text = [field.decode(encoding) for field in fields[:5]]
            except UnicodeDecodeError:
                raise NotText(plain) from None
            qids.append(text[0])
            docnos.append(text[2] if len(text) > 2 else None)
            scores.append(text[4] if len(text) > 4 else None)
            counts.append(len(fields))
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {table} AS "
        "SELECT qid, docno, score_text, num_fields, "
        f"{_cast_score('score_text')} AS score FROM (SELECT CAST(unnest($q) AS VARCHAR) AS qid, "
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


def last_tag(file: str, encoding: str = TEXT) -> str:
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
                    return fields[5].decode(encoding, "surrogateescape")
            if start == 0:
                return ""
            block *= 4
