"""The stage, and the rules every row an ingest reads is held to: values, repeats, rank order.

The stage is a temporary table holding one parsed source, checked in bulk before it is stored.
Every reader (TREC text, tabular files, DataFrames) fills the same stage columns: qrels
(query_id, doc_id, grade), runs (tag, query_id, doc_id, rank, score). The checks are DuckDB SQL
because they run on the fast path, over millions of rows at once; only when SQL reports a
problem does a Python rescan walk the source to name the first bad line and field (and every
rescan words a repeated query and document alike: :func:`duplicate_error`).

Both sides take their value rules from here: the patterns below are used verbatim by Python's
``re`` and by DuckDB's ``regexp_full_match`` (RE2), so a spelling passes both or neither.
Scores: ASCII decimal ``[+-]?(D+(.D*)?|.D+)([eE][+-]?D+)?`` or ``inf``/``infinity`` (any
case, optional sign); the value is the nearest double (``1e999`` is infinity). NaN, digit
separators (``1_000``), hexadecimal and non-ASCII digits are errors.
Grades and ranks: ASCII ``[+-]?D+`` optionally followed by ``.`` and zeros (``1.0``, what
pandas writes, is 1; ``1.5`` is an error), within the 32-bit range. Spaces and tabs around a
value are ignored (they only occur in tabular text; they separate TREC fields).

A run may not list a document twice for a query (trec_eval stops with 'duplicate docs'), and
an ingest records how many of its documents tie on score with another of the same query. Both
are counts of rows whose 64-bit hash equals an earlier row's: of (query, document) for a
repeat, of (query, score) for a tie. Two ways count them, chosen by size, and give the same
counts (tests/ingest/test_repeat_counting.py moves the threshold to run each input through both):
DuckDB counts distinct hashes of small inputs; from :data:`NUMPY_FROM` rows a numpy sort of the
hashes does it, query by query when each query's rows are consecutive (as a retrieval system
writes them), which is several times cheaper than a hash aggregate over millions of distinct
keys. A repeated hash is confirmed on the strings before a duplicate is reported (two documents
whose hashes collide are no duplicate); a collision of (query, score) hashes could only add one
to a count of tied pairs.

trec_eval orders a topic's documents by score (then document id) and ignores the rank column;
so does ``order='score'``. A run whose ranks say otherwise (re-scored, or ranks written by
another stage) is then evaluated in an order its author may not expect, so a new run is checked
once, after its ingest, and a :class:`~rankhouse.errors.RankhouseWarning` names the first
disagreement found and the way to rank by the given ranks instead
(:func:`warn_if_ranks_disagree`).
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol

from ..backends.base import Connection
from ..errors import InputError, Message, Option, RankhouseWarning
from ..lazy import numpy as np

STAGE = "_rankhouse_stage"


@dataclass(frozen=True)
class StageSummary:
    """What one tag (or the whole qrels set) of the stage holds."""

    tag: str | None
    num_queries: int
    num_rows: int
    tied_pairs: int | None = None
    """Documents whose score equals an earlier one of the same query (runs only)."""


def count_bad_rows(duck, bad_condition: str) -> tuple[int, int]:
    """(rows in the stage, rows matching ``bad_condition``)."""
    total, bad = duck.execute(
        f"SELECT count(*), count(*) FILTER (WHERE {bad_condition}) FROM {STAGE}"
    ).fetchone()
    return int(total), int(bad)


def find_duplicate(duck, kind: str) -> tuple[str, ...] | None:
    """One (tag,) query_id, doc_id key that occurs twice in the stage, or None.

    Grouping by one 64-bit hash of the key is much cheaper than by three strings; a hash seen
    twice is then confirmed on the strings (a collision is not a duplicate).
    """
    key = "query_id, doc_id" if kind == "qrels" else "tag, query_id, doc_id"
    twice = f"SELECT h FROM (SELECT hash({key}) AS h FROM {STAGE}) GROUP BY h HAVING count(*) > 1"
    if duck.execute(f"SELECT count(*) FROM ({twice})").fetchone()[0] == 0:
        return None
    row = duck.execute(
        f"SELECT {key} FROM {STAGE} WHERE hash({key}) IN ({twice}) "
        f"GROUP BY {key} HAVING count(*) > 1 ORDER BY {key} LIMIT 1"
    ).fetchone()
    return None if row is None else tuple(row)


def summarize(duck, kind: str) -> list[StageSummary]:
    """Per tag (one entry for qrels): number of queries and rows, tags in byte order."""
    if kind == "qrels":
        queries, rows = duck.execute(
            f"SELECT count(DISTINCT query_id), count(*) FROM {STAGE}"
        ).fetchone()
        return [StageSummary(None, int(queries), int(rows))]
    # Distinct (query, score) pairs are counted by their 64-bit hash: a collision could only
    # add one to the number of ties, and costs far less than comparing two columns.
    found = duck.execute(
        f"SELECT tag, count(DISTINCT query_id), count(*), {repeats_sql(TIE_HASH)} "
        f"FROM {STAGE} GROUP BY tag ORDER BY tag"
    ).fetchall()
    return [
        StageSummary(tag, int(queries), int(rows), int(ties)) for tag, queries, rows, ties in found
    ]


def qrels_statistics(duck) -> dict[str, int | None]:
    """num_relevant (grade >= 1), min_grade and max_grade of the staged judgments."""
    relevant, low, high = duck.execute(
        f"SELECT count(*) FILTER (WHERE grade >= 1), min(grade), max(grade) FROM {STAGE}"
    ).fetchone()
    return {"num_relevant": int(relevant), "min_grade": low, "max_grade": high}


def drop(duck) -> None:
    duck.execute(f"DROP TABLE IF EXISTS {STAGE}")


def copy_judgments(duck, qrels_id: int) -> None:
    """Move the staged judgments into ``judgments``."""
    duck.execute(
        f"INSERT INTO judgments SELECT ?, query_id, doc_id, grade FROM {STAGE}", [qrels_id]
    )


def copy_run_rows(duck, run_ids: dict[str, int]) -> None:
    """Move the staged rows of the given tags into ``run_rows`` (evaluations rank them)."""
    for tag, run_id in run_ids.items():
        duck.execute(
            f"INSERT INTO run_rows SELECT ?, query_id, doc_id, rank, score FROM {STAGE} "
            "WHERE tag = ?",
            [run_id, tag],
        )


# --- the value rules, alike in SQL and in Python --------------------------------------------------


SCORE_PATTERN = (
    r"[+-]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[iI][nN][fF]([iI][nN][iI][tT][yY])?)"
)
INTEGER_PATTERN = r"[+-]?[0-9]+(\.0*)?"
_SCORE = re.compile(SCORE_PATTERN)
_INTEGER = re.compile(INTEGER_PATTERN)
_INT32 = (-(2**31), 2**31 - 1)
_AROUND = " \t"


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def id_problem(value: object) -> str | None:
    """Why ``value`` cannot be a query or document id (None when it can)."""
    if _is_missing(value) or str(value) == "":
        return "is empty"
    return None


def score_problem(value: object) -> str | None:
    """Why ``value`` is not a score (see the module's rules); None when it is one."""
    if _is_missing(value):
        return "is missing"
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return "is NaN" if math.isnan(float(value)) else None
    text = str(value).strip(_AROUND)
    if text.lower().lstrip("+-") == "nan":
        return f"{text!r} is NaN"
    if not _SCORE.fullmatch(text):
        return f"{text!r} is not a number"
    return None


def integer_of(text: str) -> int:
    """The integer a text that :func:`integer_problem` accepts stands for (``' 1.0'`` is 1)."""
    return int(text.strip(_AROUND).partition(".")[0])


def integer_problem(value: object) -> str | None:
    """Why ``value`` is not a grade or rank (see the module's rules); None when it is one."""
    if _is_missing(value):
        return "is missing"
    if isinstance(value, float):
        if not value.is_integer():
            return f"{value!r} is not an integer"
        value = int(value)
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip(_AROUND)
        if not _INTEGER.fullmatch(text):
            return f"{text!r} is not an integer"
        number = integer_of(text)
    if not _INT32[0] <= number <= _INT32[1]:
        return f"{number} is out of the 32-bit integer range"
    return None


def _sql_text(expression: str) -> str:
    return f"trim({expression}, E' \\t')"


def score_sql(expression: str, *, spaced: bool = True) -> str:
    """SQL: the DOUBLE of the text ``expression`` under the score rule, else NULL.

    ``spaced=False`` when the text cannot hold a space or tab (a TREC field, which they
    delimit): the trim, which costs more than the pattern on millions of rows, is left out.
    """
    text = _sql_text(expression) if spaced else expression
    return (
        f"CASE WHEN regexp_full_match({text}, '{SCORE_PATTERN}') "
        f"THEN TRY_CAST({text} AS DOUBLE) END"
    )


def integer_sql(expression: str, *, spaced: bool = True) -> str:
    """SQL: the INTEGER of the text ``expression`` under the grade/rank rule, else NULL.

    The pattern (TRY_CAST alone takes '1.6' as 2 and '0x10' as 16) only runs for text that
    is not already an integer written the usual way, which is nearly every rank of a file.
    ``spaced`` as for :func:`score_sql`.
    """
    cast = f"TRY_CAST({expression} AS INTEGER)"
    text = _sql_text(expression) if spaced else expression
    return (
        f"CASE WHEN CAST({cast} AS VARCHAR) = {expression} THEN {cast} "
        f"WHEN regexp_full_match({text}, '{INTEGER_PATTERN}') THEN TRY_CAST({text} AS INTEGER) END"
    )


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


# --- repeated documents and tied scores, counted by hashes ----------------------------------------


#: The 64-bit hash of a run row's (query, document) pair: two rows with the same one are the
#: same document listed twice for a query (checked on the strings before it is reported).
PAIR_HASH = "hash(query_id, doc_id)"
#: The 64-bit hash of a run row's (query, score): rows with the same one tie (a collision
#: could only add one to the count of tied pairs).
TIE_HASH = "hash(query_id, score)"

#: From this many rows a numpy sort of the hashes counts repeats; below it DuckDB counts them
#: (no numpy import: small inputs start faster).
NUMPY_FROM = 1_000_000
#: From this size a run file may hold NUMPY_FROM lines (a TREC run line is at least 13 bytes):
#: a reader imports numpy while DuckDB reads it (the import takes 50 ms).
NUMPY_FILE_BYTES = 13 * NUMPY_FROM
#: Values of the padded tables :func:`count_repeats_in_segments` sorts at once (8 MB each).
SEGMENT_BLOCK = 1 << 20


def repeats_sql(key: str) -> str:
    """The SQL aggregate that counts the rows whose ``key`` (:data:`PAIR_HASH`,
    :data:`TIE_HASH`) equals an earlier row's."""
    return f"count(*) - count(DISTINCT {key})"


def may_hold_numpy_rows(path: Path | str) -> bool:
    """Whether the run file ``path`` is large enough to hold :data:`NUMPY_FROM` lines, so
    that its reader imports numpy while DuckDB reads it (False for a file that cannot be
    read: its reader reports that)."""
    try:
        return os.path.getsize(path) >= NUMPY_FILE_BYTES
    except OSError:
        return False


class RunRepeats(NamedTuple):
    """What a stored run's rows repeat: see :func:`run_repeats`."""

    num_queries: int
    repeated_documents: int
    """Rows whose (query, document) hash equals an earlier row's (0: no duplicate)."""
    tied_pairs: int
    """Rows whose score equals an earlier one of the same query."""


def run_repeats(duck, run_id: int, num_rows: int) -> RunRepeats:
    """The queries, repeated documents and tied pairs of ``run_rows``' run ``run_id`` (of
    ``num_rows`` rows).

    A small run is counted by DuckDB. A large one in numpy: query by query when each query's
    rows are consecutive (:func:`counted_by_query`), else over sorted hashes of the whole run.
    """
    if num_rows < NUMPY_FROM:  # DuckDB counts the repeated hashes itself
        repeated, tied_pairs, num_queries = duck.execute(
            f"SELECT {repeats_sql(PAIR_HASH)}, {repeats_sql(TIE_HASH)}, "
            "count(DISTINCT query_id) FROM run_rows WHERE run_id = ?",
            [run_id],
        ).fetchone()
        return RunRepeats(int(num_queries), int(repeated), int(tied_pairs))
    num_queries, counted = counted_by_query(duck, run_id, "hash(doc_id), score")
    if counted is not None:
        return RunRepeats(num_queries, counted[0], counted[1])
    # sorting hashes in numpy beats a hash aggregate over millions of keys
    hashes = duck.execute(
        f"SELECT {PAIR_HASH} AS pair, {TIE_HASH} AS tie FROM run_rows WHERE run_id = ?",
        [run_id],
    ).fetchnumpy()
    repeated, tied_pairs = count_repeats_each(hashes.pop("pair"), hashes.pop("tie"))
    return RunRepeats(num_queries, repeated, tied_pairs)


def first_duplicate(duck, run_id: int) -> tuple[str, str] | None:
    """The first (query, document) pair, in byte order, that ``run_rows``' run ``run_id``
    holds twice, compared as strings; None when repeated hashes were a collision."""
    found = duck.execute(
        "SELECT query_id, doc_id FROM run_rows WHERE run_id = ? GROUP BY query_id, doc_id "
        "HAVING count(*) > 1 ORDER BY query_id, doc_id LIMIT 1",
        [run_id],
    ).fetchone()
    return None if found is None else (found[0], found[1])


def count_repeated(duck, query: str, params: dict | list | None, rows: int) -> int:
    """How many of the 64-bit hashes that ``query`` selects (one column) equal an earlier one.

    ``rows`` is how many it selects: DuckDB counts distinct hashes for small inputs, a numpy
    sort does it for large ones (both give the same count).
    """
    if rows < NUMPY_FROM:
        counted = f"SELECT count(*) - count(DISTINCT h) FROM ({query}) AS hashes(h)"
        return int(duck.execute(counted, params or {}).fetchone()[0])
    found = duck.execute(query, params or {}).fetchnumpy()
    return count_repeats(next(iter(found.values())))


def count_repeated_documents(duck, run_id: int, rows: int) -> int:
    """How many rows of ``run_rows``' run ``run_id`` (``rows`` of them) repeat the 64-bit hash
    of an earlier row's (query, document): query by query when the run is large and its
    queries are consecutive (:func:`counted_by_query`), else over the whole run
    (:func:`count_repeated`)."""
    if rows >= NUMPY_FROM:
        _, counted = counted_by_query(duck, run_id, "hash(doc_id)")
        if counted is not None:
            return counted[0]
    pairs = f"SELECT {PAIR_HASH} FROM run_rows WHERE run_id = $run_id"
    return count_repeated(duck, pairs, {"run_id": run_id}, rows)


def count_repeats_each(*columns: np.ndarray) -> list[int]:
    """:func:`count_repeats` of each column, each sorted on a thread of its own (numpy lets go
    of the GIL while it sorts: two columns of 7 million hashes take 0.47 s on two cores, one
    0.43 s)."""
    from concurrent.futures import ThreadPoolExecutor  # with logging, 17 ms: large runs only

    with ThreadPoolExecutor(max(len(columns), 1)) as pool:
        return list(pool.map(count_repeats, columns))


def count_repeats(values: np.ndarray) -> int:
    """How many of ``values`` (row hashes) equal an earlier one; sorts ``values`` in place.

    Sorting 64-bit hashes in numpy finds repeated keys several times faster than a hash
    aggregate over millions of distinct keys in SQL.
    """
    values.sort()
    return int((values[1:] == values[:-1]).sum())


def query_lengths(duck, run_id: int) -> tuple[np.ndarray, bool]:
    """(the number of rows of each query of ``run_rows``' run ``run_id``, in the order of the
    queries' first rows; whether each query's rows are consecutive, one query after another).

    Each query's row ids must span exactly its rows and the spans follow one another. A scan
    of the run then returns its rows query by query, in that order: DuckDB keeps a table's
    insertion order in results (its ``preserve_insertion_order``, which rankhouse leaves on).
    """
    queries = duck.execute(
        "SELECT min(rowid) AS first, count(*) AS rows, "
        "max(rowid) - min(rowid) + 1 = count(*) AS spanned "
        "FROM run_rows WHERE run_id = ? GROUP BY query_id ORDER BY first",
        [run_id],
    ).fetchnumpy()
    lengths, first = queries["rows"], queries["first"]
    consecutive = bool(queries["spanned"].all()) and np.array_equal(
        first[1:], first[:-1] + lengths[:-1]
    )
    return lengths, consecutive


def counted_by_query(duck, run_id: int, columns: str) -> tuple[int, list[int] | None]:
    """(the number of queries of ``run_rows``' run ``run_id``, how many values of each of the
    ``columns`` it selects repeat an earlier value of the same query), or None for the counts
    when the run's queries are not consecutive or too uneven (:func:`query_lengths`,
    :func:`count_repeats_in_segments`)."""
    lengths, consecutive = query_lengths(duck, run_id)
    if not consecutive:
        return len(lengths), None
    found = duck.execute(f"SELECT {columns} FROM run_rows WHERE run_id = ?", [run_id]).fetchnumpy()
    return len(lengths), count_repeats_in_segments(lengths, [found.pop(n) for n in list(found)])


def count_repeats_in_segments(lengths: np.ndarray, columns: list[np.ndarray]) -> list[int] | None:
    """How many values of each column equal an earlier value of the same segment, where the
    columns are segments of ``lengths`` values one after the other (a run's queries); None
    when the segments are too uneven to lay out as a table (more than twice the values).

    Each column is sorted as a table with a row per segment: numpy sorts a thousand values at
    a time several times faster than millions at once (two columns of 7 million: 0.11 s
    against 0.47 s). Segments of one length are the column itself, reshaped and sorted in
    place. Others are copied, a block of rows at a time (at most :data:`SEGMENT_BLOCK`
    values, or one row), into a table padded with a value that sorts last (uint64's largest,
    or infinity); only pairs among a row's first ``length`` values, the segment's own, are
    counted. The references in ``columns`` are dropped as they are taken.
    """
    from concurrent.futures import ThreadPoolExecutor  # with logging, 17 ms: large runs only

    total = int(lengths.sum())
    width = int(lengths.max()) if len(lengths) else 0
    if width == 0 or len(lengths) * width > 2 * total:
        return None
    even = bool((lengths == width).all())
    block_rows = max(1, SEGMENT_BLOCK // width)
    ends = np.cumsum(lengths)

    def repeats_in_rows(rows: np.ndarray, row_lengths: np.ndarray | None) -> int:
        rows.sort(axis=1)
        equal = rows[:, 1:] == rows[:, :-1]
        if row_lengths is not None:  # pairs among each row's own values
            equal &= np.arange(width - 1) < (row_lengths - 1)[:, None]
        return int(np.count_nonzero(equal))

    def count(index: int) -> int:
        column, columns[index] = columns[index], None
        if even:
            return repeats_in_rows(column.reshape(len(lengths), width), None)
        last = np.inf if column.dtype.kind == "f" else np.iinfo(column.dtype).max
        repeats = 0
        for first in range(0, len(lengths), block_rows):
            row_lengths = lengths[first : first + block_rows]
            start = int(ends[first] - row_lengths[0])
            rows = np.full((len(row_lengths), width), last, dtype=column.dtype)
            rows[np.arange(width) < row_lengths[:, None]] = column[
                start : start + row_lengths.sum()
            ]
            repeats += repeats_in_rows(rows, row_lengths)
        return repeats

    with ThreadPoolExecutor(max(len(columns), 1)) as pool:
        return list(pool.map(count, range(len(columns))))


# --- ranks that disagree with scores --------------------------------------------------------------


SAMPLE_ROWS = 50_000
"""Rows of a run checked (any subset proves a disagreement; this keeps big runs cheap)."""

_FIRST_DISAGREEMENT = f"""
    SELECT query_id, prev_doc, prev_rank, prev_score, doc_id, rank, score
    FROM (
        SELECT query_id, doc_id, rank, score,
               lag(doc_id) OVER w AS prev_doc, lag(rank) OVER w AS prev_rank,
               lag(score) OVER w AS prev_score
        FROM (
            SELECT query_id, doc_id, rank, score FROM run_rows
            WHERE run_id = :run_id AND rank IS NOT NULL LIMIT {SAMPLE_ROWS}
        ) AS sample
        WINDOW w AS (PARTITION BY query_id ORDER BY rank, doc_id)
    ) AS pairs
    WHERE rank > prev_rank AND score > prev_score
    ORDER BY query_id, rank
    LIMIT 1
    """


class StoredRun(Protocol):
    """A run as an ingest or a load reports it: its id and name."""

    id: int
    name: str


def warn_if_ranks_disagree(conn: Connection, results: Sequence[StoredRun]) -> None:
    """Warn (RankhouseWarning) for each run whose ranks put a lower score above a higher one.

    ``conn`` is a connection to the database holding the runs' rows (the warehouse's, or a
    bare engine database's); ``results`` name the runs (``id``, ``name``).
    """
    for result in results:
        row = conn.execute(_FIRST_DISAGREEMENT, {"run_id": result.id}).first()
        if row is None:
            continue
        warnings.warn(
            RankhouseWarning(
                Message(
                    f"run {result.name!r}: its ranks disagree with its scores (query "
                    f"{row.query_id!r}: rank {row.prev_rank} is {row.prev_doc!r} with score "
                    f"{row.prev_score!r}, rank {row.rank} is {row.doc_id!r} with the higher score "
                    f"{row.score!r}); rankhouse ranks by score, as trec_eval does, and ignores "
                    "ranks: pass ",
                    Option("order", "rank"),
                    " to take the given ranks as the ranking",
                )
            ),
            stacklevel=2,
        )
