"""JSON lines: one JSON object per line, numbers kept as they are written.

Ids must be text as written, so numbers are never converted: the parser hands back the
number's own spelling (:class:`JsonInteger` or :class:`JsonFraction`), and the field rules in
``text_tables`` decide what each spelling may be.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..errors import InputError
from .delimited import lines_of, not_utf8_error
from .sources import Source


class JsonInteger(str):
    """A JSON number written without fraction or exponent (``12``, ``-3``), as written."""


class JsonFraction(str):
    """A JSON number written with a fraction or an exponent (``2.0``, ``1e3``), as written."""


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(
    parse_int=JsonInteger, parse_float=JsonFraction, parse_constant=_no_constant
)
# JSON's own whitespace; a line holding nothing else is skipped.
_BLANK = " \t\r\n"


class Records:
    """The objects of a JSON lines file, each with its line number (every line end counts)."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def __iter__(self) -> Iterator[tuple[int, dict]]:
        try:
            yield from self._records()
        except UnicodeDecodeError:
            raise not_utf8_error(self.source) from None

    def _records(self) -> Iterator[tuple[int, dict]]:
        with lines_of(self.source) as lines:
            for line, text in enumerate(lines, start=1):
                if not text.strip(_BLANK):
                    continue
                try:
                    record = _DECODER.decode(text)
                except ValueError as exc:
                    raise self.error(line, f"the line is not valid JSON: {exc}") from None
                if not isinstance(record, dict):
                    raise self.error(
                        line, f"the line holds a JSON {type(record).__name__}, not an object"
                    )
                yield line, record

    def error(self, line: int, text: str, field: str | None = None, hint=None) -> InputError:
        return InputError(text, source=self.source.label, line=line, field=field, hint=hint)

    def read(self) -> tuple[list[str], Iterator[tuple[int, dict]]]:
        """(columns, records): the keys of the first object, and every object (that one too)."""
        records = iter(self)
        first = next(records, None)
        if first is None:
            raise InputError("no rows: the source is empty", source=self.source.label)

        def all_records():
            yield first
            yield from records

        return list(first[1]), all_records()
