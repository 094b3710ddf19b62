"""The two input files read with trec_eval 10's rules, and its messages when it cannot.

trec_eval names a file it cannot open, or an empty one, and quits with exit code 2; so does
``trec-eval`` (:func:`quit_in`). Files are opened by name, never as patterns, and compressed
files (gzip, bz2, xz, zstd, known by their first bytes) are read decompressed: trec_eval itself
reads no compressed input. A results name starting with ``-`` is standard input.

A qrels file (TREC_EVAL_SEMANTICS section 2, :func:`read_qrels`) has quirks (one comment line
at a time, blank lines fatal): DuckDB splits a UTF-8 file with trec_eval's rules (with a
shorter statement when every line is plain: no comment, single spaces), and a file it cannot
take exactly is read line by line in Python, which names the problem.

A run file (section 3, :func:`read_run`) can hold millions of lines, so DuckDB reads and
splits it: as six fixed columns when every line is six fields joined by single spaces, else
each line split in SQL; only the scores DuckDB cannot cast exactly like C ``atof`` go through
the Python emulation. A run that DuckDB's CSV reader would read otherwise than trec_eval (a
byte order mark, which trec_eval keeps in the first query id; a carriage return, which
trec_eval does not take as a line end; a ``\x01`` byte, the SQL line reader's delimiter) is
split in Python instead. A regular run seldom comes here: ``trec-eval`` reads it with the
direct reader first (:func:`.unstored.read_unstored`, :func:`.runner.read_and_store`).
"""

from __future__ import annotations

import codecs
import contextlib
import mmap
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..duck import duckdb
from ..errors import InputError
from ..ingest.files import duckdb_readable, file_odd_bytes, file_sha256, open_decompressed
from ..measures.model import INT32_MAX, INT32_MIN
from ..measures.trec import atof
from .options import TEXT, TrecEvalExit, atol

#: What separates trec_eval's fields: its ``isspace`` bytes but the newline, which ends a line.
FIELD_SPACE = re.compile(rb"[ \t\r\v\f]+")


class NotText(Exception):
    """A file is not UTF-8: ``trec-eval`` reads both files again as bytes (:data:`BYTES`)."""


def is_utf8(path: str) -> bool:
    """Whether the decompressed file ``path`` is UTF-8 (read in pieces; asked only after a
    reader failed)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open_decompressed(Path(path), path) as stream:
            while chunk := stream.read(1 << 22):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    except (OSError, InputError):
        return True  # not an encoding's fault: the reader says what it is
    return True


def quit_in(message: str, path: str) -> TrecEvalExit:
    """trec_eval's exit 2 after ``message``, naming the file it quits in."""
    return TrecEvalExit(2, f"{message}trec_eval: Quit in file '{path}'\n")


def cannot_read(what: str, path: str) -> TrecEvalExit:
    """trec_eval's exit for a file it cannot open or read, a folder, or an empty file: its
    words exactly (``what``: ``qrels`` or ``results``)."""
    return quit_in(f"trec_eval.get_{what}: Cannot read {what} file '{path}'\n", path)


def read_bytes(path: str, what: str) -> bytes:
    """The whole decompressed file ``path`` (``what``: ``qrels``), or trec_eval's exit."""
    try:
        with open_decompressed(Path(path), path) as stream:
            data = stream.read()
    except OSError:
        raise cannot_read(what, path) from None
    except InputError as exc:
        message = f"trec_eval.get_{what}: Cannot read {what} file '{path}': {exc}\n"
        raise quit_in(message, path) from None
    if not data:
        raise cannot_read(what, path)
    return data


@contextlib.contextmanager
def results_file(path: str) -> Iterator[str]:
    """The results file to read: ``path``, or standard input spooled to a file first when
    ``path`` starts with ``-``."""
    if not path.startswith("-"):
        yield path
        return
    with tempfile.NamedTemporaryFile(suffix=".run", delete=False) as tmp:
        tmp.write(sys.stdin.buffer.read())
    try:
        yield tmp.name
    finally:
        os.unlink(tmp.name)


def check_results_file(file: str, shown: str) -> None:
    """trec_eval's exit for a results file that cannot be opened, is a folder or is empty
    (named ``shown``)."""
    try:
        status = os.stat(file)
    except OSError:
        raise cannot_read("results", shown) from None
    if stat.S_ISDIR(status.st_mode) or status.st_size == 0:
        raise cannot_read("results", shown)


@contextlib.contextmanager
def plain_copy(file: str, shown: str) -> Iterator[str]:
    """A name DuckDB reads as exactly ``file``, holding its decompressed bytes."""
    with duckdb_readable(Path(file), shown, keep_gzip=False) as (path, _):
        yield str(path)


