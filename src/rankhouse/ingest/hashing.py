"""Content hashes: the identity of an ingested source, used to recognise it when it comes again.

A file is hashed on a thread while DuckDB reads it (:class:`BackgroundHash`); the same pass
notes which odd bytes the file holds (tabs, carriage returns...), which decides the TREC reader
that may take it (:mod:`rankhouse.ingest.trec`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..background import Background
from ..lazy import numpy as np
from ..lazy import pyarrow as pa
from ..lazy import pyarrow_compute as pc
from .files import open_decompressed

if TYPE_CHECKING:
    import pandas as pd

_CHUNK = 1 << 20

# ASCII whitespace other than newline (trec_eval's isspace), and \x01, the byte the SQL line
# reader takes as its column delimiter: a file holding any but its separator is read exactly.
WHITESPACE = frozenset(b" \t\r\x0b\x0c")
ODD_BYTES = WHITESPACE | {0x01}


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
    values = pa.array(column.array)
    if isinstance(values, pa.Array):
        values = pa.chunked_array([values])
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        return None
    return values


def _strings(column: pd.Series) -> list[str]:
    """``column``'s values as ``str`` gives them; the ids of a canonical frame already are str
    (then no conversion, which on millions of rows costs more than the hash)."""
    import pandas as pd  # only for DataFrames, which have imported it

    strings = (
        isinstance(column.dtype, pd.StringDtype)
        or column.dtype == object
        and pd.api.types.infer_dtype(column, skipna=False) == "string"
    )
    return column.tolist() if strings and not column.hasnans else column.astype(str).tolist()
