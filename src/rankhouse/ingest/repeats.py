"""Repeated documents and tied scores of a run, counted by 64-bit hashes of its rows.

A run may not list a document twice for a query (trec_eval stops with 'duplicate docs'), and
an ingest records how many of its documents tie on score with another of the same query. Both
are counts of rows whose hash equals an earlier row's: of (query, document) for a repeat, of
(query, score) for a tie. Two ways count them, chosen by size, and give the same counts
(tests/test_repeat_counting.py moves the threshold to run each input through both): DuckDB
counts distinct hashes of small inputs; from :data:`NUMPY_FROM` rows a numpy sort of the hashes
does it, query by query when each query's rows are consecutive (as a retrieval system writes
them), which is several times cheaper than a hash aggregate over millions of distinct keys.

A repeated hash is confirmed on the strings before a duplicate is reported (two documents whose
hashes collide are no duplicate); a collision of (query, score) hashes could only add one to a
count of tied pairs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from ..lazy import numpy as np

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
