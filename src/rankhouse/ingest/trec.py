"""TREC text as ``rankhouse ingest`` reads it fast: qrels (``qid iter docid rel``) and runs
(``qid Q0 docid rank score tag``), by one set of rules (docs/ingest.md, "Reading rules").

The readers, by role, fastest first; each takes the files the one before gives up:

* :func:`insert_run_rows`, the direct reader: a run file of regular lines with one tag,
  straight into ``run_rows`` in one parallel pass, no stage (:mod:`.storing` stores it);
* :func:`stage`: DuckDB's CSV reader into the stage table: fixed columns when every line is
  fields joined by one separator, else each line split in SQL;
* the reference reader of :mod:`.trec_exact`, line by line in Python: it reads the files
  DuckDB's reader would take otherwise than the rules (a byte order mark, a carriage return, a
  ``\\x01`` byte), its rules define what every other reader must read, and after the bulk
  checks found a bad row it rescans the file to name the first bad line and field.

Regular text is lines of fields joined by one separator: a retrieval system writes its run as
lines of six fields joined by a single space (or a single tab). DuckDB's CSV reader takes such
a file as fixed columns, in parallel, several times faster than splitting each line in SQL.
Whether a file is regular is known only once it is read, so a fast reader tries, from what its
first line suggests, and says why it gave up with a :class:`Fallback`, never by an error's
text; the caller picks the next reader from it: after the direct reader stopped at a line, the
stage's fixed columns (a run of several tags reads well there); after a file showed whitespace
other than its separator, the SQL split.

The direct reader writes the common large input, a retrieval system's run, to ``run_rows`` by
the statement that reads it: no stage table, so a 7-million-line run is parsed and written at
once and held in memory only as DuckDB's write buffers. The statement stops at the first line
that is not six non-empty fields joined by the separator, carries another tag, or holds a score
(a rank under order 'rank') the checks refuse; the caller then rolls its transaction back and
the stage reads the file. ``trec-eval`` stores regular runs this way too
(:mod:`rankhouse.trec_eval.unstored`), whose general rules read such a file alike.

The stage is filled outside any transaction: a statement DuckDB stops then aborts nothing, and
the next reader starts at once. A file the fixed columns cannot take is read as one VARCHAR
column per line and split in SQL: lines separated by single spaces or by single tabs take a
plain string split, and only irregular lines pay for a regular expression. Values are checked
afterwards, by the same SQL whichever reader split the lines (:func:`stage` returns the
condition of a bad row); duplicates and ties are counted by :mod:`.staging`.
tests/ingest/test_ingest_paths_agree.py holds every reader to the same rows or the same error, word
for word.

``trec-eval`` reads with trec_eval's own rules instead (:mod:`rankhouse.trec_eval.files`),
and takes the direct reader for regular runs.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from ..duck import duckdb
from .files import open_decompressed
from .sources import Source
from .staging import STAGE, integer_sql, score_sql
from .trec_exact import BOM, stage_exactly, starts_with_bom

# DuckDB sizes its read buffers by the longest line it allows: a limit of 1 GiB doubles the
# time of a 7-million-line file and its memory, so the fixed-column readers keep DuckDB's 2 MB
# and a longer line makes them give up like any other irregular line (the SQL split allows
# 1 GiB).
FAST_MAX_LINE = 1 << 21


class Fallback(Enum):
    """Why a fast reader gave a file up to the next reader."""

    LINE_REFUSED = "DuckDB stopped at a line the reader does not take"
    """A line that is not fields joined by the separator (a field too many or too few, an
    empty field, a comment, a line over 2 MB, bytes that are not UTF-8) or, for the direct
    reader, a line of another tag or with a value it cannot read. DuckDB names the line in
    its error, which nothing reads: the next reader finds and names any problem itself."""

    OTHER_WHITESPACE = "the file holds whitespace other than its separator"
    """A tab in a file separated by spaces (or the reverse), a vertical tab or a form feed,
    seen by the pass that hashes the file: DuckDB would have kept it inside a field, so only
    the SQL split reads the file right."""


def first_line_separator(source: Source) -> str | None:
    """' ' or '\\t' when the first line looks like fields joined by that one character."""
    return _first_line(source)[0]


def run_shape(source: Source) -> tuple[str, str] | None:
    """(separator, tag) when the first line is six fields joined by one separator, else None.

    Such a file may take the direct reader (:func:`insert_run_rows`), which holds the whole file to
    that shape.
    """
    separator, first = _first_line(source)
    if separator is None:
        return None
    fields = first.split(separator.encode())
    if len(fields) != 6:
        return None
    try:
        return separator, fields[5].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _first_line(source: Source) -> tuple[str | None, bytes]:
    """(the separator of a regular first line or None, the first line)."""
    with open_decompressed(source.data_path, source.label) as stream:
        first = stream.readline(65536).rstrip(b"\n")
    return _separator_of(first), first


def _separator_of(first: bytes) -> str | None:
    if not first or first != first.strip() or first.startswith((b"#", BOM)):
        return None
    if b"\t" not in first and b"  " not in first and b"\r" not in first:
        return " "
    if b" " not in first and b"\t\t" not in first and b"\r" not in first:
        return "\t"
    return None


def only_separator(whitespace: Callable[[], frozenset[int]] | None, separator: str) -> bool:
    """True when the file holds no whitespace byte other than ``separator`` (and newlines);
    ``whitespace`` returns the odd bytes the hashing pass found."""
    if whitespace is None:
        return False
    try:
        return whitespace() <= {ord(separator)}
    except Exception:  # an unreadable stream: the general path reports it properly
        return False


def fixed_columns(count: int) -> tuple[list[str], str]:
    """(the names ``c1``..``c<count>``, the FROM clause reading a file as those text columns).

    The clause takes three parameters: the file, the separator and DuckDB's compression. An
    empty field is NULL, never '': the readers pass ``nullstr=''`` (a test of '' as well cost
    0.12 s of a 7-million-line run's 1.4 s).
    """
    names = [f"c{i}" for i in range(1, count + 1)]
    spec = "{" + ", ".join(f"'{name}': 'VARCHAR'" for name in names) + "}"
    reader = (
        f"read_csv(?, delim=?, columns={spec}, header=false, quote='', escape='', nullstr='', "
        f"auto_detect=false, max_line_size={FAST_MAX_LINE}, compression=?)"
    )
    return names, reader


def irregular_sql(names: list[str]) -> str:
    """SQL: whether a line read as the fields ``names`` is not a regular data line (a field
    empty, two separators in a row included, or a comment)."""
    return " OR ".join(f"{name} IS NULL" for name in names) + " OR starts_with(c1, '#')"


# --- the direct reader: a regular one-tag run into run_rows ---------------------------------------


def insert_run_rows(
    duck,
    source: Source,
    order: str,
    compression: str,
    separator: str,
    tag: str | None,
    run_id: int,
) -> int | Fallback:
    """Read the run file ``source`` into ``run_rows`` as run ``run_id``; the rows written, or
    why the file is not for this reader (:attr:`Fallback.LINE_REFUSED`: DuckDB has then
    aborted the transaction, which the caller rolls back).

    Every line must be six non-empty fields joined by ``separator`` with the tag ``tag`` (any
    tag when None) and a usable score (a rank under order 'rank'). Other whitespace inside a
    field is the caller's to rule out (:func:`only_separator`). Scores follow
    :mod:`rankhouse.ingest.staging`'s rules (so C's ``atof`` reads every accepted score alike:
    trec-eval's direct path relies on it).
    """
    names, reader = fixed_columns(6)
    rank = integer_sql("c4", spaced=False)
    score = score_sql("c5", spaced=False) if order == "score" else "-CAST(rank AS DOUBLE)"
    bad_value = "score IS NULL OR isnan(score)" if order == "score" else "rank IS NULL"
    other_tag = "c6 <> ?" if tag is not None else "false"
    tag_param = [tag] if tag is not None else []
    # error() stops the statement at the first such line; its words are for a person
    # reading DuckDB's message, the caller only learns that it stopped
    try:
        [(written,)] = duck.execute(
            f"""
            INSERT INTO run_rows
            SELECT ?, c1, c3, rank,
                   CASE WHEN irregular THEN error('rankhouse: irregular line')
                        WHEN {other_tag} THEN error('rankhouse: another tag')
                        WHEN {bad_value} THEN error('rankhouse: bad value')
                        ELSE score END
            FROM (
                SELECT c1, c3, c6, rank, {score} AS score, ({irregular_sql(names)}) AS irregular
                FROM (SELECT *, {rank} AS rank FROM {reader})
            )
            """,
            [run_id, *tag_param, str(source.data_path), separator, compression],
        ).fetchall()
    except duckdb.Error:
        return Fallback.LINE_REFUSED
    return int(written)


# --- the stage: fixed columns, else split in SQL --------------------------------------------------


_WHITESPACE = r"E' \t\r\x0b\x0c'"
_SPACE = "' '"
_OTHER_THAN_SPACE = (r"E'\t'", r"E'\r'", r"E'\x0b'", r"E'\x0c'")
_OTHER_THAN_TAB = ("' '", r"E'\r'", r"E'\x0b'", r"E'\x0c'")

# DuckDB's CSV reader stops at lines over 2 MB by default; a valid line may be longer, so the
# SQL split allows 1 GiB (the fixed columns keep 2 MB: see FAST_MAX_LINE).
MAX_LINE = 1 << 30
# One VARCHAR column per physical line, no quoting. \x01 is the column delimiter, so a file
# holding a \x01 byte (found by the hashing thread) is read by the exact reader instead.
_LINES = (
    "read_csv(?, columns={'line': 'VARCHAR'}, delim=E'\\x01', header=false, quote='', "
    f"escape='', auto_detect=false, strict_mode=false, max_line_size={MAX_LINE}, compression=?)"
)
# Bytes that send a file to the exact reader: DuckDB's CSV reader handles a CR followed by
# another byte after a CRLF inconsistently, and \x01 is the line reader's delimiter.
_EXACT_BYTES = frozenset(b"\r\x01")


def stage(
    duck,
    source: Source,
    kind: str,
    order: str,
    compression: str,
    *,
    fixed: bool = True,
    whitespace: Callable[[], frozenset[int]] | None = None,
) -> str:
    """Read ``source`` into the temporary stage table; returns the SQL condition of a bad row.

    Stage columns: qrels (query_id, doc_id, grade); runs (tag, query_id, doc_id, rank, score).
    ``fixed``: try the fixed columns when the first line is regular (False when a reader
    before found that they cannot take the file). ``whitespace`` returns the odd bytes the
    file holds (from the hashing thread): the fixed columns are only kept when the file holds
    no whitespace but its separator, the SQL split only when it holds none of the bytes that
    need the exact reader.

    Raises:
        duckdb.Error: DuckDB cannot read the file (the caller rescans it to name the line).
        Unreadable: the exact reader met bytes it cannot read.
    """
    bad = _bad_condition(kind, order)
    if starts_with_bom(source):
        stage_exactly(duck, source, _stage_columns(kind, order, lambda i: f"c{i}", "nf"))
        return bad
    separator = first_line_separator(source) if fixed else None
    if separator is not None:
        gave_up = _stage_fixed(duck, source, kind, order, compression, separator, whitespace)
        if gave_up is None:
            return bad
    columns = _stage_columns(kind, order, lambda i: f"f[{i}]", "len(f)")
    try:
        duck.execute(
            f"CREATE OR REPLACE TEMP TABLE {STAGE} AS SELECT {columns} FROM "
            f"(SELECT {_fields_expression()} AS f FROM {_LINES} WHERE line IS NOT NULL) "
            "WHERE f[1] <> '' AND NOT starts_with(f[1], '#')",
            [str(source.data_path), compression],
        )
    except duckdb.Error:
        # a lone CR after a CRLF can stop DuckDB's reader; the exact reader takes such files
        if whitespace is not None and not whitespace() & _EXACT_BYTES:
            raise
    if whitespace is None or whitespace() & _EXACT_BYTES:
        stage_exactly(duck, source, _stage_columns(kind, order, lambda i: f"c{i}", "nf"))
    return bad


def _stage_fixed(
    duck,
    source: Source,
    kind: str,
    order: str,
    compression: str,
    separator: str,
    whitespace: Callable[[], frozenset[int]] | None,
) -> Fallback | None:
    """Fill the stage from fixed columns split by ``separator``; None when it holds the file,
    else why the SQL split must read it."""
    names, reader = fixed_columns(4 if kind == "qrels" else 6)
    columns = _stage_columns(kind, order, lambda i: f"c{i}", str(len(names)))
    try:
        # error() stops the read at the first irregular line (its words are for a person)
        duck.execute(
            f"CREATE OR REPLACE TEMP TABLE {STAGE} AS SELECT {columns} FROM {reader} "
            f"WHERE CASE WHEN {irregular_sql(names)} THEN error('rankhouse: irregular line') "
            "ELSE true END",
            [str(source.data_path), separator, compression],
        )
    except duckdb.Error:  # outside a transaction: the failed statement aborted nothing
        return Fallback.LINE_REFUSED
    # another whitespace byte inside a field is ruled out from the bytes the hashing thread
    # saw, not by a per-row test here
    if not only_separator(whitespace, separator):
        return Fallback.OTHER_WHITESPACE
    return None


def _fields_expression() -> str:
    def clean(separator: str, others: tuple[str, ...]) -> str:
        absent = " AND ".join(f"NOT contains(line, {other})" for other in others)
        return f"{absent} AND NOT list_contains(string_split(line, {separator}), '')"

    return (
        f"CASE WHEN {clean(_SPACE, _OTHER_THAN_SPACE)} THEN string_split(line, ' ')"
        f" WHEN {clean(_OTHER_THAN_SPACE[0], _OTHER_THAN_TAB)} "
        f"THEN string_split(line, {_OTHER_THAN_SPACE[0]})"
        f" ELSE string_split_regex(trim(line, {_WHITESPACE}), '[ \\t\\r\\x0b\\x0c]+') END"
    )


def _stage_columns(kind: str, order: str, field, count: str) -> str:
    """Stage columns; ``field(i)`` is the SQL of the i-th field, ``count`` of the field count.

    Under order 'rank' a line of five fields is ``qid Q0 docid rank tag`` (no score).
    """
    # a TREC field holds no space or tab: they delimit fields in every reader
    rank = integer_sql(field(4), spaced=False)
    if kind == "qrels":
        return f"{field(1)} AS query_id, {field(3)} AS doc_id, {rank} AS grade, {count} AS nf"
    if order == "score":
        score, tag = score_sql(field(5), spaced=False), field(6)
    else:
        score = f"-CAST({rank} AS DOUBLE)"
        tag = f"CASE WHEN {count} = 5 THEN {field(5)} ELSE {field(6)} END"
    return (
        f"{tag} AS tag, {field(1)} AS query_id, {field(3)} AS doc_id, {rank} AS rank, "
        f"{score} AS score, {count} AS nf"
    )


def _bad_condition(kind: str, order: str) -> str:
    if kind == "qrels":
        return "nf <> 4 OR grade IS NULL"
    if order == "score":
        return "nf < 6 OR score IS NULL OR isnan(score)"
    return "nf < 5 OR rank IS NULL"