def results_sha256(file: str, whitespace: set[int]) -> str:
    """sha256 of the results file's content; collects its odd bytes into ``whitespace``.

    Raises:
        TrecEvalExit: the file is missing, empty or its compressed data is damaged.
    """
    return _scan_results(
        file, lambda path: file_sha256(path, seen_whitespace=whitespace, label=file)
    )


def results_odd_bytes(file: str) -> frozenset[int]:
    """The odd bytes of the results file (they decide its reader), without hashing it:
    evaluating without a warehouse stores nothing, so the file needs no identity.

    Raises:
        TrecEvalExit: as :func:`results_sha256`.
    """
    return frozenset(_scan_results(file, lambda path: file_odd_bytes(path, label=file)))


def _scan_results(file: str, scan):
    """``scan(path)`` of the results file, with trec_eval's errors for a missing, empty or
    damaged one."""
    check_results_file(file, file)
    try:
        return scan(Path(file))
    except InputError as exc:
        raise quit_in(f"trec_eval.get_results: cannot read '{file}': {exc}\n", file) from None


# --- qrels (spec 2) ------------------------------------------------------------------------


@dataclass(frozen=True)
class Qrels:
    """Judgments read into the DuckDB temporary table ``table`` (line, query_id, doc_id, grade;
    grade is C ``atol`` of field 4), and what trec_eval's checks need to know of them."""

    table: str
    topics: list[str]
    """The judged query ids in byte order (trec_eval's order of topics)."""
    num_positive: int
    """Lines with a judgment > 0 (the ``-c`` summary of num_rel)."""
    duplicate: tuple[str, str] | None
    """The first query id (byte order) judging a document twice, with its smallest such doc."""
    first_topic_all_negative: bool
    """Every judgment of the first topic is negative."""
    oversized: str | None = None
    """The first query id (byte order) with a grade past 2**31-1. trec_eval allocates 8 bytes
    for each grade level of a topic up to its highest (16 GiB past that bound) and stops
    at the topic where the allocation fails (exit 4)."""

    def copy_into(self, duck, table: str, *, first_only: bool = False) -> None:
        """``table`` (query_id, doc_id, grade) from the judgments in file order; ``first_only``
        keeps the first line of a repeated (query, document) pair."""
        keep = "QUALIFY row_number() OVER (PARTITION BY query_id, doc_id ORDER BY line) = 1"
        duck.execute(
            f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT query_id, doc_id, grade "
            f"FROM {self.table} {keep if first_only else ''} ORDER BY line"
        )


# Qrels text to a table (line, query_id, doc_id, grade): the lines split on LF only (a last
# empty piece is no line), each line's fields (the list f) split by a step between these two.
_QRELS_LINES = r"""
CREATE OR REPLACE TEMP TABLE {table} AS
WITH pieces AS (
    SELECT string_split($text, chr(10)) AS lines
), numbered AS (
    SELECT unnest(lines) AS line, generate_subscripts(lines, 1) AS n, len(lines) AS total
    FROM pieces
), lines AS (
    SELECT n, line FROM numbered WHERE NOT (n = total AND line = '')
), """
_QRELS_FIELDS = r"""
SELECT n AS line, f[1] AS query_id, f[3] AS doc_id,
       CASE WHEN len(f) = 4 AND regexp_full_match(f[4], '[+-]?[0-9]{{1,9}}')
            THEN CAST(f[4] AS INTEGER) END AS grade
FROM split
"""
# trec_eval's split: fields on its whitespace; a '#' line is skipped unless the line before it
# was a skipped comment (so in a block of '#' lines every other one is data).
_QRELS_SQL = (
    _QRELS_LINES
    + r"""marked AS (
    SELECT n, line,
           starts_with(line, '#')
           AND (n - coalesce(max(n) FILTER (WHERE NOT starts_with(line, '#'))
                             OVER (ORDER BY n ROWS UNBOUNDED PRECEDING), 0)) % 2 = 1
               AS skipped
    FROM lines
), split AS (
    SELECT n, regexp_split_to_array(trim(line, $blank), '[ \t\r\x0b\x0c]+') AS f
    FROM marked
    WHERE NOT skipped
)"""
    + _QRELS_FIELDS
)
# The same for a file of plain lines (see _plain_lines): no comment, fields split by single
# spaces. Half the time of the general split (DL19's 9,260 lines: 11 ms against 22).
_QRELS_PLAIN_SQL = (
    _QRELS_LINES
    + r"""split AS (
    SELECT n, string_split(line, ' ') AS f FROM lines
)"""
    + _QRELS_FIELDS
)
_QRELS_FACTS = """
SELECT
    (SELECT list(DISTINCT query_id ORDER BY query_id) FROM {table}),
    (SELECT count(*) FROM {table} WHERE grade > 0),
    (SELECT [query_id, min(doc_id)] FROM (
        SELECT query_id, doc_id FROM {table} GROUP BY query_id, doc_id HAVING count(*) > 1
     ) GROUP BY query_id ORDER BY query_id LIMIT 1),
    (SELECT bool_and(grade < 0) FROM {table}
     WHERE query_id = (SELECT min(query_id) FROM {table}))
"""


