"""Typed errors and warnings raised by the library; the CLI turns each into one line.

A message that tells the caller what to pass names a parameter the way the caller writes
it: ``order='rank'`` to a Python caller, ``--order rank`` on the command line. Such a
message is built from parts (:class:`Option`, :class:`Either`, text); ``str()`` of the
error is the Python wording and :meth:`RankhouseError.cli_text` the command line's, which
is what the CLI prints.

Every message that counts something says it through :func:`count` (or :func:`noun` where the
number is written apart), the noun agreeing with the number: ``1 query``, ``2 queries``,
``1,500 rows``; no message reads "1 queries".

Warnings about a call are reported at the caller's line, not at rankhouse's. A warning
rankhouse raises deep inside a call (a run that answers few of the qrels queries, ranks that
disagree with scores) would name the rankhouse line that raised it, and Python's ``default``
filter would then show it once per rankhouse line for the whole session. The public entry
points (``rankhouse.evaluate``, ``rankhouse.experiment``, every :class:`~rankhouse.Warehouse`
method) run under :func:`warnings_at_caller`, which collects the warnings of the call and
raises each again at the first frame outside rankhouse: the caller's line, whose filters and
once-per-line registry then apply. The command line prints them as it always did
(``Warning: ...``, :func:`show_warning`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType
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


# --- counts in words --------------------------------------------------------------------------

_SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")


def noun(number: int, singular: str, plural: str | None = None) -> str:
    """``singular`` for 1 (and -1), else ``plural`` (default: the English plural of the last
    word: ``query`` -> ``queries``, ``tied-score pair`` -> ``tied-score pairs``)."""
    if abs(number) == 1:
        return singular
    return plural if plural is not None else _plural(singular)


def count(number: int, singular: str, plural: str | None = None) -> str:
    """``number`` (thousands separated by commas) and the noun agreeing with it:
    ``count(1, "query") == "1 query"``, ``count(1500, "row") == "1,500 rows"``."""
    return f"{number:,} {noun(number, singular, plural)}"


def _plural(singular: str) -> str:
    head, space, last = singular.rpartition(" ")
    if last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        last = last[:-1] + "ies"
    elif last.endswith(_SIBILANT_ENDINGS):
        last += "es"
    else:
        last += "s"
    return head + space + last


# --- warnings at the caller's line ------------------------------------------------------------

#: Where rankhouse's modules and contextlib are, as their frames name their files (the paths
#: they were imported from) and resolved: frames there are not the caller's.
#: (os.path, not pathlib: `import rankhouse` and `rankhouse --version` import no pathlib)
_PACKAGE = tuple(
    {
        os.path.dirname(__file__) + os.sep,
        os.path.dirname(os.path.realpath(__file__)) + os.sep,
    }
)
_CONTEXTLIB = frozenset({contextlib.__file__, os.path.realpath(contextlib.__file__)})


@contextlib.contextmanager
def warnings_at_caller() -> Iterator[None]:
    """Collect the warnings raised in the block and raise them again, in order, at the
    caller's line (also when the block raises). Nested blocks hand theirs to the outermost."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            collected = list(caught)
            caught.clear()
    caller = _caller()
    for found in collected:
        if caller is None:
            warnings.warn_explicit(found.message, found.category, found.filename, found.lineno)
            continue
        module_globals = caller.f_globals
        warnings.warn_explicit(
            found.message,
            found.category,
            caller.f_code.co_filename,
            caller.f_lineno,
            module=module_globals.get("__name__", "<unknown>"),
            registry=module_globals.setdefault("__warningregistry__", {}),
            # no module_globals: its loader would be asked for the source line, and a
            # `python -c` script's (the builtin importer's) refuses to give one
        )


def _caller() -> FrameType | None:
    """The first frame on the stack that is neither rankhouse's nor contextlib's."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith(_PACKAGE) or filename in _CONTEXTLIB):
            return frame
        frame = frame.f_back
    return None
