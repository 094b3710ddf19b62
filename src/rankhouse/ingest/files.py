"""A file as the bytes it holds: compression by magic bytes, a name never read as a glob, and
the content hash that is a source's identity.

DuckDB's readers take a file name as a glob pattern (``run[1].txt`` would read ``run1.txt``)
and choose decompression by the name's suffix. rankhouse decides both itself: the file is
the one named, and it is decompressed when its first bytes say so, whatever it is called.

The sha256 of the decompressed bytes (of a DataFrame: of its canonical columns) recognises
content when it comes again. A file is hashed on a thread while DuckDB reads it
(:class:`BackgroundHash`); the same pass notes which odd bytes the file holds (tabs, carriage
returns...), which decides the TREC reader that may take it (:mod:`rankhouse.ingest.trec`).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from ..lazy import Background
from ..lazy import numpy as np
from ..lazy import pyarrow as pa
from ..lazy import pyarrow_compute as pc

if TYPE_CHECKING:
    import pandas as pd


#: Suffixes of compressed files, stripped before the format is taken from the extension.
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")

_GLOB_CHARACTERS = frozenset("*?[]{}\\")
_CHUNK = 1 << 20


def compression_of(path: Path) -> str:
    """'gzip', 'bz2', 'xz', 'zstd' or 'none', from the file's first bytes (not its name)."""
    with path.open("rb") as probe:
        head = probe.read(10)
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    # 'BZh' + block size + the block magic (pi): plain text cannot start like that
    bz2_blocks = (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in bz2_blocks:
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    return "none"


def strip_compression_suffix(name: str) -> str:
    """``run.txt.gz`` -> ``run.txt`` (one compression suffix, any case)."""
    lowered = name.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if lowered.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _decompression_errors() -> tuple[type[BaseException], ...]:
    import lzma
    import zlib

    errors: list[type[BaseException]] = [EOFError, OSError, zlib.error, lzma.LZMAError]
    try:
        import zstandard

        errors.append(zstandard.ZstdError)
    except ImportError:  # pragma: no cover - zstandard is a dependency
        pass
    return tuple(errors)


class _CheckedStream(io.BufferedIOBase):
    """A decompressing stream whose read errors become one InputError naming the file."""

    def __init__(self, stream, raw, label: str, compression: str) -> None:
        super().__init__()
        self._stream = stream
        self._raw = raw
        self._label = label
        self._compression = compression

    def _fail(self, exc: BaseException) -> InputError:
        detail = str(exc) or type(exc).__name__
        return InputError(
            f"the {self._compression} data is damaged or truncated ({detail})",
            source=self._label,
            hint="check the file (e.g. gzip -t) or fetch it again",
        )

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        try:
            return self._stream.read(-1 if size is None else size)
        except _decompression_errors() as exc:
            raise self._fail(exc) from None

    def read1(self, size: int = -1) -> bytes:
        return self.read(size if size >= 0 else _CHUNK)

    def readline(self, size: int | None = -1) -> bytes:
        try:
            return self._stream.readline(-1 if size is None else size)
        except _decompression_errors() as exc:
            raise self._fail(exc) from None

    def compressed_position(self) -> int:
        """Bytes of the file read so far (for progress)."""
        return self._raw.tell()

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
            self._raw.close()
        super().close()


class _ZstdStream(io.RawIOBase):
    """zstd frames one after another; a frame cut short raises EOFError (zstandard's own
    stream reader returns what it has and stops silently)."""

    def __init__(self, raw) -> None:
        import zstandard

        super().__init__()
        self._raw = raw
        self._zstd = zstandard.ZstdDecompressor()
        self._frame = self._zstd.decompressobj()
        self._pending = b""
        self._started = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self._pending:
            chunk = self._raw.read(_CHUNK)
            if not chunk:
                if self._started and not self._frame.eof:
                    raise EOFError("the last zstd frame is cut short")
                return 0
            while chunk:
                if self._frame.eof:
                    self._frame = self._zstd.decompressobj()
                self._started = True
                self._pending += self._frame.decompress(chunk)
                chunk = self._frame.unused_data if self._frame.eof else b""
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size


def open_decompressed(path: Path, label: str | None = None) -> _CheckedStream:
    """A binary stream of the file's decompressed bytes (compression from its magic bytes).

    Reading a damaged or truncated compressed file raises InputError naming ``label``.
    """
    return decompressing(path.open("rb"), compression_of(path), label or str(path))


def decompressing(raw, compression: str, label: str) -> _CheckedStream:
    """A stream decompressing the binary file object ``raw`` (closed with the stream)."""
    # the codecs load when a file is compressed (5 ms of every command's start-up otherwise)
    import bz2
    import gzip
    import lzma

    if compression == "gzip":
        stream = gzip.GzipFile(fileobj=raw, mode="rb")
    elif compression == "bz2":
        stream = bz2.BZ2File(raw, "rb")
    elif compression == "xz":
        stream = lzma.LZMAFile(raw, "rb")  # noqa: SIM115 - closed by the returned stream
    elif compression == "zstd":
        stream = io.BufferedReader(_ZstdStream(raw), _CHUNK)
    else:
        stream = raw
    return _CheckedStream(stream, raw, label, compression)


def has_glob_characters(path: Path | str) -> bool:
    """Whether DuckDB would read ``path`` as a pattern."""
    return any(char in _GLOB_CHARACTERS for char in str(path))


@contextlib.contextmanager
def duckdb_readable(
    path: Path, label: str, *, keep_gzip: bool = True
) -> Iterator[tuple[Path, str]]:
    """(a path DuckDB reads as exactly this file, DuckDB's compression for it).

    gzip is left to DuckDB (it reads it in parallel) unless ``keep_gzip`` is false; bz2, xz
    and zstd are decompressed into a temporary file first, which also finds a damaged file
    before anything is read. A name DuckDB would take as a glob pattern is reached through a
    symbolic link with a plain name. Temporary files are removed on exit.

    Raises:
        InputError: a damaged or truncated compressed file (naming ``label``).
    """
    compression = compression_of(path)
    kept = ("none", "gzip") if keep_gzip else ("none",)
    if compression in kept and not has_glob_characters(path):
        yield path, compression
        return
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="rankhouse-"))
    try:
        if compression in kept:
            link = folder / "input"
            os.symlink(path.resolve(), link)
            yield link, compression
        else:
            plain = folder / "input"
            with open_decompressed(path, label) as stream, plain.open("wb") as out:
                shutil.copyfileobj(stream, out, _CHUNK)
            yield plain, "none"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- content hashes: a source's identity ----------------------------------------------------------


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
