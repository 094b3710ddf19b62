"""Typed errors raised by the library; the CLI turns each into one ``Error: ...`` line."""

from __future__ import annotations


class RankhouseError(Exception):
    """Base class of every error rankhouse raises on purpose (exit code 1 on the CLI)."""


class InputError(RankhouseError):
    """A qrels or run source cannot be read: missing, empty, malformed, duplicated.

    The message names the file, the line and the field where one applies, and the fix
    where one exists.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.source = source
        self.line = line
        self.field = field
        self.hint = hint
        where = []
        if source is not None:
            where.append(str(source))
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field {field!r}")
        text = message if not where else f"{message} ({', '.join(where)})"
        if hint:
            text = f"{text}; {hint}"
        super().__init__(text)


class NotFoundError(RankhouseError):
    """A named run, qrels set or evaluation does not exist in the warehouse."""


class ConflictError(RankhouseError):
    """A name is already taken by different content (pass ``replace=True`` to overwrite)."""


class SchemaError(RankhouseError):
    """The warehouse's schema cannot be used by this version of rankhouse."""


class MeasureError(RankhouseError):
    """A measure name or parameter that rankhouse does not know or cannot accept."""


class NoWarehouseError(NotFoundError):
    """A command that only reads found no warehouse at the path it was given."""


class WarehouseLockedError(RankhouseError):
    """Another process held the DuckDB file for longer than the lock timeout."""
