"""Content hashes: the identity of an ingested source, used to recognise it when it comes again."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

from .files import open_decompressed

_CHUNK = 1 << 20

# ASCII whitespace other than newline (trec_eval's isspace), and \x01, the byte the SQL line
# reader takes as its column delimiter: a file holding any but its separator is read exactly.
WHITESPACE = frozenset(b" \t\r\x0b\x0c")
ODD_BYTES = WHITESPACE | {0x01}

__all__ = ["open_decompressed"]


def file_sha256(
    path: Path,
    on_bytes: Callable[[int], None] | None = None,
    seen_whitespace: set[int] | None = None,
    label: str | None = None,
) -> str:
    """sha256 of the file's decompressed bytes, so ``x`` and ``x.gz`` hash the same.

    ``on_bytes`` is called with the number of compressed bytes read so far (for progress).
    ``seen_whitespace``, when given, collects which :data:`ODD_BYTES` occur in the file
    (a memchr per byte value and chunk, until each is seen), so that the TREC reader can tell
    a file separated by single spaces from one that also holds tabs or carriage returns
    without a per-row regular expression.

    Raises:
        InputError: a damaged or truncated compressed file (naming ``label``).
    """
    digest = hashlib.sha256()
    for chunk in _chunks(path, on_bytes, seen_whitespace, label):
        digest.update(chunk)
    return digest.hexdigest()


def file_odd_bytes(path: Path, label: str | None = None) -> set[int]:
    """The :data:`ODD_BYTES` the file's decompressed bytes hold, as :func:`file_sha256`
    collects them, for a reader that needs no hash (nothing is stored).

    Raises:
        InputError: a damaged or truncated compressed file (naming ``label``).
    """
    seen: set[int] = set()
    for _ in _chunks(path, None, seen, label):
        pass
    return seen


def _chunks(
    path: Path,
    on_bytes: Callable[[int], None] | None,
    seen_whitespace: set[int] | None,
    label: str | None,
) -> Iterator[bytes]:
    unseen = set(ODD_BYTES) if seen_whitespace is not None else set()
    with open_decompressed(path, label) as stream:
        while chunk := stream.read(_CHUNK):
            for byte in [b for b in unseen if b in chunk]:
                unseen.discard(byte)
                seen_whitespace.add(byte)
            if on_bytes is not None:
                on_bytes(stream.compressed_position())
            yield chunk


class BackgroundHash:
    """Hash a file in a thread while DuckDB reads it (hashlib and zlib release the GIL)."""

    def __init__(
        self,
        path: Path,
        on_bytes: Callable[[int], None] | None = None,
        label: str | None = None,
    ) -> None:
        from ..background import Background

        self._whitespace: set[int] = set()
        self._hash = Background(
            lambda: file_sha256(path, on_bytes, self._whitespace, label),
            "rankhouse-hash",
            daemon=True,
        )

    def whitespace(self) -> frozenset[int]:
        """The :data:`ODD_BYTES` the file holds; waits for the thread."""
        self.result()
        return frozenset(self._whitespace)

    def result(self) -> str:
        """Wait for the hash; re-raises what the thread raised (e.g. a corrupt gzip stream)."""
        return self._hash.result()


def frame_sha256(frame: pd.DataFrame) -> str:
    """sha256 of a canonical serialization of the mapped (already normalised) columns.

    The frame's columns are the logical fields in a fixed order, ids as strings, so two frames
    with the same content hash the same whatever their original column names or dtypes.
    """
    digest = hashlib.sha256()
    digest.update("\t".join(frame.columns).encode())
    for name in frame.columns:
        column = frame[name]
        digest.update(b"\x00" + name.encode() + b"\x00")
        if column.dtype.kind == "f":
            digest.update(column.to_numpy(dtype="float64").tobytes())
        elif column.dtype.kind in "iu":
            digest.update(column.to_numpy(dtype="int64").tobytes())
        elif len(column):  # each value followed by \x1f
            for block in _text_blocks(column):
                digest.update(block)
    return digest.hexdigest()


def _text_blocks(column: pd.Series) -> Iterator[bytes | memoryview]:
    """The UTF-8 bytes of ``column``'s values, each followed by \x1f, in blocks.

    Arrow-backed text (pandas' default string dtype) is joined by Arrow in its own buffers,
    without a Python string per value; other columns are joined in Python.
    """
    arrow = _arrow_text(column)
    if arrow is None:
        yield ("\x1f".join(_strings(column)) + "\x1f").encode("utf-8", "surrogatepass")
        return
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    for chunk in arrow.chunks:
        ended = pc.binary_join_element_wise(
            chunk, pa.scalar("\x1f", chunk.type), pa.scalar("", chunk.type)
        )
        _, offsets, data = ended.buffers()
        width = np.int64 if pa.types.is_large_string(ended.type) else np.int32
        ends = np.frombuffer(offsets, dtype=width)[ended.offset : ended.offset + len(ended) + 1]
        yield memoryview(data)[ends[0] : ends[-1]]


def _arrow_text(column: pd.Series):
    """``column``'s values as a pyarrow ChunkedArray of (large) strings, or None when they are
    not held so (or some are missing)."""
    if not hasattr(column.array, "__arrow_array__") or column.hasnans:
        return None
    import pyarrow as pa

    values = pa.array(column.array)
    if isinstance(values, pa.Array):
        values = pa.chunked_array([values])
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        return None
    return values


def _strings(column: pd.Series) -> list[str]:
    """``column``'s values as ``str`` gives them; the ids of a canonical frame already are str
    (then no conversion, which on millions of rows costs more than the hash)."""
    import pandas as pd

    strings = (
        isinstance(column.dtype, pd.StringDtype)
        or column.dtype == object
        and pd.api.types.infer_dtype(column, skipna=False) == "string"
    )
    return column.tolist() if strings and not column.hasnans else column.astype(str).tolist()


#: The 64-bit hash of a run row's (query, document) pair: two rows with the same one are the
#: same document listed twice for a query (checked on the strings before it is reported).
PAIR_HASH = "hash(query_id, doc_id)"
#: The 64-bit hash of a run row's (query, score): rows with the same one tie (a collision
#: could only add one to the count of tied pairs).
TIE_HASH = "hash(query_id, score)"


def repeats_sql(key: str) -> str:
    """The SQL aggregate that counts the rows whose ``key`` (:data:`PAIR_HASH`,
    :data:`TIE_HASH`) equals an earlier row's."""
    return f"count(*) - count(DISTINCT {key})"


#: From this many rows a numpy sort of the hashes counts repeats; below it DuckDB counts them
#: (no numpy import: small inputs start faster).
NUMPY_FROM = 1_000_000
#: From this size a run file may hold NUMPY_FROM lines (a TREC run line is at least 13 bytes):
#: a reader imports numpy while DuckDB reads it (the import takes 50 ms).
NUMPY_FILE_BYTES = 13 * NUMPY_FROM


def may_hold_numpy_rows(path: Path | str) -> bool:
    """Whether the run file ``path`` is large enough to hold :data:`NUMPY_FROM` lines, so
    that its reader imports numpy while DuckDB reads it (False for a file that cannot be
    read: its reader reports that)."""
    import os

    try:
        return os.path.getsize(path) >= NUMPY_FILE_BYTES
    except OSError:
        return False


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


def count_repeats_each(*columns: np.ndarray) -> list[int]:
    """:func:`count_repeats` of each column, each sorted on a thread of its own (numpy lets go
    of the GIL while it sorts: two columns of 7 million hashes take 0.47 s on two cores, one
    0.43 s)."""
    from concurrent.futures import ThreadPoolExecutor

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
    import numpy as np

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


#: Values of the padded tables :func:`count_repeats_in_segments` sorts at once (8 MB each).
SEGMENT_BLOCK = 1 << 20


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
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

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
