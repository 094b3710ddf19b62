"""TREC text: qrels (``qid iter docid rel``) and runs (``qid Q0 docid rank score tag``).

The fast path hands the file to DuckDB's CSV reader as one VARCHAR column per line (read in
parallel, gzip-transparent) and splits fields in SQL. Lines separated by single spaces or by
single tabs take a plain string split; only irregular lines pay for a regular expression.
When the bulk checks find a problem, :func:`locate_problem` rescans the file in Python to name
the first bad physical line and field.
"""

from __future__ import annotations

from collections.abc import Callable

from ..duck import duckdb
from ..errors import Either, InputError, Message, Option
from .checks import integer_problem, integer_sql, score_problem, score_sql
from .files import open_decompressed
from .sources import Source
from .staging import STAGE
from .trec_lines import BOM, numbered_fields, stage_exactly, starts_with_bom

_WHITESPACE = r"E' \t\r\x0b\x0c'"
_SPACE = "' '"
_OTHER_THAN_SPACE = (r"E'\t'", r"E'\r'", r"E'\x0b'", r"E'\x0c'")
_OTHER_THAN_TAB = ("' '", r"E'\r'", r"E'\x0b'", r"E'\x0c'")

# DuckDB's CSV reader stops at lines over 2 MB by default; a valid line may be longer, so the
# general reader allows 1 GiB. The fixed-column fast paths keep 2 MB: DuckDB sizes its read
# buffers by this limit (1 GiB doubles the time of a 7-million-line file and its memory), and
# a longer line makes them fail over to the general reader like any other irregular line.
MAX_LINE = 1 << 30
FAST_MAX_LINE = 1 << 21
# One VARCHAR column per physical line, no quoting. \x01 is the column delimiter, so a file
# holding a \x01 byte (found by the hashing thread) is read by trec_lines instead.
_LINES = (
    "read_csv(?, columns={'line': 'VARCHAR'}, delim=E'\\x01', header=false, quote='', "
    f"escape='', auto_detect=false, strict_mode=false, max_line_size={MAX_LINE}, compression=?)"
)
# Bytes that send a file to the exact reader: DuckDB's CSV reader handles a CR followed by
# another byte after a CRLF inconsistently, and \x01 is the line reader's delimiter.
_EXACT_BYTES = frozenset(b"\r\x01")


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


class FastPathFailed(Exception):
    """The fixed-column reader raised: retry the ingest with the general reader."""


def stage(
    duck,
    source: Source,
    kind: str,
    order: str,
    compression: str,
    *,
    fast: bool = True,
    whitespace: Callable[[], frozenset[int]] | None = None,
) -> str:
    """Read ``source`` into the temporary stage table; returns the SQL condition of a bad row.

    Stage columns: qrels (query_id, doc_id, grade); runs (tag, query_id, doc_id, rank, score).
    Files whose every line is fields joined by one space (or one tab) are read by DuckDB's CSV
    reader as fixed columns; other files are split in SQL, and files holding a CR, a \x01 or
    a byte order mark are read line by line by :mod:`.trec_lines`. ``whitespace`` returns the
    odd bytes the file holds (from the hashing thread): a fixed-column read is only kept when
    the file holds no whitespace but its separator, an SQL split only when it holds none of
    the bytes that need the exact reader.
    """
    bad = _bad_condition(kind, order)
    if starts_with_bom(source):
        stage_exactly(duck, source, _stage_columns(kind, order, lambda i: f"c{i}", "nf"))
        return bad
    separator = _regular_separator(source) if fast else None
    if separator is not None:
        try:
            if _stage_regular(duck, source, kind, order, compression, separator) and (
                only_separator(whitespace, separator)
            ):
                return bad
        except duckdb.Error as exc:
            # e.g. a line with more fields; DuckDB has aborted the transaction, so the
            # caller starts again with fast=False
            raise FastPathFailed(str(exc)) from exc
    columns = _stage_columns(kind, order, lambda i: f"f[{i}]", "len(f)")
    duck.execute(
        f"CREATE OR REPLACE TEMP TABLE {STAGE} AS SELECT {columns} FROM "
        f"(SELECT {_fields_expression()} AS f FROM {_LINES} WHERE line IS NOT NULL) "
        "WHERE f[1] <> '' AND NOT starts_with(f[1], '#')",
        [str(source.data_path), compression],
    )
    if whitespace is None or whitespace() & _EXACT_BYTES:
        stage_exactly(duck, source, _stage_columns(kind, order, lambda i: f"c{i}", "nf"))
    return bad


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


