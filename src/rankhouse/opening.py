"""Opening a warehouse safely: is there one here, is it rankhouse's and whole, and waiting while
another process holds the DuckDB file.

These decisions are taken around the connection, not by it, so that any connection layer calls
them the same way:

* :func:`check_file`, before connecting to a DuckDB file: a command that only reads needs an
  existing warehouse (it never creates folders or an empty file); a command that writes may
  create one.
* :func:`connect_waiting`, while connecting: DuckDB lets one process write a file at a time;
  another waits up to :func:`lock_timeout` seconds, saying so once on stderr, before it fails.
* :func:`refuse_foreign` and :func:`check_complete`, just after connecting (with the names
  :func:`object_names` finds): a database of another application is never migrated, and a
  warehouse lacking a table or view of its schema is reported as damaged.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import TypeVar

from .errors import NoWarehouseError, RankhouseError, SchemaError, WarehouseLockedError

#: Seconds a process waits for another one's lock on a DuckDB file (``$RANKHOUSE_LOCK_TIMEOUT``).
DEFAULT_LOCK_TIMEOUT = 30.0
LOCK_TIMEOUT_ENV = "RANKHOUSE_LOCK_TIMEOUT"

#: The tables and views of the warehouse's own schema, on DuckDB and PostgreSQL alike.
OBJECTS_QUERY = (
    "SELECT table_name FROM information_schema.tables "
    "WHERE table_schema = current_schema() AND table_catalog = current_database()"
)


def object_names(conn, dialect: str) -> list[str]:
    """The tables and views of the warehouse's own schema, in lower case.

    On DuckDB, a warehouse holding every object of the newest schema is recognised by one
    statement that names them all and reads nothing. Listing the catalogue with
    :data:`OBJECTS_QUERY` would make DuckDB build its system views first: 10-15 ms at the
    first query of a process, a twentieth of an ``eval`` served from storage. When that
    statement does not bind (an object is missing: a new, older, damaged or foreign
    database), the catalogue is listed.
    """
    if dialect == "duckdb":
        from .duck import duckdb

        expected = sorted(expected_objects(dialect))
        try:
            conn.execute_raw(f"SELECT 1 FROM {', '.join(expected)} LIMIT 0")
        except duckdb.Error:
            pass
        else:
            return expected
    return [row[0].lower() for row in conn.execute(OBJECTS_QUERY)]


def holds_nothing(conn) -> bool:
    """Whether the DuckDB file under ``conn`` holds nothing at all: no block written and
    nothing in its write-ahead log, as a file DuckDB has just created.

    Asked of DuckDB's storage rather than its catalogue: on a new file, the statement that
    :func:`object_names` tries first fails, and a failed name lookup, like a first listing of
    the catalogue, costs DuckDB about 10 ms. Only for a file: an in-memory database reports
    no blocks whatever it holds.
    """
    blocks, wal = conn.execute_raw(
        "SELECT total_blocks, wal_size FROM pragma_database_size() "
        "WHERE database_name = current_database()"
    ).one()
    return blocks == 0 and wal == "0 bytes"


_LOCK_CONFLICT = "Could not set lock on file"
_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (.*?)(?: \(PID (\d+)\))?(?:\. See also|$)")

T = TypeVar("T")


def check_file(path: Path, *, create: bool) -> None:
    """Check a DuckDB warehouse path before connecting; with ``create``, make its folder.

    Raises:
        NoWarehouseError: no file at ``path`` and ``create`` is false.
        RankhouseError: ``path`` is a folder, or an empty file (not a DuckDB database).
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
    if path.stat().st_size == 0:  # DuckDB refuses it; deleting it could race a creating process
        raise RankhouseError(
            f"{path} is an empty file, not a DuckDB database; delete it or name a new path"
        )


def lock_timeout() -> float:
    """Seconds to wait for a locked DuckDB file: ``$RANKHOUSE_LOCK_TIMEOUT``, else 30."""
    text = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_LOCK_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # also refuses nan
        raise RankhouseError(
            f"${LOCK_TIMEOUT_ENV} is {text!r}; write a number of seconds, e.g. 30 (0: do not wait)"
        )
    return seconds


