"""The connection layer: one small interface over a DuckDB file and a PostgreSQL server.

A warehouse's SQL is written once, with ``:name`` binds, and runs on either backend through
:class:`Database`:

* a **DuckDB** file (the embedded default) is driven through DuckDB's own Python API. DuckDB
  is also the engine that computes measures, so the warehouse connection is the engine's
  connection, and nothing else is imported to reach it;
* a **PostgreSQL** server is reached through SQLAlchemy (psycopg 3), imported only when a
  server is named.

``Database.connect()`` and ``Database.transaction()`` give a :class:`Connection` whose
``execute(sql, params)`` returns a :class:`Result` (rows fetched at once: catalogue-sized
answers; bulk data moves through DuckDB itself or PostgreSQL's COPY).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from . import leaving

# A bind is ':name' outside strings, quoted identifiers and comments, not part of a '::' cast.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|(?<![:\w]):([A-Za-z_]\w*)")


@lru_cache(maxsize=512)
def to_duckdb(sql: str) -> tuple[str, tuple[str, ...]]:
    """``sql`` with DuckDB's ``$name`` binds for ``:name``, and the names used."""
    names: dict[str, None] = {}

    def replace(match: re.Match) -> str:
        if match.group(1) is None:
            return match.group(0)
        names[match.group(1)] = None
        return "$" + match.group(1)

    return _TOKENS.sub(replace, sql), tuple(names)


class Row(tuple):
    """A result row: a tuple whose items are also attributes named after the columns."""

    _keys: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[self._keys.index(name)]
        except ValueError:
            raise AttributeError(name) from None

    @property
    def _mapping(self) -> dict[str, Any]:
        return dict(zip(self._keys, self, strict=True))


class Result:
    """The rows of one statement, fetched."""

    def __init__(self, keys: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        self._keys = tuple(keys)
        row_type = type("Row", (Row,), {"_keys": self._keys, "__slots__": ()})
        self._rows = [row_type(row) for row in rows]

    def keys(self) -> list[str]:
        """The column names."""
        return list(self._keys)

    def __iter__(self) -> Iterator[Row]:
        return iter(self._rows)

    def all(self) -> list[Row]:
        """Every row."""
        return list(self._rows)

    fetchall = all

    def first(self) -> Row | None:
        """The first row, or None."""
        return self._rows[0] if self._rows else None

    def one(self) -> Row:
        """The one row; raises LookupError when there are none or several."""
        if len(self._rows) != 1:
            raise LookupError(f"expected one row, got {len(self._rows)}")
        return self._rows[0]

    def one_or_none(self) -> Row | None:
        """The one row or None; raises LookupError when there are several."""
        if len(self._rows) > 1:
            raise LookupError(f"expected at most one row, got {len(self._rows)}")
        return self.first()

    def scalar(self) -> Any:
        """The first column of the first row, or None."""
        return self._rows[0][0] if self._rows else None

    def scalar_one(self) -> Any:
        """The first column of the one row."""
        return self.one()[0]

    def scalars(self) -> Items:
        """The first column of every row."""
        return Items(row[0] for row in self._rows)

    def mappings(self) -> Items:
        """The rows as dicts."""
        return Items(row._mapping for row in self._rows)


class Items(list):
    """Values or dicts of a result: a list, with ``all``/``first``/``one`` as :class:`Result`
    has them."""

    def all(self) -> list[Any]:
        return list(self)

    def first(self) -> Any:
        return self[0] if self else None

    def one(self) -> Any:
        if len(self) != 1:
            raise LookupError(f"expected one row, got {len(self)}")
        return self[0]


class Connection:
    """A connection of either backend: ``execute`` with ``:name`` binds.

    Attributes:
        dialect: ``"duckdb"`` or ``"postgresql"``.
    """

    dialect: str

    def execute(self, sql: Any, params: Mapping[str, Any] | list | None = None) -> Result:
        """Run one statement (``:name`` binds; lists bind as arrays: write ``= ANY(:ids)``).
        A list of parameter sets runs the statement once for each."""
        raise NotImplementedError

    def execute_script(self, sql: str) -> None:
        """Run several statements separated by ``;`` (no binds)."""
        raise NotImplementedError

    def execute_raw(self, sql: str) -> Result:
        """Run one statement as written (no bind translation: a user's own SQL)."""
        raise NotImplementedError

    def has_table(self, name: str) -> bool:
        """Whether a table or view ``name`` exists in the warehouse's schema."""
        raise NotImplementedError


class DuckDBConnection(Connection):
    """A DuckDB connection (the warehouse file's, or an in-memory one).

    Attributes:
        duck: the ``duckdb.DuckDBPyConnection`` itself, for DuckDB's readers and bulk moves.
    """

    dialect = "duckdb"

    def __init__(self, duck) -> None:
        self.duck = duck
        self.in_transaction = False

    def execute(self, sql: Any, params: Mapping[str, Any] | None = None) -> Result:
        text, names = to_duckdb(_text_of(sql))
        if isinstance(params, list):  # one statement per parameter set
            for one in params:
                self.duck.execute(text, {name: one[name] for name in names})
            return Result((), ())
        if names:
            self.duck.execute(text, {name: (params or {})[name] for name in names})
        else:
            self.duck.execute(text)
        return self._fetched()

    def _fetched(self) -> Result:
        description = self.duck.description
        if description is None:
            return Result((), ())
        return Result([column[0] for column in description], self.duck.fetchall())

    def execute_script(self, sql: str) -> None:
        self.duck.execute(sql)

    def execute_raw(self, sql: str) -> Result:
        self.duck.execute(sql)
        return self._fetched()

    def has_table(self, name: str) -> bool:
        if not self.in_transaction:
            bound = self._binds(name)
            if bound is not None:
                return bound
        found = self.duck.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = $n AND NOT temporary "
            "AND database_name = current_database() AND schema_name = current_schema()",
            {"n": name},
        ).fetchone()[0]
        if found:
            return True
        return bool(
            self.duck.execute(
                "SELECT count(*) FROM duckdb_views() WHERE view_name = $n AND NOT temporary "
                "AND database_name = current_database() AND schema_name = current_schema()",
                {"n": name},
            ).fetchone()[0]
        )

    def _binds(self, name: str) -> bool | None:
        """Whether ``name`` names a table or view of the current schema, by reading none of it:
        DuckDB's catalogue functions build its system views at their first call in a process
        (10-15 ms). None when the probe cannot tell. Outside a transaction only, where a
        statement that fails aborts nothing."""
        from .duck import duckdb

        [where] = self.duck.execute("SELECT current_database(), current_schema()").fetchall()
        quoted = ".".join('"' + part.replace('"', '""') + '"' for part in (*where, name))
        try:
            self.duck.execute(f"SELECT 1 FROM {quoted} LIMIT 0").fetchall()
        except duckdb.CatalogException:  # no table or view of that name there
            return False
        except duckdb.Error:
            return None
        return True

    def commit(self) -> None:
        """Nothing to do outside :meth:`DuckDB.transaction` (DuckDB autocommits)."""


