"""The end of a ``rankhouse`` process, without the interpreter's teardown when nothing needs it.

When a command has finished, Python's own shutdown still deallocates every module and object
one by one; with DuckDB's engine loaded that is 15-18 ms, about a twentieth of a DL19
``trec-eval`` (trec_eval's whole run is 35 ms). What a command must leave behind is done
before that teardown: its warehouse closed (DuckDB's checkpoint, PostgreSQL's session ended),
its output flushed, the exit handlers run (a database opened ahead and never taken is closed
there, the engine's shared database with its spill folder).

:func:`leave` does those and ends the process with :func:`os._exit`, and only when it can
tell they are all done: no database a command opened through :mod:`rankhouse.db` is still
open, no thread other than daemon threads is running, and the output streams flushed. If any
of that does not hold, it returns and the process ends the ordinary way.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import weakref

_OPEN: weakref.WeakSet = weakref.WeakSet()
_ENDING = False


def end_with_command() -> None:
    """Say that this process ends when its command does (the console script)."""
    global _ENDING
    _ENDING = True


def ending() -> bool:
    """Whether this process ends when its command does: memory it holds at the end is the
    operating system's to take back, not the command's to free."""
    return _ENDING


def opened(database: object) -> None:
    """Note a database (:class:`rankhouse.db.DuckDB`, :class:`rankhouse.db.Server`) as open
    until :func:`closed`; one collected unclosed was closed by its own finalizer."""
    _OPEN.add(database)


def closed(database: object) -> None:
    """Note ``database`` as closed."""
    _OPEN.discard(database)


def open_databases() -> list[object]:
    """The databases noted open and not closed."""
    return list(_OPEN)


def leave(code: int | None) -> None:
    """End the process now with exit status ``code`` if nothing is left for the interpreter's
    shutdown to do; otherwise return (the caller then exits the ordinary way)."""
    if code is not None and not isinstance(code, int):
        return  # a message to print: sys.exit's own handling
    if any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return  # the interpreter would wait for them
    if _OPEN:
        return  # closing it is the teardown's work (DuckDB's checkpoint)
    atexit._run_exitfuncs()  # what the shutdown would run first; they are then forgotten
    if _OPEN:  # a handler opened one
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: the ordinary exit reports it
        return
    os._exit(code or 0)
