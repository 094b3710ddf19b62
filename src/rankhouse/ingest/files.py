"""Opening an input file as the bytes it holds: compression by magic bytes, names never globs.

DuckDB's readers take a file name as a glob pattern (``run[1].txt`` would read ``run1.txt``)
and choose decompression by the name's suffix. rankhouse decides both itself: the file is
the one named, and it is decompressed when its first bytes say so, whatever it is called.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import shutil
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError

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
