"""Regular TREC text: lines of fields joined by one separator, which the fast readers take.

A retrieval system writes its run as lines of six fields joined by a single space (or a single
tab). DuckDB's CSV reader takes such a file as fixed columns, in parallel, several times faster
than splitting each line in SQL. Whether a file is regular is known only once it is read, so a
fast reader tries, from what its first line suggests, and says why it gave up with a
:class:`Fallback`; the next reader takes the file from there (:mod:`rankhouse.ingest.trec`).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from ..files import open_decompressed
from ..sources import Source
from .exact import BOM

# DuckDB sizes its read buffers by the longest line it allows: a limit of 1 GiB doubles the
# time of a 7-million-line file and its memory, so the fixed-column readers keep DuckDB's 2 MB
# and a longer line makes them give up like any other irregular line (the SQL split allows
# 1 GiB).
FAST_MAX_LINE = 1 << 21


class Fallback(Enum):
    """Why a fast reader gave a file up to the next reader."""

    LINE_REFUSED = "DuckDB stopped at a line the reader does not take"
    """A line that is not fields joined by the separator (a field too many or too few, an
    empty field, a comment, a line over 2 MB, bytes that are not UTF-8) or, for the direct
    reader, a line of another tag or with a value it cannot read. DuckDB names the line in
    its error, which nothing reads: the next reader finds and names any problem itself."""

    OTHER_WHITESPACE = "the file holds whitespace other than its separator"
    """A tab in a file separated by spaces (or the reverse), a vertical tab or a form feed,
    seen by the pass that hashes the file: DuckDB would have kept it inside a field, so only
    the SQL split reads the file right."""


def first_line_separator(source: Source) -> str | None:
    """' ' or '\\t' when the first line looks like fields joined by that one character."""
    return _first_line(source)[0]


def run_shape(source: Source) -> tuple[str, str] | None:
    """(separator, tag) when the first line is six fields joined by one separator, else None.

    Such a file may take the direct reader (:mod:`.direct`), which holds the whole file to
    that shape.
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


def only_separator(whitespace: Callable[[], frozenset[int]] | None, separator: str) -> bool:
    """True when the file holds no whitespace byte other than ``separator`` (and newlines);
    ``whitespace`` returns the odd bytes the hashing pass found."""
    if whitespace is None:
        return False
    try:
        return whitespace() <= {ord(separator)}
    except Exception:  # an unreadable stream: the general path reports it properly
        return False


def fixed_columns(count: int) -> tuple[list[str], str]:
    """(the names ``c1``..``c<count>``, the FROM clause reading a file as those text columns).

    The clause takes three parameters: the file, the separator and DuckDB's compression. An
    empty field is NULL, never '': the readers pass ``nullstr=''`` (a test of '' as well cost
    0.12 s of a 7-million-line run's 1.4 s).
    """
    names = [f"c{i}" for i in range(1, count + 1)]
    spec = "{" + ", ".join(f"'{name}': 'VARCHAR'" for name in names) + "}"
    reader = (
        f"read_csv(?, delim=?, columns={spec}, header=false, quote='', escape='', nullstr='', "
        f"auto_detect=false, max_line_size={FAST_MAX_LINE}, compression=?)"
    )
    return names, reader


def irregular_sql(names: list[str]) -> str:
    """SQL: whether a line read as the fields ``names`` is not a regular data line (a field
    empty, two separators in a row included, or a comment)."""
    return " OR ".join(f"{name} IS NULL" for name in names) + " OR starts_with(c1, '#')"
