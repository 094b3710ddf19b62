"""A qrels file read with trec_eval 10's rules (TREC_EVAL_SEMANTICS section 2).

Qrels have quirks (one comment line at a time, blank lines fatal): DuckDB splits a UTF-8 file
with trec_eval's rules (with a shorter statement when every line is plain: no comment, single
spaces), and a file it cannot take exactly is read line by line in Python, which names the
problem.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..measures.model import INT32_MAX, INT32_MIN
from .input_files import FIELD_SPACE, NotText, quit_in, read_bytes
from .options import TEXT, atol


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
