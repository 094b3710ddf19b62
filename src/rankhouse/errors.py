"""Typed errors and warnings raised by the library; the CLI turns each into one line.

A message that tells the caller what to pass names a parameter the way the caller writes
it: ``order='rank'`` to a Python caller, ``--order rank`` on the command line. Such a
message is built from parts (:class:`Option`, :class:`Either`, text); ``str()`` of the
error is the Python wording and :meth:`RankhouseError.cli_text` the command line's, which
is what the CLI prints.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

_FLAG = object()


@dataclass(frozen=True)
class Option:
    """A parameter named in a message: ``name=value`` in Python, ``--name value`` on the CLI.

    Args:
        name: the Python keyword (``relevance_level``); the CLI flag is ``--relevance-level``
            unless ``flag`` says otherwise.
        value: the value to suggest; left out, the message names the parameter alone.
        cli_value: how the value is written on the command line (default ``str(value)``);
            ``""`` for a flag that takes no value (``--replace``).
        flag: the CLI's option when it is not ``--`` + the name with dashes.
    """

    name: str
    value: Any = _FLAG
    cli_value: str | None = None
    flag: str | None = None

    def render(self, cli: bool) -> str:
        if not cli:
            return self.name if self.value is _FLAG else f"{self.name}={self.value!r}"
        flag = self.flag or "--" + self.name.replace("_", "-")
        if self.value is _FLAG or self.cli_value == "":
            return flag
        shown = str(self.value) if self.cli_value is None else self.cli_value
        return f"{flag} {shown}"


@dataclass(frozen=True)
class Either:
    """Text that differs between the two audiences (``rankhouse measures`` vs a function)."""

    python: str
    cli: str

    def render(self, cli: bool) -> str:
        return self.cli if cli else self.python


Part = str | Option | Either


class Message:
    """A message made of text, :class:`Option` and :class:`Either` parts."""

    def __init__(self, *parts: Part | Message | None) -> None:
        flat: list[Part] = []
        for part in parts:
            if isinstance(part, Message):
                flat.extend(part.parts)
            elif part is not None:
                flat.append(part)
        self.parts = tuple(flat)

    def render(self, cli: bool = False) -> str:
        return "".join(p if isinstance(p, str) else p.render(cli) for p in self.parts)

    def __bool__(self) -> bool:
        return bool(self.render())

    def __str__(self) -> str:
        return self.render(cli=False)


def _message(text: str | Message | None) -> Message:
    return text if isinstance(text, Message) else Message(text)


class RankhouseError(Exception):
    """Base class of every error rankhouse raises on purpose (exit code 1 on the CLI).

    Args:
        message: the text, or a :class:`Message` that names parameters (see the module).
    """

    def __init__(self, message: str | Message = "") -> None:
        self.message = _message(message)
        super().__init__(self.message.render(cli=False))

    def cli_text(self) -> str:
        """The message as the command line says it (``--order rank``, not ``order='rank'``)."""
        return self.message.render(cli=True)


class InputError(RankhouseError):
    """A qrels or run source cannot be read: missing, empty, malformed, duplicated.

    The message names the file, the line and the field where one applies, and the fix
    where one exists.
    """

    def __init__(
        self,
        message: str | Message,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | Message | None = None,
    ) -> None:
        self.source = source
        self.line = line
        self.field = field
        self.hint = None if hint is None else str(hint)
        where = []
        if source is not None:
            where.append(str(source))
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field {field!r}")
        text = Message(message, f" ({', '.join(where)})" if where else None)
        if hint:
            text = Message(text, "; ", _message(hint))
        super().__init__(text)


class NotFoundError(RankhouseError):
    """A named run, qrels set or evaluation does not exist in the warehouse."""


class ConflictError(RankhouseError):
    """A name is already taken by different content (pass ``replace=True`` to overwrite)."""


class SchemaError(RankhouseError):
    """The warehouse's schema cannot be used by this version of rankhouse."""


class MeasureError(RankhouseError):
    """A measure name or parameter that rankhouse does not know or cannot accept."""


class RankhouseWarning(UserWarning):
    """Something that is probably a mistake but yields numbers (a run that answers few of
    the qrels queries, ranks that disagree with scores). The CLI prints it as one
    ``Warning: ...`` line on stderr.

    Args:
        message: the text, or a :class:`Message` that names parameters.
    """

    def __init__(self, message: str | Message) -> None:
        self.message = _message(message)
        super().__init__(self.message.render(cli=False))

    def cli_text(self) -> str:
        """The warning as the command line says it."""
        return self.message.render(cli=True)


class DatabaseError(RankhouseError):
    """The database refused a statement for a reason rankhouse did not foresee (a lost server
    connection, a full disk, a privilege it lacks). Each backend turns its driver's errors
    into this one where they leave it (:mod:`rankhouse.backends.base`), so that callers and the
    command line meet rankhouse's errors only.

    Attributes:
        reason: the first line of the driver's message.
    """

    def __init__(self, reason: str, message: str | Message | None = None) -> None:
        self.reason = reason
        super().__init__(message or f"the database refused the request: {reason}")


class OutputError(RankhouseError):
    """A file rankhouse was asked to write cannot be written: a folder, a path in a missing
    folder, no permission, a full disk (:mod:`rankhouse.outputs`)."""

    def __init__(self, message: str | Message, *, hint: str | None = None) -> None:
        self.hint = hint
        super().__init__(Message(message, f"; {hint}" if hint else None))


class NoWarehouseError(NotFoundError):
    """A command that only reads found no warehouse at the path it was given."""


class WarehouseLockedError(RankhouseError):
    """Another process held the DuckDB file for longer than the lock timeout."""


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` for the command line: ``Warning: <text>`` on standard error."""
    text = message.cli_text() if hasattr(message, "cli_text") else str(message)
    print(f"Warning: {text}", file=sys.stderr)


def first_line(exc: BaseException) -> str:
    """The first non-blank line of a database's error (DuckDB adds candidates, the statement
    and a caret under it; SQLAlchemy wraps the driver's error as ``orig``), else its type."""
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    return lines[0] if lines else type(orig).__name__


def env_seconds(name: str, default: float, example: str) -> float:
    """Seconds from the environment variable ``name`` (``default`` when unset or blank).

    Raises:
        RankhouseError: the value is not a number of seconds >= 0 (``nan`` included); the
            message suggests ``example`` (``"30 (0: do not wait)"``).
    """
    text = os.environ.get(name, "").strip()
    if not text:
        return float(default)
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # also refuses nan
        raise RankhouseError(f"${name} is {text!r}; write a number of seconds, e.g. {example}")
    return seconds
