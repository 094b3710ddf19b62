"""Opening a DuckDB file: is there one to open here, and waiting while another process holds it.

* :func:`check_file`, before connecting: a command that only reads needs an existing
  warehouse (it never creates folders or an empty file); a command that writes may create one.
* :func:`connect_waiting`, while connecting: DuckDB lets one process write a file at a time;
  the others wait in turn (:class:`Queue`), saying so once on stderr, and fail when one
  process has kept the file for :func:`lock_timeout` seconds.
* :func:`file_state`, around each opening: has the file changed since this process closed it
  (then its schema is checked again)?

**Processes that wait for a file take turns, first come, first served.** DuckDB keeps no
order among those that wait: each retries, and whichever retries at the moment the file is
free gets it. Sixteen writers started together on one file (issue 29) finished as a batch in
41-46 s while 1-5 of them failed after the 30 s wait on their *first* step: a process could
lose every race.

The queue is a small file beside the warehouse, ``<warehouse>.queue``. Its first 16 bytes hold
two counters: the next ticket, and how many waiting processes have got the file so far. A
process that finds the file held takes the next ticket and, while it waits, holds a POSIX lock
on the byte of its ticket (exclusive for a writer, shared for a reader); the kernel releases
it when the process ends, however it ends, so a crashed waiter never blocks the queue. A
process tries DuckDB's file only when no earlier ticket is still held: a writer when no one
waits before it, a reader when no writer does (readers share the file). Once it has the file
it counts itself in the second counter and leaves the queue.

The wait is bounded (:func:`connect_waiting`): a process fails when no waiting process got
the file for ``$RANKHOUSE_LOCK_TIMEOUT`` seconds, i.e. when one process held it that long, not
when the queue is merely long. Where the queue file cannot be opened (a folder this user may
not write, a system without ``fcntl``), processes wait as DuckDB lets them, without an order.
"""

from __future__ import annotations

import os
import re
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ...errors import (
    NoWarehouseError,
    RankhouseError,
    SchemaError,
    WarehouseLockedError,
    env_seconds,
)

try:
    import fcntl
except ImportError:  # not a POSIX system: no queue
    fcntl = None

#: Seconds a process waits for another one's lock on a DuckDB file (``$RANKHOUSE_LOCK_TIMEOUT``).
DEFAULT_LOCK_TIMEOUT = 30.0
LOCK_TIMEOUT_ENV = "RANKHOUSE_LOCK_TIMEOUT"

_LOCK_CONFLICT = "Could not set lock on file"
_LOCK_HOLDER = re.compile(
    r"Conflicting lock is held in (.*?)(?: \(PID (\d+)\)(?: by user [^.]*)?)?"
    r"(?:\. However|\. See also|$)"
)
#: DuckDB's words when the process that holds the file holds it read-only (its advice, "the
#: -readonly parameter in the CLI", is the duckdb shell's, not rankhouse's).
_HELD_BY_READER = "open this database in read-only mode"

T = TypeVar("T")