def is_lock_conflict(exc: BaseException) -> bool:
    """Whether a connection error says that another process holds the DuckDB file."""
    return _LOCK_CONFLICT in str(exc)


def connect_waiting(
    connect: Callable[[], T],
    path: Path | str,
    *,
    timeout: float | None = None,
    notify: Callable[[str], None] | None = None,
) -> T:
    """``connect()``, retried while another process holds the file's lock.

    Waits up to ``timeout`` seconds (default :func:`lock_timeout`), calling ``notify`` (default:
    a line on stderr) once when it starts waiting. Errors other than a lock conflict pass
    through at once.

    Raises:
        WarehouseLockedError: the file was still locked when the time was up.
    """
    limit = lock_timeout() if timeout is None else timeout
    notify = notify or _say_on_stderr
    deadline = time.monotonic() + limit
    pause = 0.05
    waiting = False
    while True:
        try:
            return connect()
        except Exception as exc:
            if not is_lock_conflict(exc):
                raise
            if time.monotonic() >= deadline:
                raise WarehouseLockedError(_locked_message(path, exc, limit)) from None
            if not waiting and limit > 0:
                notify(
                    f"waiting for {path}, which another process holds ({_holder(exc)}): "
                    f"up to {limit:g} s (${LOCK_TIMEOUT_ENV})"
                )
                waiting = True
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.5)


def _say_on_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _holder(exc: BaseException) -> str:
    """``python3.11, PID 123`` from DuckDB's message, or what it says."""
    match = _LOCK_HOLDER.search(str(exc))
    if match is None:
        return "process unknown"
    program = Path(match.group(1).strip()).name or match.group(1)
    return f"{program}, PID {match.group(2)}" if match.group(2) else program


def _locked_message(path: Path | str, exc: BaseException, waited: float) -> str:
    return (
        f"the warehouse {path} is in use by another process ({_holder(exc)}) and stayed locked "
        f"for {waited:g} s; a DuckDB file takes one writing process at a time: run again when "
        f"it has finished, wait longer with ${LOCK_TIMEOUT_ENV}=SECONDS, or share a PostgreSQL "
        "warehouse"
    )


def refuse_foreign(where: str, names: Iterable[str]) -> None:
    """Refuse a DuckDB database that holds tables but no rankhouse schema (another application's
    file): rankhouse never adds its tables to it. An empty database is fine to initialise.

    Raises:
        SchemaError: ``names`` (the database's tables and views) lack ``schema_migrations`` but
            are not empty.
    """
    names = sorted(set(names))
    if not names or "schema_migrations" in names:
        return
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    raise SchemaError(
        f"{where} is not a rankhouse warehouse: it holds {len(names)} other tables or views "
        f"({shown}) and no schema_migrations table; rankhouse does not add its tables to another "
        "application's database: name a new file with --db"
    )


def check_complete(where: str, names: Iterable[str], dialect: str = "duckdb") -> None:
    """Report a warehouse at the newest schema version that lacks one of its tables or views.

    Raises:
        SchemaError: a table or view the migrations create is missing (dropped by hand).
    """
    missing = sorted(expected_objects(dialect) - set(names))
    if missing:
        raise SchemaError(
            f"the warehouse {where} is damaged: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing from its schema (dropped outside "
            "rankhouse?); restore the file from a copy, or ingest again into a new warehouse"
        )


_CREATE = re.compile(
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I
)
_DROP = re.compile(r"DROP\s+(?:TABLE|VIEW)\s+(?:IF\s+EXISTS\s+)?(\w+)", re.I)
_RENAME = re.compile(r"ALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)", re.I)


@cache
def expected_objects(dialect: str = "duckdb") -> frozenset[str]:
    """The tables and views a warehouse holds once every known migration is applied."""
    from .schema import known_migrations

    names = {"schema_migrations"}
    for migration in known_migrations(dialect):
        for statement in migration.statements():
            if created := _CREATE.match(statement):
                names.add(created.group(1).lower())
            elif dropped := _DROP.match(statement):
                names.discard(dropped.group(1).lower())
            elif renamed := _RENAME.match(statement):
                names.discard(renamed.group(1).lower())
                names.add(renamed.group(2).lower())
    return frozenset(names)
