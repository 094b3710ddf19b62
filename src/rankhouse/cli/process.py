"""What the console script does around a command: where the command is in its command line,
how a short command starts and ends sooner, and what a command that stops early prints.

These mechanisms live here, in the command line's layer; the library knows none of them. The
library opens every DuckDB database through :func:`rankhouse.duck.open_database`, and this
module installs the connector that serves it (:func:`install`). What it needs of the library it
imports inside its functions, when a command opens a database: ``--help`` imports none of it.

* **Where the command is** (:func:`split_command`): past the global options ``--db`` and
  ``--read-only``; both the console script and the Typer app look.
* **Opening ahead.** Creating a DuckDB database costs 20-30 ms (its catalogue of built-in
  functions), and DuckDB releases the GIL while it works; a short command spends about 0.1 s
  importing its code before it opens its database. So :func:`open_ahead` starts opening that
  database in a thread at once (what to open is decided before, in the command's thread:
  :func:`warehouse_opener`), and the command's own open takes the connection when it
  asks for the same thing (the same key). Only what the command itself would open is opened
  ahead, with the same settings: an existing, non-empty DuckDB warehouse file (never a path
  the command might refuse to create), or the engine's in-memory database for trec-eval. A
  connection that nobody takes is closed before the process exits; a failure ahead is
  forgotten (the command opens the database itself and reports what fails).
* **Leaving.** When a command has finished, Python's own shutdown still deallocates every
  module and object one by one; with DuckDB's engine loaded that is 15-18 ms, about a
  twentieth of a DL19 ``trec-eval``. :func:`leave` ends the process with :func:`os._exit`
  instead, and only when nothing is left for that shutdown to do: no thread other than
  daemon threads running, every DuckDB connection the connector handed out closed (DuckDB
  has written its checkpoint), the exit handlers run and the output flushed. A connection
  to a file opened read-only has nothing to write: closing it is 5-12 ms of DuckDB's
  teardown, so a reading command run as the console script (:data:`console`) leaves it
  open, and the process's end lets the file go.

What a command that stops early prints: one line on stderr, never a traceback.

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
import atexit
import contextlib
import os
import signal
import sys
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any

from ..defaults import DB_ENV_VAR
from ..lazy import Background

# --- where the command is ---------------------------------------------------------------------


def split_command(args: list[str]) -> tuple[str | None, bool, int] | None:
    """(--db, --read-only, the command's position in ``args``) when the global options before
    the command are plain ``--db VALUE`` / ``--db=VALUE`` / ``--read-only``; else None (no
    command, or an option only Typer knows: ``--help``, ``--version``, a misspelling)."""
    db, read_only = None, False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--read-only":
            read_only = True
        elif arg == "--db" and i + 1 < len(args):
            db = args[i + 1]
            i += 1
        elif arg.startswith("--db="):
            db = arg[len("--db=") :]
        elif arg.startswith("-"):
            return None
        else:
            return db, read_only, i
        i += 1
    return None


# --- the connector ----------------------------------------------------------------------------

_LOCK = threading.Lock()
_opening: Background[tuple[Hashable, Any] | None] | None = None
#: Every connection the connector handed out, to check at the end that each was closed.
_HANDED_OUT: weakref.WeakSet = weakref.WeakSet()
#: Those of them that are read-only warehouse files: open or closed, nothing is lost.
_READ_ONLY: weakref.WeakSet = weakref.WeakSet()

#: Whether this process is the console script, which ends by :func:`leave` once its one
#: command is done (set by :func:`rankhouse.cli.entry.main`; False when a caller runs
#: commands in its own process).
console = False


def install() -> None:
    """Serve the library's DuckDB connections through :func:`connector`."""
    from ..duck import set_connector

    set_connector(connector)


def connector(key: Hashable, make: Callable[[], Any]) -> Any:
    """The connection opened ahead for ``key``, else ``make()``; noted for :func:`leave`."""
    connection = take(key)
    if connection is None:
        connection = make()
    _HANDED_OUT.add(connection)
    if isinstance(key, tuple) and key[:1] == ("duckdb",) and key[2]:  # store.database_key
        _READ_ONLY.add(connection)
    return connection


# --- opening ahead ----------------------------------------------------------------------------


def open_ahead(open_database: Callable[[], tuple[Hashable, Any] | None]) -> None:
    """Start ``open_database()`` in a thread: it returns (key, connection), or None when it
    decides to open nothing; :func:`take` with an equal key gets the connection. A database
    already being opened ahead is closed first. ``open_database`` should leave Python's lock
    to the command (DuckDB's work does): what imports or decides belongs before this call
    (:func:`warehouse_opener`)."""
    global _opening
    discard()
    with _LOCK:
        # not a daemon: the interpreter waits for it rather than stop it inside DuckDB
        _opening = Background(open_database, "rankhouse-open-ahead")


def take(key: Hashable) -> Any | None:
    """The connection opened ahead for ``key`` (waiting for it), or None: nothing was opened
    ahead, it failed, or it was opened for another key (then it is closed first)."""
    global _opening
    with _LOCK:
        opening, _opening = _opening, None
    if opening is None:
        return None
    try:
        opened = opening.result()
    except Exception:  # the command opens it again itself and reports the problem
        return None
    if opened is None:
        return None
    opened_key, connection = opened
    if opened_key != key:
        connection.close()
        return None
    return connection


@atexit.register
def discard() -> None:
    """Close a connection opened ahead that no command took."""
    take(object())


def warehouse_file(db: str | None, read_only: bool) -> tuple[tuple, Any] | None:
    """Open the warehouse file ``db`` names as the command will: (its key, the connection),
    or None when ``db`` is no existing, non-empty DuckDB file (:func:`warehouse_opener`,
    then its opening)."""
    opener = warehouse_opener(db, read_only)
    return opener() if opener is not None else None


def warehouse_opener(db: str | None, read_only: bool) -> Callable[[], Any] | None:
    """What opens the warehouse file ``db`` names as the command will, for
    :func:`open_ahead`: a function that returns (its key, the connection), or None when ``db``
    is no existing, non-empty DuckDB file.

    Deciding runs here, in the caller's thread: the imports and the checks of the file (is
    it a DuckDB file, does another process wait for it) hold Python's lock, and in the
    opening thread they would wait behind the command's own imports (the file then opened
    40 ms later). What the function returned does is DuckDB's work, which lets go of that
    lock: it opens the file and makes the store's check on opening
    (:func:`~rankhouse.backends.duckdb_file.store.open_checked`). For a file that does not
    exist yet, nothing is opened, but DuckDB is set up: its first database in a process costs
    10-15 ms more than the next (a new file: 25 ms against 14), and the command that creates
    the file then pays that there, while it imports.
    """
    from pathlib import Path

    from ..backends import duckdb_path, resolve_target
    from ..backends.duckdb_file import store
    from ..backends.duckdb_file.locking import file_kind, someone_waits
    from ..defaults import DUCKDB_CONFIG
    from ..duck import duckdb

    path = duckdb_path(resolve_target(db))
    if path is None or path == ":memory:":
        return None
    if not os.path.exists(path):
        return lambda: duckdb.connect(":memory:", config=DUCKDB_CONFIG).close()
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        return None
    if file_kind(Path(path)) is not None:  # the command refuses it; DuckDB never opens it
        return None
    if someone_waits(path, shared=read_only):  # the command waits in turn behind them
        return None
    config = store.duckdb_config(read_only)
    key = store.database_key(path, read_only, config)
    return lambda: (key, store.open_checked(path, read_only, config))


def trec_eval_database(db: str | None, read_only: bool) -> tuple[tuple, Any] | None:
    """What ``trec-eval`` opens: (its key, the connection), or None (:func:`trec_eval_opener`,
    then its opening)."""
    opener = trec_eval_opener(db, read_only)
    return opener() if opener is not None else None


def trec_eval_opener(db: str | None, read_only: bool) -> Callable[[], Any] | None:
    """What opens ``trec-eval``'s database, for :func:`open_ahead`: the engine's in-memory
    database when nothing is kept, else the warehouse file (:func:`warehouse_opener`)."""
    from ..duck import key as scratch_key
    from ..duck import memory_limit, new_database

    db = db if db is not None else os.environ.get(DB_ENV_VAR)
    if read_only or not db or db == ":memory:":
        limit = memory_limit()
        return lambda: (scratch_key(limit), new_database(limit))
    return warehouse_opener(db, False)


# --- leaving ----------------------------------------------------------------------------------


def leave(code: int | None) -> None:
    """End the process now with exit status ``code`` if nothing is left for the interpreter's
    shutdown to do; otherwise return (the caller then exits the ordinary way)."""
    if code is not None and not isinstance(code, int):
        return  # a message to print: sys.exit's own handling
    if any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return  # the interpreter would wait for them
    if _any_open():
        return  # closing it is the teardown's work (DuckDB's checkpoint)
    atexit._run_exitfuncs()  # what the shutdown would run first; they are then forgotten
    if _any_open():  # a handler opened one
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: the ordinary exit reports it
        return
    os._exit(code or 0)


def _any_open() -> bool:
    return any(is_open(c) for c in list(_HANDED_OUT) if c not in _READ_ONLY)


def is_open(connection: Any) -> bool:
    """Whether a DuckDB connection is still open (a closed one refuses every statement)."""
    from ..duck import duckdb

    try:
        connection.execute("SELECT 1")
    except duckdb.ConnectionException:
        return False
    except duckdb.Error:  # open, but in a failed state: not ours to end
        return True
    return True


# --- failures and interrupts ------------------------------------------------------------------

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
