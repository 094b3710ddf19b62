"""TREC text into the stage table, read by DuckDB: as fixed columns, else split in SQL.

A file whose lines are fields joined by one separator (its first line says which) is read by
DuckDB's CSV reader as fixed columns, in parallel and gzip-transparent. Any other file, or one
the fixed columns give up on (a :class:`~.regular.Fallback`), is read as one VARCHAR column per
line and split in SQL: lines separated by single spaces or by single tabs take a plain string
split, and only irregular lines pay for a regular expression. A file holding a byte order
mark, a carriage return or a ``\\x01`` byte, which DuckDB's CSV reader would take otherwise
than the reading rules, is read by the reference reader (:mod:`.exact`) instead.

The stage is filled outside any transaction: a statement DuckDB stops then aborts nothing, and
the next reader starts at once. Values are checked afterwards, by the same SQL whichever
reader split the lines (:func:`stage` returns the condition of a bad row).
"""

from __future__ import annotations

from collections.abc import Callable

from ...duck import duckdb
from ..checks import integer_sql, score_sql
from ..sources import Source
from ..staging import STAGE
from .exact import stage_exactly, starts_with_bom
from .regular import (
    Fallback,
    first_line_separator,
    fixed_columns,
    irregular_sql,
    only_separator,
)

_WHITESPACE = r"E' \t\r\x0b\x0c'"
_SPACE = "' '"
_OTHER_THAN_SPACE = (r"E'\t'", r"E'\r'", r"E'\x0b'", r"E'\x0c'")
_OTHER_THAN_TAB = ("' '", r"E'\r'", r"E'\x0b'", r"E'\x0c'")

# DuckDB's CSV reader stops at lines over 2 MB by default; a valid line may be longer, so the
# SQL split allows 1 GiB (the fixed columns keep 2 MB: see regular.FAST_MAX_LINE).
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
