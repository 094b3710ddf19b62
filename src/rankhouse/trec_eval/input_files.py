"""The two input files as trec_eval opens them, and its messages when it cannot.

trec_eval names a file it cannot open, or an empty one, and quits with exit code 2; so does
``trec-eval`` (:func:`quit_in`). Files are opened by name, never as patterns, and compressed
files (gzip, bz2, xz, zstd, known by their first bytes) are read decompressed: trec_eval itself
reads no compressed input. A results name starting with ``-`` is standard input.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..ingest.files import duckdb_readable, file_odd_bytes, file_sha256, open_decompressed
from .options import TrecEvalExit

#: What separates trec_eval's fields: its ``isspace`` bytes but the newline, which ends a line.
FIELD_SPACE = re.compile(rb"[ \t\r\v\f]+")


class NotText(Exception):
    """A file is not UTF-8: ``trec-eval`` reads both files again as bytes (:data:`BYTES`)."""


def is_utf8(path: str) -> bool:
    """Whether the decompressed file ``path`` is UTF-8 (read in pieces; asked only after a
    reader failed)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with open_decompressed(Path(path), path) as stream:
            while chunk := stream.read(1 << 22):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    except (OSError, InputError):
        return True  # not an encoding's fault: the reader says what it is
    return True


def quit_in(message: str, path: str) -> TrecEvalExit:
    """trec_eval's exit 2 after ``message``, naming the file it quits in."""
    return TrecEvalExit(2, f"{message}trec_eval: Quit in file '{path}'\n")


def cannot_read(what: str, path: str) -> TrecEvalExit:
    """trec_eval's exit for a file it cannot open or read, a folder, or an empty file: its
    words exactly (``what``: ``qrels`` or ``results``)."""
    return quit_in(f"trec_eval.get_{what}: Cannot read {what} file '{path}'\n", path)


def read_bytes(path: str, what: str) -> bytes:
    """The whole decompressed file ``path`` (``what``: ``qrels``), or trec_eval's exit."""
    try:
        with open_decompressed(Path(path), path) as stream:
            data = stream.read()
    except OSError:
        raise cannot_read(what, path) from None
    except InputError as exc:
        message = f"trec_eval.get_{what}: Cannot read {what} file '{path}': {exc}\n"
        raise quit_in(message, path) from None
    if not data:
        raise cannot_read(what, path)
    return data


@contextlib.contextmanager
def results_file(path: str) -> Iterator[str]:
    """The results file to read: ``path``, or standard input spooled to a file first when
    ``path`` starts with ``-``."""
    if not path.startswith("-"):
        yield path
        return
    with tempfile.NamedTemporaryFile(suffix=".run", delete=False) as tmp:
        tmp.write(sys.stdin.buffer.read())
    try:
        yield tmp.name
    finally:
        os.unlink(tmp.name)


def check_results_file(file: str, shown: str) -> None:
    """trec_eval's exit for a results file that cannot be opened, is a folder or is empty
    (named ``shown``)."""
    try:
        status = os.stat(file)
    except OSError:
        raise cannot_read("results", shown) from None
    if stat.S_ISDIR(status.st_mode) or status.st_size == 0:
        raise cannot_read("results", shown)


@contextlib.contextmanager
def plain_copy(file: str, shown: str) -> Iterator[str]:
    """A name DuckDB reads as exactly ``file``, holding its decompressed bytes."""
    with duckdb_readable(Path(file), shown, keep_gzip=False) as (path, _):
        yield str(path)


def results_sha256(file: str, whitespace: set[int]) -> str:
    """sha256 of the results file's content; collects its odd bytes into ``whitespace``.

    Raises:
        TrecEvalExit: the file is missing, empty or its compressed data is damaged.
    """
    return _scan_results(
        file, lambda path: file_sha256(path, seen_whitespace=whitespace, label=file)
    )


def results_odd_bytes(file: str) -> frozenset[int]:
    """The odd bytes of the results file (they decide its reader), without hashing it:
    evaluating without a warehouse stores nothing, so the file needs no identity.

    Raises:
        TrecEvalExit: as :func:`results_sha256`.
    """
    return frozenset(_scan_results(file, lambda path: file_odd_bytes(path, label=file)))


def _scan_results(file: str, scan):
    """``scan(path)`` of the results file, with trec_eval's errors for a missing, empty or
    damaged one."""
    check_results_file(file, file)
    try:
        return scan(Path(file))
    except InputError as exc:
        raise quit_in(f"trec_eval.get_results: cannot read '{file}': {exc}\n", file) from None
