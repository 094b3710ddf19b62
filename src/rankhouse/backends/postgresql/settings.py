"""How long rankhouse waits for a PostgreSQL server: every wait of its sessions is bounded.

A nightly job must fail in bounded time, with one line saying what it waited for, whatever the
server does: stops answering, or lets another session hold a lock for ever. Three limits:

* **connecting**: libpq's ``connect_timeout`` (the whole connection: TCP, TLS, login), from the
  URL (``?connect_timeout=SECONDS``), else ``$PGCONNECT_TIMEOUT``, else
  :data:`DEFAULT_CONNECT_TIMEOUT` seconds. A paused server, or a port that accepts and never
  answers, fails the command after it.
* **waiting for a lock**: ``lock_timeout``, ``$RANKHOUSE_LOCK_TIMEOUT`` seconds (default 30, as
  for a DuckDB file). It bounds the writers' advisory locks (:mod:`.locks`), the migration lock
  and any row or table lock.
* **one statement**: ``statement_timeout``, ``$RANKHOUSE_STATEMENT_TIMEOUT`` seconds (default
  :data:`DEFAULT_STATEMENT_TIMEOUT`; ``0``: none). It bounds what the server computes for one
  statement (the ``COPY`` of a 7-million-row run takes about 20 s).

The two server settings are set on each new session, where nothing else set them: a value from
the URL (``?options=-c%20lock_timeout%3D5s``), ``$PGOPTIONS``, the role's or the database's
settings (``ALTER ROLE analyst SET statement_timeout = '1min'``) or the server's configuration
is kept, unless the environment variable is set, which wins.
"""

from __future__ import annotations

import os
import re

from ...errors import RankhouseError
from ...lazy import sqlalchemy as sa
from ..duckdb_file.locking import LOCK_TIMEOUT_ENV, lock_timeout

#: Seconds to connect, unless the URL or ``$PGCONNECT_TIMEOUT`` says otherwise.
DEFAULT_CONNECT_TIMEOUT = 10
#: Seconds one statement may run, unless ``$RANKHOUSE_STATEMENT_TIMEOUT`` says otherwise.
DEFAULT_STATEMENT_TIMEOUT = 600
STATEMENT_TIMEOUT_ENV = "RANKHOUSE_STATEMENT_TIMEOUT"
CONNECT_TIMEOUT_ENV = "PGCONNECT_TIMEOUT"

__all__ = [
    "CONNECT_TIMEOUT_ENV",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_STATEMENT_TIMEOUT",
    "LOCK_TIMEOUT_ENV",
    "STATEMENT_TIMEOUT_ENV",
    "connect_timeout",
    "parse_url",
    "set_timeouts",
]


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
    text = os.environ.get(STATEMENT_TIMEOUT_ENV, "").strip()
    if not text:
        return float(DEFAULT_STATEMENT_TIMEOUT)
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # also refuses nan
        raise RankhouseError(
            f"${STATEMENT_TIMEOUT_ENV} is {text!r}; write a number of seconds, e.g. 600 "
            "(0: no limit)"
        )
    return seconds


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