class ServerConnection(Connection):
    """A PostgreSQL connection through SQLAlchemy.

    Attributes:
        sa_connection: the ``sqlalchemy.Connection`` (for psycopg's COPY).
    """

    dialect = "postgresql"

    def __init__(self, sa_connection) -> None:
        self.sa_connection = sa_connection

    def execute(self, sql: Any, params: Mapping[str, Any] | None = None) -> Result:
        import sqlalchemy as sa

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
        import psycopg

        from .errors import RankhouseError

        cursor = self.driver_connection.cursor()
        try:
            cursor.execute(sql, prepare=True)
        except psycopg.errors.SyntaxError as exc:
            if "multiple commands" not in str(exc):
                raise
            raise RankhouseError(
                "a PostgreSQL warehouse runs one SQL statement at a time; send them one by one"
            ) from None
        if cursor.description is None:
            return Result((), ())
        return Result([column.name for column in cursor.description], cursor.fetchall())

    def has_table(self, name: str) -> bool:
        import sqlalchemy as sa

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


class DuckDB:
    """A DuckDB database: one connection for the life of the object.

    Args:
        path: the file, or ``":memory:"``.
        read_only: open the file read-only.
        config: DuckDB settings given at connect time.
        take_ahead: take the connection :mod:`rankhouse.ahead` opened for the same thing, if
            any (False: open a new one).
    """

    dialect = "duckdb"

    def __init__(
        self,
        path: str,
        *,
        read_only: bool = False,
        config: dict | None = None,
        take_ahead: bool = True,
    ):
        from . import ahead

        self.path = path
        config = config or {}
        self.duck = ahead.take(self.key(path, read_only, config)) if take_ahead else None
        if self.duck is None:
            self.duck = self.open(path, read_only, config)
        self._connection = DuckDBConnection(self.duck)
        self.before_commit: Callable[[], None] | None = None
        leaving.opened(self)

    def beside(self) -> DuckDB:
        """Another connection to the same database (a DuckDB cursor) with transactions of its
        own, for work on another thread; close it when that work is done."""
        other = copy.copy(self)
        other.duck = self.duck.cursor()
        other._connection = DuckDBConnection(other.duck)
        other.before_commit = None
        leaving.opened(other)
        return other

    @staticmethod
    def open(path: str, read_only: bool, config: dict):
        """A new DuckDB connection to ``path``."""
        from .duck import duckdb

        return duckdb.connect(path, read_only=read_only, config=config)

    @staticmethod
    def key(path: str, read_only: bool, config: dict) -> tuple:
        """What identifies a connection opened ahead (:mod:`rankhouse.ahead`) as this one."""
        return ("duckdb", path, read_only, tuple(config.items()))

    @contextmanager
    def connect(self) -> Iterator[DuckDBConnection]:
        """The connection, for reading (each statement commits on its own)."""
        yield self._connection

    @contextmanager
    def transaction(self) -> Iterator[DuckDBConnection]:
        """The connection inside one transaction: committed on success, rolled back on error.
        A transaction opened inside another joins it. ``before_commit``, when set, runs
        before each commit; what it raises rolls the transaction back."""
        conn = self._connection
        if conn.in_transaction:
            yield conn
            return
        self.duck.begin()
        conn.in_transaction = True
        try:
            yield conn
            if self.before_commit is not None:  # may refuse the commit: then roll back
                self.before_commit()
        except BaseException:
            conn.in_transaction = False
            self.duck.rollback()
            raise
        conn.in_transaction = False
        self.duck.commit()

    def close(self) -> None:
        self.duck.close()
        leaving.closed(self)