def _regular_separator(source: Source) -> str | None:
    """' ' or '\\t' when the first line looks like fields joined by that one character."""
    return _first_line(source)[0]


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


def direct_run_tag(source: Source) -> tuple[str, str] | None:
    """(separator, tag) when the first line is six fields joined by one separator, else None.

    Such a file can take :func:`insert_run_rows`, which holds the whole file to that shape.
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


def insert_run_rows(
    duck,
    source: Source,
    order: str,
    compression: str,
    separator: str,
    tag: str | None,
    run_id: int,
) -> None:
    """Read a run file straight into ``run_rows`` (no stage), in one parallel pass.

    Every line must be six non-empty fields joined by ``separator`` with the tag ``tag`` (any
    tag when None) and a usable score (a rank under order 'rank'); the first line that is not
    raises duckdb.Error and aborts the transaction, and the caller falls back to a reader that
    names the problem. Other whitespace inside a field is the caller's to rule out (see
    :func:`only_separator`). Scores follow :mod:`.checks` (so C's ``atof`` reads every
    accepted score alike: trec-eval's direct path relies on it).
    """
    names = [f"c{i}" for i in range(1, 7)]
    spec = "{" + ", ".join(f"'{name}': 'VARCHAR'" for name in names) + "}"
    irregular = _irregular_sql(names)
    rank = integer_sql("c4", spaced=False)
    score = score_sql("c5", spaced=False) if order == "score" else "-CAST(rank AS DOUBLE)"
    bad_value = "score IS NULL OR isnan(score)" if order == "score" else "rank IS NULL"
    other_tag = "c6 <> ?" if tag is not None else "false"
    tag_param = [tag] if tag is not None else []
    duck.execute(
        f"""
        INSERT INTO run_rows
        SELECT ?, c1, c3, rank,
               CASE WHEN irregular THEN error('rankhouse: irregular line')
                    WHEN {other_tag} THEN error('{SEVERAL_TAGS}')
                    WHEN {bad_value} THEN error('rankhouse: bad value')
                    ELSE score END
        FROM (
            SELECT c1, c3, c6, rank, {score} AS score, ({irregular}) AS irregular
            FROM (
                SELECT *, {rank} AS rank
                FROM read_csv(?, delim=?, columns={spec}, header=false, quote='', escape='',
                              nullstr='', auto_detect=false, max_line_size={FAST_MAX_LINE},
                              compression=?)
            )
        )
        """,
        [run_id, *tag_param, str(source.data_path), separator, compression],
    )


def _irregular_sql(names: list[str]) -> str:
    """SQL: whether a line read as the fields ``names`` is not a regular data line (a field
    empty, two separators in a row included, or a comment). An empty field is NULL, never
    '': the readers pass ``nullstr=''`` (a test of '' as well cost 0.12 s of a 7-million-line
    run's 1.4 s)."""
    return " OR ".join(f"{name} IS NULL" for name in names) + " OR starts_with(c1, '#')"


#: The error :func:`insert_run_rows` raises for a file with more than one run tag.
SEVERAL_TAGS = "rankhouse: several tags"


def _stage_regular(duck, source: Source, kind: str, order: str, compression: str, sep: str):
    """Fast path: fixed columns split by ``sep``. False (stage unusable) if a line is irregular."""
    count = 4 if kind == "qrels" else 6
    names = [f"c{i}" for i in range(1, count + 1)]
    spec = "{" + ", ".join(f"'{name}': 'VARCHAR'" for name in names) + "}"
    columns = _stage_columns(kind, order, lambda i: f"c{i}", str(count))
    # Other whitespace inside a field (a tab in a space-separated file) is ruled out by
    # _only_separator, from the bytes the hashing thread saw, not by a per-row test here.
    irregular = _irregular_sql(names)
    duck.execute(
        f"CREATE OR REPLACE TEMP TABLE {STAGE} AS SELECT {columns}, "
        f"({irregular}) AS irregular FROM read_csv(?, delim=?, "
        f"columns={spec}, header=false, quote='', escape='', nullstr='', auto_detect=false, "
        f"max_line_size={FAST_MAX_LINE}, compression=?)",
        [str(source.data_path), sep, compression],
    )
    if duck.execute(f"SELECT count(*) FROM {STAGE} WHERE irregular").fetchone()[0]:
        return False
    duck.execute(f"ALTER TABLE {STAGE} DROP COLUMN irregular")
    return True


def only_separator(whitespace: Callable[[], frozenset[int]] | None, separator: str) -> bool:
    """True when the file holds no whitespace byte other than ``separator`` (and newlines)."""
    if whitespace is None:
        return False
    try:
        return whitespace() <= {ord(separator)}
    except Exception:  # an unreadable stream: the general path reports it properly
        return False


def locate_problem(source: Source, kind: str, order: str) -> InputError | None:
    """The first bad line of ``source`` as an InputError (None if the rescan finds none)."""
    any_line = False
    for number, fields in numbered_fields(source):
        any_line = True
        problem = _line_problem(source, kind, order, number, fields)
        if problem is not None:
            return problem
    if not any_line:
        return empty_error(source)
    return None


def empty_error(source: Source) -> InputError:
    return InputError(
        "no data lines: the file is empty or holds only comments and blank lines",
        source=source.label,
    )


def _line_problem(
    source: Source, kind: str, order: str, number: int, fields: list[str]
) -> InputError | None:
    where = {"source": source.label, "line": number}
    if kind == "qrels":
        if len(fields) != 4:
            hint = "a qrels line is 'qid iter docid rel'"
            if len(fields) >= 6:
                hint += "; this looks like a run line: use 'rankhouse ingest run'"
            return InputError(f"expected 4 fields, found {len(fields)}", **where, hint=hint)
        problem = integer_problem(fields[3])
        if problem:
            return InputError(
                f"grade {problem}",
                **where,
                field="rel",
                hint="the 4th field of a qrels line must be an integer grade such as 0, 1, 2 or -1",
            )
        return None
    least = 5 if order == "rank" else 6
    if len(fields) < least:
        hint = "a run line is 'qid Q0 docid rank score tag'"
        if order == "rank":
            hint = Message(
                hint, " (or 'qid Q0 docid rank tag' under ", Option("order", "rank"), ")"
            )
        if len(fields) == 4:
            hint = Message(
                hint,
                "; this looks like a qrels line: ",
                Either("ingest it with Warehouse.ingest_qrels", "use 'rankhouse ingest qrels'"),
            )
        elif len(fields) == 5:
            hint = Message(hint, "; a line without a score needs ", Option("order", "rank"))
        return InputError(
            f"expected at least {least} fields, found {len(fields)}", **where, hint=hint
        )
    if order == "rank":
        problem = integer_problem(fields[3])
        if problem:
            return InputError(
                f"rank {problem}",
                **where,
                field="rank",
                hint=Message(
                    "with ", Option("order", "rank"), " the 4th field must be an integer rank"
                ),
            )
        return None
    problem = score_problem(fields[4])
    if problem:
        return InputError(
            f"score {problem}",
            **where,
            field="score",
            hint=Message(
                "the 5th field of a run line must be a number; for ranks only use ",
                Option("order", "rank"),
            ),
        )
    return None


def locate_duplicate(
    source: Source, kind: str, key: tuple[str, ...], order: str = "score"
) -> InputError:
    """The error for a duplicated (query, doc) pair, naming the two lines where it occurs."""
    *tag, query_id, doc_id = key
    lines = []
    for number, fields in numbered_fields(source):
        if len(fields) < 3 or fields[0] != query_id or fields[2] != doc_id:
            continue
        if tag and _tag_of(fields, order) != tag[0]:
            continue
        lines.append(number)
        if len(lines) == 2:
            break
    return duplicate_error(source.label, kind, key, lines, unit="line")


def _tag_of(fields: list[str], order: str) -> str | None:
    if order == "rank" and len(fields) == 5:
        return fields[4]
    return fields[5] if len(fields) >= 6 else None


def duplicate_error(
    label: str, kind: str, key: tuple[str, ...], places: list[int], *, unit: str
) -> InputError:
    """Error for a (query, doc) pair seen twice; ``places`` are its first two lines or rows."""
    *tag, query_id, doc_id = key
    what = f"document {doc_id!r} appears twice for query {query_id!r}"
    if tag:
        what += f" of run {tag[0]!r}"
    hint = "keep one line per query and document"
    if kind == "run":
        hint += " (trec_eval stops with 'duplicate docs')"
    if len(places) < 2:
        return InputError(what, source=label, field="docid", hint=hint)
    first, second = places
    if unit == "line":
        return InputError(
            f"{what}, first at line {first}", source=label, line=second, field="docid", hint=hint
        )
    return InputError(
        f"{what}: {unit}s {first} and {second}", source=label, field="docid", hint=hint
    )
