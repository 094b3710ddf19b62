"""Delimited text (CSV, TSV, ``|`` or ``;`` separated): the header and the records, with lines.

Read in Python with the ``csv`` module so that every file is read by one set of rules
(docs/ingest.md, "Reading rules"): a UTF-8 BOM is dropped, LF, CRLF and a lone CR each
end a line, fields are quoted as in RFC 4180, and the delimiter is sniffed from the header
among ``,`` tab ``|`` ``;`` unless it is given.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import InputError, Message, Option
from ..words import count
from .files import open_decompressed
from .sources import DELIMITERS, Source, default_delimiter

_NAMES = {",": "comma", "\t": "tab", "|": "|", ";": ";"}
_BOM = "\ufeff"


def sniff(header_line: str, fmt: str) -> str:
    """The candidate delimiter found most often outside quotes in the header line.

    Ties go to the format's own delimiter (``,`` for csv, tab for tsv), then to the order
    ``,`` tab ``|`` ``;``; a header without any candidate gets the format's own.
    """
    counts = dict.fromkeys(DELIMITERS, 0)
    quoted = False
    for char in header_line:
        if char == '"':
            quoted = not quoted
        elif not quoted and char in counts:
            counts[char] += 1
    own = default_delimiter(fmt)
    order = [own] + [d for d in DELIMITERS if d != own]
    return max(order, key=lambda d: counts[d])  # max keeps the first of equal counts


@contextmanager
def lines_of(source: Source, errors: str = "strict") -> Iterator[Iterator[str]]:
    """The decompressed file's UTF-8 lines, each ending at LF, CRLF or a lone CR (the ending
    kept), a leading BOM dropped. A byte that is not UTF-8 raises UnicodeDecodeError (or, with
    ``errors="surrogateescape"``, is kept as a lone surrogate)."""
    with open_decompressed(source.data_path, source.label) as raw:
        lines = iter(io.TextIOWrapper(raw, encoding="utf-8", errors=errors, newline=""))
        first = next(lines, "")
        yield itertools.chain([first.removeprefix(_BOM)], lines)


def not_utf8_error(source: Source) -> InputError:
    """The error naming the first line holding a byte that is not UTF-8."""
    with lines_of(source, "surrogateescape") as lines:
        for line, text in enumerate(lines, start=1):
            if not_utf8(text):
                return InputError(
                    "the line is not UTF-8",
                    source=source.label,
                    line=line,
                    hint="convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)",
                )
    return InputError("the file is not UTF-8", source=source.label)


class Records:
    """A delimited file read record by record; every record carries the line it starts on.

    Blank lines are skipped; the first other line is the header (line numbers count every
    line, the header's too); a record spanning lines (a quoted line break) is named by its
    first line.
    """

    def __init__(self, source: Source, delimiter: str | None) -> None:
        self.source = source
        self.given = delimiter
        self.delimiter = delimiter or default_delimiter(source.format)

    def __iter__(self) -> Iterator[tuple[int, list[str]]]:
        """(line, fields) of every non-blank record, the header first; sets ``delimiter``."""
        try:
            yield from self._records()
        except UnicodeDecodeError:
            raise not_utf8_error(self.source) from None

    def _records(self) -> Iterator[tuple[int, list[str]]]:
        with lines_of(self.source) as lines:
            skipped = []
            for text in lines:
                skipped.append(text)
                if text.strip("\r\n"):
                    break
            if self.given is None and skipped:
                self.delimiter = sniff(skipped[-1].rstrip("\r\n"), self.source.format)
            reader = csv.reader(
                itertools.chain(skipped, lines),
                delimiter=self.delimiter,
                quotechar='"',
                strict=True,
            )
            line = 1
            while True:
                try:
                    fields = next(reader)
                except StopIteration:
                    return
                except csv.Error as exc:
                    raise self.error(reader.line_num, f"cannot parse the line: {exc}") from None
                if fields:
                    yield line, fields
                line = reader.line_num + 1

    def error(self, line: int, text: str, field: str | None = None, hint=None) -> InputError:
        return InputError(text, source=self.source.label, line=line, field=field, hint=hint)

    def read(
        self, header: list[str] | None = None
    ) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
        """(header, rows): the column names and the records after them, each checked to have
        as many fields as the header. InputError when the file holds no header.

        A ``header`` given names the columns of a file without one: its first line is data.
        """
        records = iter(self)
        first = next(records, None)
        if first is None:
            raise InputError("no rows: the source is empty", source=self.source.label)
        if header is not None:
            return header, self._checked(itertools.chain([first], records), len(header))
        return first[1], self._checked(records, len(first[1]))

    def _checked(self, records, width: int) -> Iterator[tuple[int, list[str]]]:
        for line, fields in records:
            if len(fields) != width:
                raise self.error(
                    line,
                    f"the line has {count(len(fields), 'field')}, the header has {width} "
                    f"(delimiter: {_NAMES[self.delimiter]})",
                    hint=Message(
                        "quote fields that hold the delimiter, or pass ", Option("delimiter")
                    ),
                )
            yield line, fields


def not_utf8(text: str) -> bool:
    """True when ``text`` holds a byte that was not UTF-8 (read as a lone surrogate)."""
    return any("\udc80" <= char <= "\udcff" for char in text)
