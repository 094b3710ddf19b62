"""What a command that stops early prints: one line on stderr, never a traceback.

* A library error (:class:`~rankhouse.errors.RankhouseError`) is its own message.
* An error of the machine (a file the system refuses, memory it does not give) is named with
  what it concerns.
* Anything else is a bug in rankhouse: one line says so and names the exception;
  ``RANKHOUSE_TRACEBACK=1`` prints the traceback too, for the bug report.
* **Ctrl-C** (SIGINT) ends the command with ``Interrupted`` and exit status 130, whatever the
  interrupted code turned the signal into: Python raises ``KeyboardInterrupt``, DuckDB stops
  its query and raises its own error (``Query interrupted``), a backend may wrap that in a
  :class:`~rankhouse.errors.DatabaseError`. :func:`watch_interrupts` notes that the signal
  came, so that whichever exception arrives is read as the interruption it is. Each step
  that writes is one transaction, so the step under way is rolled back.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading

EXIT_INTERRUPTED = 130
"""The shell's status for a command ended by SIGINT (128 + 2)."""

TRACEBACK_ENV = "RANKHOUSE_TRACEBACK"
"""Set to 1 to print the traceback of an unexpected error."""

INTERRUPTED = (
    "Interrupted: the warehouse is intact (the step under way was rolled back; what finished "
    "before it stays stored)"
)

_interrupted = False


def watch_interrupts() -> None:
    """Note each SIGINT before Python turns it into ``KeyboardInterrupt`` (when SIGINT has
    Python's default handler: a shell that runs the command in the background ignores it)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_interrupt)
        sys.unraisablehook = _unraisable_but_interrupts


def _unraisable_but_interrupts(unraisable, report=sys.unraisablehook) -> None:
    """Python's report of an exception it cannot raise (one in a callback of the garbage
    collector or of the import lock), except a KeyboardInterrupt: that one is delivered again
    to the main thread, where it can be raised and the step under way rolled back (never the
    traceback, and never a command that goes on to finish and then says it was interrupted)."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        _thread.interrupt_main()
        return
    report(unraisable)


def _on_interrupt(signum, frame) -> None:
    global _interrupted
    _interrupted = True
    signal.default_int_handler(signum, frame)


def interrupted(exc: BaseException | None = None) -> bool:
    """Whether the command was interrupted (SIGINT came, or ``exc`` is KeyboardInterrupt)."""
    return _interrupted or isinstance(exc, KeyboardInterrupt)


def leave_interrupted() -> None:
    """Say that the command was interrupted, and exit 130.

    A thread still at work (reading a file in DuckDB beside the main thread) would meet the
    interpreter's shutdown inside DuckDB's C++ code, which aborts the process ("FATAL:
    exception not rethrown"); with such a thread alive the process ends at once instead. The
    warehouse is safe either way: what was not committed is not in it, and a waiter's place in
    the file's queue goes with the process.
    """
    print(INTERRUPTED, file=sys.stderr)
    if threading.active_count() > 1:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(EXIT_INTERRUPTED)
    sys.exit(EXIT_INTERRUPTED)


def failure_text(exc: BaseException) -> str:
    """One line (after ``Error: ``) for an exception that ended a command."""
    from ..errors import RankhouseError

    if isinstance(exc, RankhouseError):
        return exc.cli_text()
    if isinstance(exc, MemoryError):
        return (
            "out of memory: the machine could not give the command the memory it asked for "
            "(lower RANKHOUSE_MEMORY_LIMIT, or work on a smaller input)"
        )
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror[0].lower()}{exc.strerror[1:]}"
    if os.environ.get(TRACEBACK_ENV) == "1":
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    text = str(exc).strip().splitlines()
    detail = f": {text[0]}" if text else ""
    return (
        f"internal error ({type(exc).__name__}{detail}): a bug in rankhouse; please report it "
        f"with the command line ({TRACEBACK_ENV}=1 prints where it happened)"
    )
