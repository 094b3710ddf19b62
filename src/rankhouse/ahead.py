"""A DuckDB database opened ahead, in a thread, while the command that will use it imports.

Creating a DuckDB database costs 20-30 ms (its catalogue of built-in functions), and DuckDB
releases the GIL while it works. A short command spends about 0.1 s importing its code before
it opens its database, so :mod:`rankhouse.entry` starts opening that database at once in a
thread, and the command's own open (:class:`rankhouse.db.DuckDB`, or the engine's in-memory
database) takes the connection when it asks for the same thing.

Only what the command itself would open is opened ahead, with the same settings: an existing,
non-empty DuckDB file (never a path the command might refuse to create), or the engine's
in-memory database. A connection that nobody takes is closed before the process exits; one
asked for with another key is closed before the new one opens, so a file is never open twice.
A failure ahead is forgotten: the command opens the database itself and reports what fails.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable, Hashable
from typing import Any

from .background import Background

_LOCK = threading.Lock()
_opening: Background[tuple[Hashable, Any] | None] | None = None


def open_ahead(open_database: Callable[[], tuple[Hashable, Any] | None]) -> None:
    """Start ``open_database()`` in a thread: it returns (key, connection), or None when it
    decides to open nothing; :func:`take` with an equal key gets the connection. A database
    already being opened ahead is closed first."""
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
