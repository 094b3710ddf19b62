"""Advisory locks: how writers to one server take turns on a name, a content, an evaluation
or the schema, each wait bounded.

A key is the first 8 bytes of the SHA-256 of a text that says what it guards
(``evaluations:RUN:QRELS``, ``name:runs:NAME``, ``content:...``). The keys are predictable, and
PostgreSQL lets any login take any advisory lock: an analyst's session holding one would keep
every writer that needs it waiting. A secret per warehouse would have to live where writers,
and so the server's administrators and anyone who reads the writers' configuration, read it;
rather, every wait is bounded by the session's ``lock_timeout`` (:mod:`.settings`), after which
the writer fails in one line naming the lock and the session that held it, and
docs/scaling.md's role setup revokes the advisory lock functions from every login but the
warehouse's writers.
"""

from __future__ import annotations

import hashlib

from ...errors import WarehouseLockedError
from ...lazy import psycopg
from ...lazy import sqlalchemy as sa
from .connection import ServerConnection
from .settings import LOCK_TIMEOUT_ENV


def key_number(key: str) -> int:
    """The advisory lock key (a signed 64-bit integer) of the text ``key``."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)


def lock(conn: ServerConnection, keys: list[str]) -> None:
    """Advisory locks on ``keys`` for the rest of the transaction of ``conn``, always taken in
    the same order (no deadlock between two writers).

    Raises:
        WarehouseLockedError: another session held one for longer than ``lock_timeout``.
    """
    for key in sorted(set(keys)):
        take(conn, key_number(key), _what(key), session=False)


def take(conn: ServerConnection, number: int, what: str, *, session: bool) -> None:
    """The advisory lock ``number`` (for the session, or the rest of the transaction), waited
    for up to the session's ``lock_timeout``.

    Raises:
        WarehouseLockedError: another session held it for the whole wait (the message says
            ``what`` it guards and which session held it).
    """
    scope = "" if session else "_xact"
    if conn.execute(f"SELECT pg_try_advisory{scope}_lock(:k)", {"k": number}).scalar():
        return
    holder, waited = _holder(conn, number)
    try:
        conn.execute(f"SELECT pg_advisory{scope}_lock(:k)", {"k": number})
    except sa.exc.DBAPIError as exc:
        if not isinstance(exc.orig, psycopg.errors.LockNotAvailable):
            raise
        raise WarehouseLockedError(
            f"waited {waited} for {what}, which another session holds ({holder}): run again "
            f"when it has finished, or wait longer with ${LOCK_TIMEOUT_ENV}=SECONDS"
        ) from None


_HOLDER = """
SELECT a.pid, a.usename, a.application_name, current_setting('lock_timeout') AS waited
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = CAST(:high AS oid) AND l.objid = CAST(:low AS oid)
"""


def _holder(conn: ServerConnection, number: int) -> tuple[str, str]:
    """Which session holds the lock ``number`` (``PID 123, login analyst``), and the wait the
    session will grant it (its ``lock_timeout``)."""
    unsigned = number & 0xFFFF_FFFF_FFFF_FFFF
    found = conn.execute(_HOLDER, {"high": unsigned >> 32, "low": unsigned & 0xFFFF_FFFF}).first()
    if found is None:
        waited = conn.execute("SELECT current_setting('lock_timeout')").scalar()
        return "a session that has since gone", waited
    program = f", {found.application_name}" if found.application_name else ""
    return f"PID {found.pid}, login {found.usename}{program}", found.waited


def _what(key: str) -> str:
    """What the lock ``key`` guards, in words."""
    kind, _, rest = key.partition(":")
    if kind == "evaluations":
        run_id, _, qrels_id = rest.partition(":")
        return f"the lock on the evaluations of run {run_id} against qrels set {qrels_id}"
    if kind == "name":
        table, _, name = rest.partition(":")
        return f"the lock on the name {name!r} of the {table}"
    if kind == "content":
        what, _, digest = rest.partition(":")
        what = "qrels set" if what == "qrels" else what
        return f"the lock on the content of a {what} (sha256 {digest[:8]}...)"
    return f"the lock {key!r}"