def check_file(path: Path, *, create: bool) -> None:
    """Check a DuckDB warehouse path before connecting; with ``create``, make its folder.

    Raises:
        NoWarehouseError: no file at ``path`` and ``create`` is false.
        RankhouseError: ``path`` is a folder, or an empty file (not a DuckDB database).
        SchemaError: ``path`` is another kind of file (a SQLite database, ...).
    """
    if path.is_dir():
        raise RankhouseError(f"{path} is a folder; name a warehouse file, e.g. {path}/w.duckdb")
    if not path.exists():
        if not create:
            raise NoWarehouseError(
                f"no warehouse at {path}; ingest qrels or a run to create one "
                "(rankhouse ingest qrels FILE), or name another with --db or $RANKHOUSE_DB"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        return
    if path.stat().st_size == 0 and not _filled_by_its_creator(path):
        # DuckDB refuses an empty file; deleting it could race a creating process
        raise RankhouseError(
            f"{path} is an empty file, not a DuckDB database; delete it or name a new path"
        )
    kind = file_kind(path)
    if kind is not None:  # DuckDB would ask for an extension to read it: never opened
        what = f"is {kind}, not a DuckDB database" if kind else "is not a DuckDB database"
        raise SchemaError(
            f"{path} {what}: a warehouse is a DuckDB file (or a PostgreSQL server); name a "
            "new file with --db"
        )


#: How long an empty file that was just made may take to get DuckDB's header: another process
#: creating the warehouse has made the file and not yet written it (seen with 16 writers).
_CREATING_SECONDS = 2.0


def _filled_by_its_creator(path: Path) -> bool:
    """Whether an empty file made in the last few seconds gets content within a few seconds
    (another process is creating the warehouse there); an older empty file is just empty."""
    try:
        if time.time() - path.stat().st_mtime > _CREATING_SECONDS:
            return False
        deadline = time.monotonic() + _CREATING_SECONDS
        while time.monotonic() < deadline:
            time.sleep(0.02)
            if path.stat().st_size > 0:
                return True
    except FileNotFoundError:  # the creator gave up and removed it
        return False
    return False


#: The bytes at offset 8 of every DuckDB database file (after the header's checksum).
DUCKDB_MAGIC = b"DUCK"
#: How other files that DuckDB (with an extension) would open begin, and what they are.
_OTHER_FILES = (
    (b"SQLite format 3\x00", "a SQLite database"),
    (b"PAR1", "a Parquet file"),
    (b"\x1f\x8b", "a gzip file"),
)


def file_kind(path: Path) -> str | None:
    """What a non-empty file that is not a DuckDB database is (``"a SQLite database"``, or
    ``""`` when its first bytes do not say), or None for a DuckDB database. Read from its first
    bytes, before DuckDB opens it: given a SQLite file, DuckDB would load (or download) its
    SQLite extension to read it."""
    with path.open("rb") as file:
        head = file.read(16)
    if head[8:12] == DUCKDB_MAGIC:
        return None
    return next((kind for magic, kind in _OTHER_FILES if head.startswith(magic)), "")


def lock_timeout() -> float:
    """Seconds to wait for a locked DuckDB file: ``$RANKHOUSE_LOCK_TIMEOUT``, else 30."""
    return env_seconds(LOCK_TIMEOUT_ENV, DEFAULT_LOCK_TIMEOUT, "30 (0: do not wait)")


def is_lock_conflict(exc: BaseException) -> bool:
    """Whether a connection error says that another process holds the DuckDB file."""
    return _LOCK_CONFLICT in str(exc)


def connect_waiting(
    connect: Callable[[], T],
    path: Path | str,
    *,
    timeout: float | None = None,
    notify: Callable[[str], None] | None = None,
    read_only: bool = False,
) -> T:
    """``connect()``, retried while another process holds the file's lock, in turn with the
    other processes that wait for it (:class:`Queue`: first come, first served; readers
    together).

    Fails when no waiting process got the file for ``timeout`` seconds (default
    :func:`lock_timeout`): one process held it that long. Calls ``notify`` (default: a line on
    stderr) once when it starts waiting. Errors other than a lock conflict pass through at
    once.

    Raises:
        WarehouseLockedError: the file was held for the whole wait.
    """
    limit = lock_timeout() if timeout is None else timeout
    notify = notify or _say_on_stderr
    held = None
    if not someone_waits(path, shared=read_only):
        try:
            return connect()  # the file is free, or held: then wait in turn
        except Exception as exc:
            if not is_lock_conflict(exc):
                raise
            held = exc
    place = join(path, shared=read_only)
    got_it = False
    try:
        connection = _wait_in_turn(connect, path, place, held, limit, notify)
        got_it = True
        return connection
    finally:
        if place is not None:
            place.leave(got_it=got_it)


def _wait_in_turn(connect, path, place, held, limit, notify):
    """Try the file whenever it is this process's turn, until no waiter got it for ``limit``
    seconds (then once more, whatever the turn)."""
    served = place.served() if place is not None else None
    moved = time.monotonic()
    pause = 0.01
    said = False
    while True:
        turn = place is None or place.my_turn()
        if turn or time.monotonic() - moved >= limit:
            try:
                return connect()
            except Exception as exc:
                if not is_lock_conflict(exc):
                    raise
                held = exc
            if time.monotonic() - moved >= limit:
                raise WarehouseLockedError(_locked_message(path, held, limit)) from None
        if not said and limit > 0:
            notify(_waiting_message(path, held if turn else None, limit))
            said = True
        if place is not None and (now_served := place.served()) != served:
            served, moved = now_served, time.monotonic()
        left = limit - (time.monotonic() - moved)
        time.sleep(max(0.0, min(pause, left)))
        pause = min(pause * 2, 0.1 if turn else 0.25)


def _waiting_message(path: Path | str, held: BaseException | None, limit: float) -> str:
    if held is not None:  # this process is next: it waits for the one that holds the file
        return (
            f"waiting for {path}, which another process holds ({_holder(held)}): up to "
            f"{limit:g} s (${LOCK_TIMEOUT_ENV})"
        )
    return (
        f"waiting for {path} in turn behind other processes: up to {limit:g} s for each "
        f"(${LOCK_TIMEOUT_ENV})"
    )


def _say_on_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _holder(exc: BaseException) -> str:
    """``python3.11, PID 123`` from DuckDB's message (``..., reading it`` when that process
    holds the file read-only), or what it says."""
    text = str(exc)
    match = _LOCK_HOLDER.search(text)
    if match is None:
        return "process unknown"
    program = Path(match.group(1).strip()).name or match.group(1)
    holder = f"{program}, PID {match.group(2)}" if match.group(2) else program
    return f"{holder}, reading it" if _HELD_BY_READER in text else holder


def _locked_message(path: Path | str, exc: BaseException, waited: float) -> str:
    if _HELD_BY_READER in str(exc):  # this process wants to write; readers share the file
        return (
            f"the warehouse {path} is in use by another process ({_holder(exc)}) and stayed "
            f"locked for {waited:g} s; a DuckDB file is read by many processes or written by "
            "one, and this command writes: run it when that process has finished, wait longer "
            f"with ${LOCK_TIMEOUT_ENV}=SECONDS, or share a PostgreSQL warehouse (commands that "
            "only read, such as runs list, history and sql, run beside a reader)"
        )
    return (
        f"the warehouse {path} is in use by another process ({_holder(exc)}) and stayed locked "
        f"for {waited:g} s; a DuckDB file takes one writing process at a time: run again when "
        f"it has finished, wait longer with ${LOCK_TIMEOUT_ENV}=SECONDS, or share a PostgreSQL "
        "warehouse"
    )


def file_state(path: Path | str) -> tuple | None:
    """What says that a DuckDB file changed: its device, inode, size and modification time,
    and its write-ahead log's (None: no file). Another process that writes the file, replaces
    it or leaves a log behind changes it; a store compares it with the state it noted when it
    closed the file to decide whether to check the schema again."""
    found = []
    for name in (str(path), f"{path}.wal"):
        try:
            st = os.stat(name)
        except FileNotFoundError:
            found.append(None)
            continue
        found.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return None if found[0] is None else tuple(found)


# --- the queue of the processes waiting for a file ------------------------------------------------


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