class Server:
    """A PostgreSQL server database through an SQLAlchemy engine (psycopg 3).

    Args:
        url: an SQLAlchemy URL (``postgresql+psycopg://...``).
        read_only: every transaction of the sessions is read-only.
    """

    dialect = "postgresql"

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        import sqlalchemy as sa

        parsed = sa.make_url(url)
        if read_only:
            options = " ".join(
                filter(None, [parsed.query.get("options"), "-c default_transaction_read_only=on"])
            )
            parsed = parsed.update_query_dict({"options": options})
        self.engine = sa.create_engine(parsed)
        self.read_only = read_only
        sa.event.listen(self.engine, "connect", _tune_postgresql)
        leaving.opened(self)

    @contextmanager
    def connect(self) -> Iterator[ServerConnection]:
        """A connection for reading."""
        with self._connection() as conn, self._refusals():
            yield ServerConnection(conn)

    @contextmanager
    def transaction(self) -> Iterator[ServerConnection]:
        """A connection inside one transaction: committed on success, rolled back on error."""
        with self._connection() as conn, self._refusals(), conn.begin():
            yield ServerConnection(conn)

    def _connection(self):
        """A new SQLAlchemy connection; an unreachable server or a refused login is a
        RankhouseError (one line on the command line), not a driver traceback."""
        import sqlalchemy as sa

        from .errors import RankhouseError

        try:
            return self.engine.connect()
        except sa.exc.DBAPIError as exc:
            where = self.engine.url.render_as_string(hide_password=True)
            reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
            raise RankhouseError(f"cannot connect to the warehouse {where}: {reason}") from None

    @contextmanager
    def _refusals(self) -> Iterator[None]:
        """A statement the server refuses to this login (no privilege, sessions read-only by
        the role's settings, no schema to create the tables in) becomes a RankhouseError
        saying what to do. Refusals in a session rankhouse opened read-only itself are the
        caller's to explain (``rankhouse sql`` names --write)."""
        import psycopg
        import sqlalchemy as sa

        from .errors import RankhouseError

        only_read = "this login may only read: open the warehouse with --read-only"
        hints = {
            psycopg.errors.InsufficientPrivilege: (
                "this login has no privilege for it" if self.read_only else only_read
            ),
            psycopg.errors.InvalidSchemaName: (
                "name a schema this login may create tables in, e.g. "
                "?options=-csearch_path%3DSCHEMA in the URL"
            ),
        }
        if not self.read_only:
            hints[psycopg.errors.ReadOnlySqlTransaction] = only_read
        try:
            yield
        except (sa.exc.DBAPIError, psycopg.Error) as exc:
            reason = getattr(exc, "orig", None) or exc
            hint = next((h for kind, h in hints.items() if isinstance(reason, kind)), None)
            if hint is None:
                raise
            first_line = str(reason).strip().splitlines()[0]
            raise RankhouseError(
                f"the server refused: {first_line} ({hint}; roles in docs/scaling.md)"
            ) from None

    def close(self) -> None:
        self.engine.dispose()
        leaving.closed(self)


def database_errors(dialect: str) -> tuple[type[BaseException], ...]:
    """The exception types a statement's failure raises on ``dialect``."""
    if dialect == "postgresql":
        import psycopg
        import sqlalchemy as sa

        return (sa.exc.DBAPIError, psycopg.Error)  # psycopg's own: execute_raw, COPY
    from .duck import duckdb

    return (duckdb.Error,)


def _tune_postgresql(dbapi_connection, _record) -> None:
    # JSONB comes back as its text, as the DuckDB file's VARCHAR does: one code path decodes it.
    from psycopg.types.string import TextLoader

    dbapi_connection.adapters.register_loader("jsonb", TextLoader)


def _text_of(sql: Any) -> str:
    # an SQLAlchemy text() clause is accepted for its text (tests and scripts write them)
    return sql if isinstance(sql, str) else sql.text
