"""Processes that wait for a DuckDB file take turns, first come, first served.

DuckDB lets one process write a file at a time and keeps no order among those that wait: each
retries, and whichever retries at the moment the file is free gets it. Sixteen writers
started together on one file (issue 29) finished as a batch in 41-46 s while 1-5 of them failed
after the 30 s wait on their *first* step: a process could lose every race.

The queue is a small file beside the warehouse, ``<warehouse>.queue``. Its first 16 bytes hold
two counters: the next ticket, and how many waiting processes have got the file so far. A
process that finds the file held takes the next ticket and, while it waits, holds a POSIX lock
on the byte of its ticket (exclusive for a writer, shared for a reader); the kernel releases
it when the process ends, however it ends, so a crashed waiter never blocks the queue. A
process tries DuckDB's file only when no earlier ticket is still held: a writer when no one
waits before it, a reader when no writer does (readers share the file). Once it has the file
it counts itself in the second counter and leaves the queue.

The wait is bounded (:func:`~.locking.connect_waiting`): a process fails when no waiting
process got the file for ``$RANKHOUSE_LOCK_TIMEOUT`` seconds, i.e. when one process held it that
long, not when the queue is merely long.

Where the queue file cannot be opened (a folder this user may not write, a system without
``fcntl``), processes wait as DuckDB lets them, without an order.
"""

from __future__ import annotations

import os
import struct
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # not a POSIX system: no queue
    fcntl = None

#: The counters at the start of the queue file: next ticket, waiters served (little-endian).
_COUNTERS = struct.Struct("<QQ")
#: Where the tickets' bytes begin.
_TICKETS = _COUNTERS.size

#: One descriptor per queue file and process: closing any descriptor of a file drops every
#: POSIX lock the process holds on it, so threads waiting on one warehouse share it.
_OPEN: dict[tuple[int, str], list] = {}
_OPEN_LOCK = threading.Lock()
#: This process's tickets in each queue file, and whether each is a reader's.
_OWN: dict[str, dict[int, bool]] = {}


def queue_path(path: Path | str) -> Path:
    """The queue file of the warehouse ``path``."""
    return Path(f"{path}.queue")


class Queue:
    """This process's place in the queue of a warehouse file (see the module).

    Args:
        path: the warehouse file.
        shared: a reader, which may have the file together with other readers.
    """

    def __init__(self, path: Path | str, *, shared: bool) -> None:
        self.name = str(queue_path(path))
        self.shared = shared
        self.fd = _descriptor(self.name)
        try:
            with self._counters_locked(fcntl.LOCK_EX):
                ticket, served = self._read()
                os.pwrite(self.fd, _COUNTERS.pack(ticket + 1, served), 0)
                self.ticket = ticket
                self._lock(fcntl.LOCK_SH if shared else fcntl.LOCK_EX, 1, _TICKETS + ticket)
                _OWN.setdefault(self.name, {})[ticket] = shared
        except BaseException:
            _release(self.name)
            raise

    def my_turn(self) -> bool:
        """Whether no earlier ticket that this one must wait for is still held."""
        return self.ticket == 0 or _free(self.name, self.fd, self.shared, _TICKETS, self.ticket)

    def served(self) -> int:
        """How many waiting processes have got the file so far."""
        with self._counters_locked(fcntl.LOCK_SH):
            return self._read()[1]

    def leave(self, *, got_it: bool) -> None:
        """Leave the queue (counted as served when the process got the file)."""
        try:
            if got_it:
                with self._counters_locked(fcntl.LOCK_EX):
                    ticket, served = self._read()
                    os.pwrite(self.fd, _COUNTERS.pack(ticket, served + 1), 0)
            self._lock(fcntl.LOCK_UN, 1, _TICKETS + self.ticket)
        finally:
            _OWN.get(self.name, {}).pop(self.ticket, None)
            _release(self.name)

    def _read(self) -> tuple[int, int]:
        data = os.pread(self.fd, _COUNTERS.size, 0)
        return _COUNTERS.unpack(data.ljust(_COUNTERS.size, b"\0"))

    def _lock(self, command: int, length: int, start: int) -> None:
        fcntl.lockf(self.fd, command, length, start)

    def _counters_locked(self, command: int):
        return _Held(self, command)


class _Held:
    """The counters' bytes locked for the block (a few microseconds at a time)."""

    def __init__(self, queue: Queue, command: int) -> None:
        self.queue = queue
        self.command = command

    def __enter__(self) -> None:
        _COUNTERS_LOCK.acquire()  # POSIX locks do not keep this process's threads apart
        try:
            self.queue._lock(self.command, _COUNTERS.size, 0)
        except BaseException:
            _COUNTERS_LOCK.release()
            raise

    def __exit__(self, *exc_info: object) -> None:
        try:
            self.queue._lock(fcntl.LOCK_UN, _COUNTERS.size, 0)
        finally:
            _COUNTERS_LOCK.release()


_COUNTERS_LOCK = threading.Lock()


def someone_waits(path: Path | str, *, shared: bool) -> bool:
    """Whether another process waits in the queue of the warehouse ``path`` before which this
    one must not try the file (any waiter for a writer, a writer for a reader): a process
    that comes along then joins the queue rather than slip in when the file is free."""
    if fcntl is None or str(path) == ":memory:" or not queue_path(path).exists():
        return False
    name = str(queue_path(path))
    try:
        fd = _descriptor(name, create=False)
    except OSError:
        return False
    try:
        return not _free(name, fd, shared, _TICKETS, 0)
    except OSError:
        return False
    finally:
        _release(name)


def _free(name: str, fd: int, shared: bool, start: int, length: int) -> bool:
    """Whether no other process holds a lock on the bytes ``start`` to ``start + length``
    (``length`` 0: to the end) that conflicts with a shared (``shared``) or exclusive one.

    Asked by taking such a lock and giving it back: giving back a range also drops this
    process's own tickets in it (POSIX locks are the process's), which are taken again."""
    probe = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    try:
        fcntl.lockf(fd, probe | fcntl.LOCK_NB, length, start)
    except OSError:
        return False
    fcntl.lockf(fd, fcntl.LOCK_UN, length, start)
    for ticket, own_shared in list(_OWN.get(name, {}).items()):
        if _TICKETS + ticket >= start and (length == 0 or _TICKETS + ticket < start + length):
            fcntl.lockf(fd, fcntl.LOCK_SH if own_shared else fcntl.LOCK_EX, 1, _TICKETS + ticket)
    return True


def join(path: Path | str, *, shared: bool) -> Queue | None:
    """A place in the queue of the warehouse ``path``, or None where there can be no queue (no
    ``fcntl``, or a queue file this process may not create or write)."""
    if fcntl is None or str(path) == ":memory:":
        return None
    try:
        return Queue(path, shared=shared)
    except OSError:
        return None


def _descriptor(name: str, *, create: bool = True) -> int:
    key = (os.getpid(), name)
    with _OPEN_LOCK:
        held = _OPEN.get(key)
        if held is None:
            flags = os.O_RDWR | (os.O_CREAT if create else 0)
            held = _OPEN[key] = [os.open(name, flags, 0o666), 0]
        held[1] += 1
        return held[0]


def _release(name: str) -> None:
    key = (os.getpid(), name)
    with _OPEN_LOCK:
        held = _OPEN[key]
        held[1] -= 1
        if held[1] == 0:
            os.close(held[0])
            del _OPEN[key]
