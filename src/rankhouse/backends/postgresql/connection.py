"""A PostgreSQL connection as the warehouse's SQL sees it, through SQLAlchemy (psycopg 3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import RankhouseError
from ...lazy import psycopg
from ...lazy import sqlalchemy as sa
from ..sql import Connection, Result

#: Why ``COPY ... TO STDOUT`` is refused (:mod:`.user_sql` refuses it before sending it).
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
