"""A source holding the same rows as a stored run or qrels set under other bytes: reused.

A CRLF copy of a stored run file hashes differently but holds the same rows. When it claims a
name that is taken, the rows are compared (:mod:`rankhouse.catalog.same_rows`); the same rows
are the stored run, and a :class:`~rankhouse.errors.RankhouseWarning` says so, and which bytes
differ when that is cheap to tell: the first MiB of both files shows their line ends, the
whitespace between fields and a byte order mark (the stored run's file only when it is still
there with the bytes it had).
"""

from __future__ import annotations

import codecs
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..catalog.same_rows import COLUMNS, Incoming
from ..errors import RankhouseError, RankhouseWarning
from .files import open_decompressed
from .hashing import file_sha256
from .sources import Source
from .staging import STAGE

#: Bytes read from the head of each file to tell how it is written.
_HEAD = 1 << 20


def staged(kind: str, num_rows: int, num_queries: int, tag=None, order=None) -> Incoming:
    """The rows of the stage (of one tag, for a run), for a comparison."""
    where = " WHERE tag = :incoming_tag" if kind == "run" else ""
    return Incoming(
        kind,
        f"SELECT {COLUMNS[kind]} FROM {STAGE}{where}",
        {"incoming_tag": tag} if kind == "run" else {},
        num_rows,
        num_queries,
        tag,
        order,
    )


def run_rows(run_id: int, num_rows: int, num_queries: int, tag: str, order: str) -> Incoming:
    """The rows just written to ``run_rows`` under ``run_id``, for a comparison."""
    return Incoming(
        "run",
        f"SELECT {COLUMNS['run']} FROM run_rows WHERE run_id = :incoming_id",
        {"incoming_id": run_id},
        num_rows,
        num_queries,
        tag,
        order,
    )


def path_of(src: Source) -> Path | None:
    """The file ``src`` reads, None for a DataFrame."""
    return None if src.is_frame else src.data_path


def say_reused(kind: str, label: str, path: Path | None, sha: str, stored: dict) -> None:
    """Warn that the source ``label`` (the file ``path``, None for a DataFrame) of hash
    ``sha`` holds the rows of the stored qrels set or run ``stored`` (a catalogue row with
    ``id``, ``name``, ``source``, ``content_sha256``), which is reused."""
    what = "qrels set" if kind == "qrels" else "run"
    held = f"holds the same rows as {what} {stored['name']!r} (id {stored['id']})"
    if path is None:
        text = f"the DataFrame {held}: reusing it"
    elif sha == stored["content_sha256"]:
        text = f"{kind} file {label} {held}; its bytes are the same, read with other options: "
        text += "reusing it"
    else:
        text = f"{kind} file {label} {held}; {_bytes_differ(path, stored)}: reusing it"
    warnings.warn(RankhouseWarning(text), stacklevel=3)


@dataclass(frozen=True)
class _Writing:
    """How a text file is written, from its first MiB."""

    line_ends: str  # "LF", "CRLF", "CR", or several joined by " and "
    separators: str  # "single spaces", "runs of spaces", "tabs", "spaces and tabs", "no spaces"
    bom: bool


def _bytes_differ(path: Path, stored: dict) -> str:
    """``its bytes differ``, and how when the heads of both files tell it (only the new
    file's odd ways when the stored run's file is gone or changed)."""
    new = _writing(path)
    if new is None:
        return "its bytes differ"
    old = _writing(Path(stored["source"]), stored["content_sha256"])
    said = []
    if old is None:
        if new.line_ends != "LF":
            said.append(f"{new.line_ends} line ends")
        if new.bom:
            said.append("a byte order mark")
    else:
        if new.line_ends != old.line_ends:
            said.append(f"{new.line_ends} line ends instead of {old.line_ends}")
        if new.separators != old.separators:
            said.append(f"{new.separators} between fields instead of {old.separators}")
        if new.bom != old.bom:
            said.append("a byte order mark" if new.bom else "no byte order mark")
    return f"its bytes differ ({', '.join(said)})" if said else "its bytes differ"


def _writing(path: Path, sha: str | None = None) -> _Writing | None:
    """How the file ``path`` is written; None when it cannot be read (or, given ``sha``,
    no longer holds the bytes of that hash)."""
    try:
        if sha is not None and (not path.is_file() or file_sha256(path) != sha):
            return None
        with open_decompressed(path) as stream:
            head = stream.read(_HEAD)
    except (OSError, RankhouseError):
        return None
    crlf = head.count(b"\r\n")
    ends = {
        "CRLF": crlf,
        "CR": head.count(b"\r") - crlf,
        "LF": head.count(b"\n") - crlf,
    }
    line_ends = " and ".join(name for name, found in ends.items() if found) or "LF"
    tabs, spaces = b"\t" in head, b" " in head
    if tabs and spaces:
        separators = "spaces and tabs"
    elif tabs:
        separators = "tabs"
    elif spaces:
        separators = "runs of spaces" if b"  " in head else "single spaces"
    else:
        separators = "no spaces"
    return _Writing(line_ends, separators, head.startswith(codecs.BOM_UTF8))