def read_qrels(duck, path: str, table: str = "te_qrels", encoding: str = TEXT) -> Qrels:
    """Read a qrels file like trec_eval into ``table`` on the DuckDB connection ``duck``.

    Exactly 4 fields, ``#`` comment quirk, atol grades. A line starting with ``#`` is skipped,
    but the line right after a skipped comment is always data (trec_eval's quirk). Unlike
    trec_eval, a comment on the last line is accepted. A file of ordinary lines is split
    by DuckDB; anything else (a malformed line, a grade that is not a plain integer, a NUL
    byte) is read line by line in Python, which names the problem. ``encoding``: the file's
    text is UTF-8 (:data:`TEXT`), or its bytes (:data:`BYTES`, when a file is not UTF-8).

    Raises:
        TrecEvalExit: unreadable or empty file, or a malformed line (exit 2).
        NotText: the file is not UTF-8 and ``encoding`` is :data:`TEXT`.
    """
    data = read_bytes(path, "qrels")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        raise NotText(path) from None
    exact = b"\x00" not in data
    if exact:
        if _plain_lines(data):
            duck.execute(_QRELS_PLAIN_SQL.format(table=table), {"text": text})
        else:
            binds = {"text": text, "blank": " \t\r\x0b\x0c"}
            duck.execute(_QRELS_SQL.format(table=table), binds)
        exact = not duck.execute(f"SELECT count(*) FROM {table} WHERE grade IS NULL").fetchone()[0]
    oversized = None
    if not exact:
        oversized = _read_qrels_in_python(duck, data, path, table, encoding)
    topics, positive, duplicate, all_negative = duck.execute(
        _QRELS_FACTS.format(table=table)
    ).fetchone()
    if not topics:
        raise quit_in("trec_eval.get_qrels: No judgments in qrels file\n", path)
    return Qrels(
        table,
        list(topics),
        int(positive),
        tuple(duplicate) if duplicate else None,
        bool(all_negative),
        oversized,
    )


def _plain_lines(data: bytes) -> bool:
    """Whether every line of ``data`` is free of comments and of whitespace other than single
    spaces between fields: then splitting on a space is trec_eval's split."""
    if data.startswith((b"#", b" ")) or data.endswith(b" "):
        return False
    return not any(
        odd in data for odd in (b"\n#", b"\t", b"\r", b"\x0b", b"\x0c", b"  ", b"\n ", b" \n")
    )


def _read_qrels_in_python(duck, data: bytes, path: str, table: str, encoding: str) -> str | None:
    """trec_eval's own reading, line by line, into ``table``; the first topic (byte order)
    with a grade past the 32-bit range, which trec_eval cannot evaluate (see
    :attr:`Qrels.oversized`), or None.

    A negative grade past the range is stored as -2**31 (any negative grade means the same);
    a positive one as -1: its topic is never evaluated, and what trec_eval computes before
    it must not build the topic's levels either.
    """
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    numbers: list[int] = []
    qids: list[str] = []
    docnos: list[str] = []
    rels: list[int] = []
    data_line = 0
    after_comment = False
    oversized: str | None = None
    for number, raw in enumerate(lines, start=1):
        if raw.startswith(b"#") and not after_comment:
            after_comment = True
            continue
        after_comment = False
        data_line += 1
        fields = FIELD_SPACE.split(raw.strip(b" \t\r\v\f"))
        if len(fields) != 4 or fields == [b""] * len(fields):
            raise quit_in(f"trec_eval.get_qrels: Malformed line {data_line}\n", path)
        numbers.append(number)
        qids.append(fields[0].decode(encoding))
        docnos.append(fields[2].decode(encoding))
        grade = atol(fields[3].decode("ascii", "replace"))
        if grade > INT32_MAX:
            oversized = qids[-1] if oversized is None else min(oversized, qids[-1])
            grade = -1
        rels.append(max(grade, INT32_MIN))
    duck.execute(
        f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT CAST(unnest($n) AS BIGINT) AS line, "
        "CAST(unnest($q) AS VARCHAR) AS query_id, CAST(unnest($d) AS VARCHAR) AS doc_id, "
        "CAST(unnest($r) AS INTEGER) AS grade",
        {"n": numbers, "q": qids, "d": docnos, "r": rels},
    )
    return oversized


# --- runs (spec 3) -------------------------------------------------------------------------


@dataclass
class Run:
    """A run read into the DuckDB table ``table`` (qid, docno, score) and its run tag."""

    table: str
    runid: str


def _cast_score(text: str) -> str:
    """SQL: the score DuckDB reads from ``text`` as C's ``atof`` does, else NULL (then
    :func:`rankhouse.measures.trec.atof` reads it). DuckDB also takes digit separators (``1_0``)
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
