"""A session on a PostgreSQL server, as rankhouse holds one: its URL and time limits, the
connection the warehouse's SQL runs on, advisory locks, and a user's own statement read-only.

**Every wait is bounded.** A nightly job must fail in bounded time, with one line saying what
it waited for, whatever the server does: stops answering, or lets another session hold a lock
for ever. Three limits:

* **connecting**: libpq's ``connect_timeout`` (the whole connection: TCP, TLS, login), from the
  URL (``?connect_timeout=SECONDS``), else ``$PGCONNECT_TIMEOUT``, else
  :data:`DEFAULT_CONNECT_TIMEOUT` seconds. A paused server, or a port that accepts and never
  answers, fails the command after it.
* **waiting for a lock**: ``lock_timeout``, ``$RANKHOUSE_LOCK_TIMEOUT`` seconds (default 30, as
  for a DuckDB file). It bounds the writers' advisory locks (:func:`lock`), the migration lock
  and any row or table lock.
* **one statement**: ``statement_timeout``, ``$RANKHOUSE_STATEMENT_TIMEOUT`` seconds (default
  :data:`DEFAULT_STATEMENT_TIMEOUT`; ``0``: none). It bounds what the server computes for one
  statement (the ``COPY`` of a 7-million-row run takes about 20 s).

The two server settings are set on each new session, where nothing else set them: a value from
the URL (``?options=-c%20lock_timeout%3D5s``), ``$PGOPTIONS``, the role's or the database's
settings (``ALTER ROLE analyst SET statement_timeout = '1min'``) or the server's configuration
is kept, unless the environment variable is set, which wins.

**The connection** (:class:`ServerConnection`) runs the warehouse's SQL through SQLAlchemy
(psycopg 3).

**Advisory locks**: how writers to one server take turns on a name, a content, an evaluation
or the schema. A key is the first 8 bytes of the SHA-256 of a text that says what it guards
(``evaluations:RUN:QRELS``, ``name:runs:NAME``, ``content:...``). The keys are predictable, and
PostgreSQL lets any login take any advisory lock: an analyst's session holding one would keep
every writer that needs it waiting. A secret per warehouse would have to live where writers,
and so the server's administrators and anyone who reads the writers' configuration, read it;
rather, every wait is bounded by the session's ``lock_timeout``, after which the writer fails
in one line naming the lock and the session that held it, and docs/scaling.md's role setup
revokes the advisory lock functions from every login but the warehouse's writers.

**A user's own statement** (``rankhouse sql``): what read-only means. Without ``--write`` the
store is opened read-only and a statement runs

* as one statement (:meth:`ServerConnection.execute_raw`: a second one could end the
  transaction or turn it read-write);
* in a read-only transaction that is always rolled back, never committed: whatever a
  read-only transaction still lets a statement change in the database is undone. PostgreSQL
  15 lets one create and write large objects (16 refuses it): ``lo_from_bytea``,
  ``lo_create``, ``lo_import``... are refused by name first, with a line that says so;
* only for a login whose powers a transaction does not contain: a superuser, a member of
  ``pg_execute_server_program``, ``pg_read_server_files`` or ``pg_write_server_files``, a role
  with CREATEROLE, or one that may call a function reaching the server's files or other
  databases without a password (``pg_read_file``, ``lo_export``, ``dblink_connect_u``) runs
  programs (``COPY ... TO PROGRAM``), reads files or commits through another connection
  whatever the transaction. ``SET ROLE`` to a weaker role is no sandbox for such a login (the
  statement can set the role back), so it is refused: connect as a login that may only read
  (docs/scaling.md, Roles), or pass ``--write``, which runs the statement with all of the
  login's powers, as it does on a file.

What protects the warehouse from a determined analyst is the server's roles; this is what
keeps a read-only ``sql`` from doing more than read, whoever runs it.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from typing import Any

from ...errors import RankhouseError, WarehouseLockedError, env_seconds
from ...lazy import psycopg
from ...lazy import sqlalchemy as sa
from ..base import Connection, Result
from ..duckdb_file.locking import LOCK_TIMEOUT_ENV, lock_timeout

#: Seconds to connect, unless the URL or ``$PGCONNECT_TIMEOUT`` says otherwise.
DEFAULT_CONNECT_TIMEOUT = 10
#: Seconds one statement may run, unless ``$RANKHOUSE_STATEMENT_TIMEOUT`` says otherwise.
DEFAULT_STATEMENT_TIMEOUT = 600
STATEMENT_TIMEOUT_ENV = "RANKHOUSE_STATEMENT_TIMEOUT"
CONNECT_TIMEOUT_ENV = "PGCONNECT_TIMEOUT"


def parse_url(url: str):
    """The SQLAlchemy URL of ``url``, with rankhouse's ``connect_timeout`` when it names none.

    Raises:
        RankhouseError: the URL cannot be read (a port that is not a number, ...).
    """
    try:
        parsed = sa.make_url(url)
        port = parsed.port
    except (ValueError, sa.exc.ArgumentError) as exc:
        port = re.search(r"@[^/?]*:([^/?]*)", url)
        reason = (
            f"its port {port.group(1)!r} is not a number"
            if port and not port.group(1).isdigit()
            else str(exc).strip().splitlines()[0]
        )
        raise RankhouseError(
            f"cannot read the warehouse URL {hide_password(url)}: {reason}; write "
            "postgresql://USER@HOST:PORT/DATABASE"
        ) from None
    if port is not None and not 0 < port < 65536:
        raise RankhouseError(
            f"cannot read the warehouse URL {hide_password(url)}: its port {port} is not "
            "between 1 and 65535"
        )
    if "connect_timeout" not in parsed.query and not os.environ.get(CONNECT_TIMEOUT_ENV):
        parsed = parsed.update_query_dict({"connect_timeout": str(DEFAULT_CONNECT_TIMEOUT)})
    return parsed


def hide_password(url: str) -> str:
    """``url`` as the user writes it (``postgresql://``), its password, if any, masked."""
    shown = re.sub(r"^postgresql\+psycopg://", "postgresql://", url)
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", shown)


def connect_timeout(parsed) -> str:
    """The connection timeout in force for the URL ``parsed``, in seconds, as text."""
    return str(
        parsed.query.get("connect_timeout")
        or os.environ.get(CONNECT_TIMEOUT_ENV)
        or DEFAULT_CONNECT_TIMEOUT
    )


def statement_timeout() -> float:
    """Seconds one statement may run: ``$RANKHOUSE_STATEMENT_TIMEOUT``, else 600 (0: none)."""
    return env_seconds(STATEMENT_TIMEOUT_ENV, DEFAULT_STATEMENT_TIMEOUT, "600 (0: no limit)")


#: Each setting is set where nothing set it yet (it reads 0), or where forced.
_SET = (
    "SELECT (SELECT set_config('lock_timeout', %(lock)s, false) "
    "WHERE %(force_lock)s OR current_setting('lock_timeout') = '0'), "
    "(SELECT set_config('statement_timeout', %(statement)s, false) "
    "WHERE %(force_statement)s OR current_setting('statement_timeout') = '0')"
)


def set_timeouts(dbapi_connection) -> None:
    """Bound the lock waits and statements of a new psycopg session (see the module)."""
    lock = lock_timeout()
    statement = statement_timeout()
    with dbapi_connection.cursor() as cursor:
        cursor.execute(
            _SET,
            {
                "lock": f"{max(1, round(lock * 1000))}ms",  # 0 is no limit to PostgreSQL
                "force_lock": bool(os.environ.get(LOCK_TIMEOUT_ENV, "").strip()),
                "statement": f"{round(statement * 1000)}ms",
                "force_statement": bool(os.environ.get(STATEMENT_TIMEOUT_ENV, "").strip()),
            },
        )
    dbapi_connection.commit()


# --- the connection -------------------------------------------------------------------------------


#: Why ``COPY ... TO STDOUT`` is refused (:func:`refuse_copy_stream` refuses it before sending it).
COPY_STREAM = (
    "COPY ... TO STDOUT (or FROM STDIN) streams rows outside a query, which sql does not "
    "relay: write the query as SELECT ... and pick its output with -f csv (or use psql's \\copy)"
)


class ServerConnection(Connection):
    """A PostgreSQL connection through SQLAlchemy.

    Attributes:
        sa_connection: the ``sqlalchemy.Connection`` (for psycopg's COPY).
    """

    dialect = "postgresql"

    def __init__(self, sa_connection) -> None:
        self.sa_connection = sa_connection
        #: The runs whose rows this transaction deleted (:meth:`delete_run_rows`).
        self.deleted_runs: list[int] = []

    def delete_run_rows(self, run_id: int) -> None:
        super().delete_run_rows(run_id)
        self.deleted_runs.append(int(run_id))

    def execute(self, sql: Any, params: Mapping[str, Any] | None = None) -> Result:
        statement = sql if isinstance(sql, sa.TextClause) else sa.text(sql)
        bound = params if isinstance(params, list) else dict(params or {})
        result = self.sa_connection.execute(statement, bound)
        if not result.returns_rows:
            return Result((), ())
        return Result(list(result.keys()), result.fetchall())

    def execute_script(self, sql: str) -> None:
        self.sa_connection.exec_driver_sql(sql)

    def execute_raw(self, sql: str) -> Result:
        """Run one statement as written, and only one.

        PostgreSQL's simple protocol runs every statement of a string; one of them could end
        a read-only transaction (``COMMIT; SET default_transaction_read_only = off; ...``) or
        turn it read-write before it reads (``SET TRANSACTION READ WRITE; ...``). Sent as a
        prepared statement (the extended protocol) the string must be one statement, so a
        read-only session stays read-only.

        Raises:
            RankhouseError: ``sql`` holds several statements.
        """
        cursor = self.driver_connection.cursor()
        try:
            cursor.execute(sql, prepare=True)
        except psycopg.errors.SyntaxError as exc:
            if "multiple commands" not in str(exc):
                raise
            raise RankhouseError(
                "a PostgreSQL warehouse runs one SQL statement at a time; send them one by one"
            ) from None
        except psycopg.ProgrammingError as exc:
            if "COPY" not in str(exc):
                raise
            self.sa_connection.invalidate()  # the session is inside the COPY: closed, not reused
            raise RankhouseError(COPY_STREAM) from None
        if cursor.description is None:
            return Result((), ())
        return Result([column.name for column in cursor.description], cursor.fetchall())

    def has_table(self, name: str) -> bool:
        return (
            sa.inspect(self.sa_connection).has_table(name)
            or name in sa.inspect(self.sa_connection).get_view_names()
        )

    def commit(self) -> None:
        self.sa_connection.commit()

    @property
    def driver_connection(self):
        """The psycopg connection under the SQLAlchemy one."""
        return self.sa_connection.connection.driver_connection


# --- advisory locks -------------------------------------------------------------------------------


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


# --- a user's own statement, read-only ------------------------------------------------------------


#: Functions that create or change large objects (PostgreSQL 15 allows them in a read-only
#: transaction) or move them to and from the server's files.
LARGE_OBJECT_WRITES = re.compile(
    r"\b(lo_creat|lo_create|lo_from_bytea|lo_import|lo_export|lo_put|lo_open|lowrite|"
    r"lo_write|lo_truncate|lo_truncate64|lo_unlink)\s*\(",
    re.IGNORECASE,
)

#: The predefined roles that reach the server's files and programs.
SERVER_ROLES = ("pg_execute_server_program", "pg_read_server_files", "pg_write_server_files")
#: Functions that reach the server's files or other databases, superuser-only unless granted.
SERVER_FUNCTIONS = (
    "pg_read_file(text)",
    "pg_read_binary_file(text)",
    "pg_ls_dir(text)",
    "lo_import(text)",
    "lo_export(oid, text)",
    "dblink_connect_u(text)",
    "dblink_connect_u(text, text)",
)

_POWERS = """
SELECT r.rolname AS login, r.rolsuper AS superuser, r.rolcreaterole AS createrole,
       ARRAY(SELECT g FROM unnest(CAST(:roles AS text[])) AS g
             WHERE to_regrole(g) IS NOT NULL AND pg_has_role(session_user, g, 'MEMBER')) AS roles,
       ARRAY(SELECT f FROM unnest(CAST(:functions AS text[])) AS f
             WHERE to_regprocedure(f) IS NOT NULL
               AND has_function_privilege(session_user, to_regprocedure(f), 'EXECUTE'))
           AS functions
FROM pg_roles r WHERE r.rolname = session_user
"""

#: ``COPY ... TO STDOUT`` / ``FROM STDIN`` (comments before it allowed).
_COPY_STREAM = re.compile(
    r"\A(?:\s|--[^\n]*\n|/\*.*?\*/)*COPY\b.*\b(?:STDOUT|STDIN)\b", re.IGNORECASE | re.DOTALL
)


def refuse_copy_stream(sql: str) -> None:
    """Refuse ``COPY ... TO STDOUT`` before sending it (psycopg would leave the session inside
    the COPY, and every later statement of it would fail).

    Raises:
        RankhouseError: ``sql`` is such a COPY.
    """
    if _COPY_STREAM.match(sql):
        raise RankhouseError(COPY_STREAM)


def check_read_only(conn: ServerConnection, sql: str) -> None:
    """Refuse what a read-only transaction does not contain (see the module).

    Raises:
        RankhouseError: ``sql`` writes large objects, or the login is too powerful.
    """
    found = LARGE_OBJECT_WRITES.search(sql)
    if found:
        raise RankhouseError(
            f"{found.group(1)}() creates, changes or moves a large object, which PostgreSQL "
            "allows in a read-only transaction: sql without --write refuses it; pass --write "
            "to run it"
        )
    powers = conn.execute(
        _POWERS, {"roles": list(SERVER_ROLES), "functions": list(SERVER_FUNCTIONS)}
    ).one()
    reasons = (
        ["it is a superuser"]
        if powers.superuser
        else (["it may create roles (CREATEROLE)"] if powers.createrole else [])
        + [f"it is a member of {role}" for role in powers.roles]
        + [f"it may call {function}" for function in powers.functions]
    )
    if reasons:
        raise RankhouseError(
            f"sql without --write refuses the login {powers.login}: {'; '.join(reasons)}, and a "
            "read-only transaction does not stop such a login from running programs or reading "
            "files on the server; connect as a login that may only read (docs/scaling.md, "
            "Roles), or pass --write to run the statement with all of this login's powers"
        )


def run_read_only(conn: ServerConnection, sql: str):
    """Run the user's statement ``sql`` on ``conn``, inside a read-only transaction that the
    caller rolls back (see the module)."""
    refuse_copy_stream(sql)
    check_read_only(conn, sql)
    return conn.stream_raw(sql)
