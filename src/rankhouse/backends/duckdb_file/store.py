"""The default store: a warehouse in one DuckDB file (or in memory), which is also the engine.

The warehouse's connection is the engine's: evaluations read the rows where they are stored
and write their values with one ``INSERT ... SELECT``, and an ingest parses, checks and writes
a source in one transaction on the file. One process writes the file at a time (DuckDB's
lock); another waits for it (:mod:`.locking`). Opened read-only, the file is also cut off from
other files and its settings are locked (:data:`READ_ONLY_CONFIG`, below).

**Who holds the file, and for how long.** A DuckDB connection locks its file (DuckDB's lock:
one writing process, or several read-only ones), so the store opens the file for a unit of
work and closes it when that ends: a :meth:`DuckDBFile.session` (every
:class:`~rankhouse.Warehouse` method is one; ``with wh.session():`` makes several calls one),
or a :meth:`~DuckDBFile.connect` / :meth:`~DuckDBFile.transaction` / :meth:`~DuckDBFile.staging`
block outside one. Between them the file is free for the command line, another notebook or
``duckdb`` itself. Each opening costs what DuckDB takes to open a file (about 11 ms for a
small warehouse, 2-3 ms to close it); the schema check made on opening (is this a whole
rankhouse warehouse, at the newest version?) is made again only when the file changed since
this store last closed it (:func:`.locking.file_state`: its device, inode, size and
modification time, and its write-ahead log's). ``hold=True`` keeps the file open from
opening to :meth:`~DuckDBFile.close`, as a process that is one unit of work wants (the
command line: one command, one opening). An in-memory warehouse keeps its connection: its
data lives in it.

**Is the file a whole warehouse?** Asked each time a file is opened, and cheap:
:func:`holds_nothing` (a file DuckDB has just created: no block written, an empty log, asked
of its storage rather than its catalogue); :func:`recognise` (the warehouse's tables and
views, and whether they are the whole newest schema: every table with each of its columns,
every view binding, from one statement that reads nothing); :func:`check_whole` (what a
warehouse that is not whole lacks, said in one error).

**What a read-only connection may do: read the warehouse, and nothing else.** ``rankhouse
sql`` without ``--write`` (and every command under ``--read-only``) opens the file with
:data:`READ_ONLY_CONFIG`. DuckDB then refuses, with an error the CLI prints as one line:

* any change to the file (``CREATE``, ``DROP``, ``ALTER``, ``INSERT``, ``UPDATE``, ``DELETE``):
  the connection is read-only;
* any file or network access (``COPY ... TO``, ``EXPORT DATABASE``, ``ATTACH``, ``read_csv``,
  ``read_text``, ``read_parquet``, ``glob``, ``INSTALL``, ``LOAD`` of an extension file): external
  access is off;
* any change of a setting (``SET``, ``RESET``, ``PRAGMA threads=...``), including switching the
  two above back on: the configuration is locked for the connection's life.

Temporary tables and macros (in memory, gone at exit) and DuckDB's built-in functions remain.
``--write`` opens the file as every writing command does: all of DuckDB, files included.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from ...defaults import DUCKDB_CONFIG
from ...duck import duckdb, open_database
from ...errors import (
    DatabaseError,
    NoWarehouseError,
    RankhouseError,
    SchemaError,
    first_line,
)
from ..base import Backend, Connection, Opening, Reclaimed, translated
from ..schema import (
    COLUMNS_QUERY,
    OBJECTS_QUERY,
    check_complete,
    expected_columns,
    expected_objects,
    migrate,
    pending_migrations,
    refuse_foreign,
)
from .compaction import RUN_ROW_BYTES, compact_file, insert_arrow_rows, read_run_rows
from .connection import DuckDBConnection
from .locking import check_file, connect_waiting, file_state

#: The URL prefix of a DuckDB warehouse (``duckdb:///PATH``).
DUCKDB_PREFIX = "duckdb:///"
#: The driver's errors, which leave the store as :class:`~rankhouse.errors.DatabaseError`.
ERRORS = (duckdb.Error,)

#: DuckDB configuration of a read-only warehouse connection (with ``read_only=True``), on top
#: of :data:`rankhouse.defaults.DUCKDB_CONFIG` (which already keeps extensions from being
#: installed or loaded on their own, on every connection).
READ_ONLY_CONFIG: dict[str, object] = {
    "enable_external_access": False,
    "lock_configuration": True,  # last: nothing above can be switched back with SET
}


def duckdb_config(read_only: bool) -> dict:
    """The settings a warehouse file is opened with (reading harms nothing: no file access,
    settings locked)."""
    return DUCKDB_CONFIG | READ_ONLY_CONFIG if read_only else dict(DUCKDB_CONFIG)


def database_key(path: str, read_only: bool, config: dict) -> tuple:
    """What identifies a connection to ``path`` with these settings
    (:func:`rankhouse.duck.open_database`)."""
    return ("duckdb", path, read_only, tuple(config.items()))


def open_file(path: str, read_only: bool, config: dict):
    """A new DuckDB connection to ``path`` (or ``:memory:``) with these settings."""
    return duckdb.connect(path, read_only=read_only, config=config)


def open_checked(path: str, read_only: bool, config: dict):
    """:func:`open_file`, with the reading part of the check made on opening (is the file a
    whole warehouse, which migrations does it lack) done at once and kept for this
    connection.

    For the command line's thread that opens the warehouse while the command imports
    (:mod:`rankhouse.cli.process`): the check is 10-15 ms of DuckDB's work, which then
    overlaps the imports, and the store that is handed this connection uses it instead of
    asking again. Nothing can change the file in between: the connection holds DuckDB's lock
    on it. Only a whole warehouse is checked here; any other file (new, older, damaged,
    foreign) is left to the store, which examines it and says what is wrong."""
    duck = open_file(path, read_only, config)
    try:
        conn = DuckDBConnection(duck)
        conn.execute_raw(_whole_schema())
        names = sorted(expected_objects("duckdb"))
        checked = _Checked(names, True, pending_migrations(conn, names))
    except Exception:
        return duck
    _CHECKED_AHEAD[id(duck)] = (duck, checked)
    return duck


class _Checked(NamedTuple):
    """What opening a file found: its objects, whether they are the whole newest schema, the
    migrations it lacks."""

    names: list[str]
    whole: bool
    pending: list


#: Checks made by :func:`open_checked`, by connection (the connection is kept with its check,
#: so that its id is not reused while the check waits to be taken).
_CHECKED_AHEAD: dict[int, tuple[Any, _Checked]] = {}


def _checked_ahead(duck) -> _Checked | None:
    found = _CHECKED_AHEAD.pop(id(duck), None)
    return found[1] if found is not None and found[0] is duck else None


def connect_file(path: str, read_only: bool, config: dict):
    """A connection to ``path`` with these settings, through the installed connector
    (:func:`rankhouse.duck.open_database`): new, or one opened ahead for the same key."""
    return open_database(
        database_key(path, read_only, config), lambda: open_file(path, read_only, config)
    )


class DuckDBFile:
    """A warehouse in a DuckDB file, or in memory (``path=":memory:"``), opened, checked and
    migrated.

    Args:
        path: the file, or ``":memory:"``.
        opening: how (:class:`~..base.Opening`). ``read_only`` needs the file at the newest
            schema; ``create``: a missing file may be created (with its folder), else
            NoWarehouseError; ``hold``: keep the file open (and locked) until :meth:`close`,
            by default it is open only during a unit of work (a :meth:`session`; see the
            module); ``upgrade``: False opens a file at an older schema as it is, for
            :meth:`upgrade` (``rankhouse migrate``), otherwise opening upgrades it (one user,
            embedded: the upgrade is implicit, docs/cli.md).

    Raises:
        NoWarehouseError: no warehouse at ``path`` and it may not be created.
        SchemaError: another application's database, a damaged or newer warehouse.
        WarehouseLockedError: another process held the file for the whole wait.
    """

    dialect = "duckdb"
    local_compute = True
    many_writers = False
    enforces_unique = False

    def __init__(self, path: str, opening: Opening = Opening()) -> None:
        read_only, create, hold, upgrade = opening
        self.path = path
        self.url = DUCKDB_PREFIX + path
        self.where = path
        self.read_only = read_only
        self._config = duckdb_config(read_only)
        self._memory = path == ":memory:"
        self._create = create
        self._upgrade = upgrade
        self._duck = None
        self._connection: DuckDBConnection | None = None
        self._depth = 0
        self._checked: object = None  # file_state() when this store last closed the file
        self._closed = False
        if self._memory:
            if read_only:
                raise RankhouseError("cannot open an in-memory warehouse read-only")
        else:
            check_file(Path(path), create=create and not read_only)
        self._enter()
        if not (hold or self._memory):
            self._leave()

    @property
    def duck(self):
        """The ``duckdb.DuckDBPyConnection`` of the open file (inside a session only)."""
        if self._duck is None:
            raise RankhouseError(
                f"the warehouse {self.where} is not open: a file warehouse is open during a "
                "call or a `with wh.session():` block"
                if not self._closed
                else f"the warehouse {self.where} was closed"
            )
        return self._duck

    @contextmanager
    def session(self) -> Iterator[DuckDBFile]:
        """Hold the file open for the block: the calls inside share one connection and no
        other process writes the file meanwhile (see the module). Sessions nest; the file
        closes when the outermost one ends."""
        self._enter()
        try:
            yield self
        finally:
            self._leave()

    def _enter(self) -> None:
        if self._closed:
            raise RankhouseError(f"the warehouse {self.where} was closed; open it again")
        self._depth += 1
        if self._duck is None:
            try:
                self._open()
            except BaseException:
                self._depth -= 1
                raise

    def _leave(self) -> None:
        if self._closed:
            return
        self._depth -= 1
        if self._depth == 0 and not self._memory and self._duck is not None:
            self._release()

    def _open(self) -> None:
        """Connect (waiting while another process holds the file) and, when the file is new
        to this store or changed since it closed it, check and migrate it."""
        first = self._checked is None
        state = None if self._memory else file_state(self.path)
        if not first and state is None:
            raise NoWarehouseError(
                f"no warehouse at {self.where}: the file was removed since this Warehouse "
                "opened it; open a new Warehouse to create it again"
            )
        path, read_only, config = self.path, self.read_only, self._config
        try:
            duck = connect_waiting(
                lambda: connect_file(path, read_only, config), path, read_only=read_only
            )
        except duckdb.Error as exc:
            raise RankhouseError(f"cannot open warehouse {path}: {exc}") from None
        self._duck, self._connection = duck, DuckDBConnection(duck)
        if first or state != self._checked:
            try:
                self._prepare(self._create)
            except BaseException:
                self._release(checked=False)  # a refused file stays unlocked for the caller
                raise

    def _release(self, *, checked: bool = True) -> None:
        """Close the file (DuckDB writes its checkpoint); note its state, which the next
        opening compares to decide whether to check it again."""
        duck, self._duck, self._connection = self._duck, None, None
        duck.close()
        if checked and not self._memory:
            self._checked = file_state(self.path)

    def _prepare(self, create: bool) -> None:
        """Check that the database is a whole rankhouse warehouse; migrate it when writable."""
        is_file = not self._memory
        checked = _checked_ahead(self._duck)
        with _opening(self.where), self.connect() as conn:
            if checked is not None:
                names, whole = checked.names, checked.whole
            else:
                names, whole = ([], False) if is_file and holds_nothing(conn) else recognise(conn)
            if is_file:
                refuse_foreign(self.where, names)
                if "schema_migrations" not in names and (self.read_only or not create):
                    raise NoWarehouseError(
                        f"no warehouse at {self.where}: the database holds no tables yet; "
                        "ingest qrels or a run to create one"
                    )
            pending = checked.pending if checked is not None else None
            if self.read_only and (pending is None):
                pending = _pending(self.where, conn, names)
            if self.read_only and pending:
                raise SchemaError(
                    "this warehouse needs a schema upgrade; open it once without --read-only"
                )
            left = (  # for rankhouse migrate, which says what it does before it does it
                self._upgrade is False
                and "schema_migrations" in names
                and bool(_pending(self.where, conn, names) if pending is None else pending)
            )
        if not (self.read_only or left or pending == []):
            with _opening(self.where):
                try:
                    applied = migrate(self, names)  # one writer: the names still hold
                except SchemaError as exc:
                    raise SchemaError(f"cannot open the warehouse {self.where}: {exc}") from None
                if applied or "schema_migrations" not in names:
                    with self.connect() as conn:
                        names, whole = recognise(conn)
        if not (whole or left):
            with _opening(self.where), self.connect() as conn:
                check_whole(self.where, conn, names)

    def upgrade(self) -> list:
        """Apply the migrations the file lacks (``rankhouse migrate``); returns them."""
        with self.session(), _opening(self.where):
            try:
                applied = migrate(self)
            except SchemaError as exc:
                raise SchemaError(f"cannot open the warehouse {self.where}: {exc}") from None
            with self.connect() as conn:
                names, whole = recognise(conn)
                if not whole:
                    check_whole(self.where, conn, names)
        return applied

    def backup_command(self, version: int) -> str:
        """A command that copies the file as it is (its schema at ``version``), while no
        process holds it."""
        if self._memory:
            return "nothing to copy: the warehouse is in memory"
        return f"cp {shlex.quote(self.path)} {shlex.quote(f'{self.path}.schema-{version}')}"

    # --- connections -----------------------------------------------------------------------

    @contextmanager
    def connect(self) -> Iterator[DuckDBConnection]:
        """The connection, for reading (each statement commits on its own); the file is
        held for the block."""
        with self.session(), translated(ERRORS):
            yield self._connection

    @contextmanager
    def transaction(self) -> Iterator[DuckDBConnection]:
        """The connection inside one transaction: committed on success, rolled back on error.
        A transaction opened inside another joins it. The file is held for the block."""
        with self.session():
            conn = self._connection
            if conn.in_transaction:
                yield conn
                return
            with translated(ERRORS):
                duck = conn.duck
                duck.begin()
                conn.in_transaction = True
                try:
                    yield conn
                except BaseException:
                    conn.in_transaction = False
                    duck.rollback()
                    raise
                conn.in_transaction = False
                duck.commit()

    @contextmanager
    def statement(self, sql: str) -> Iterator[tuple[list[str], Iterator[list[tuple]]] | None]:
        """One statement of the user's (``rankhouse sql``), in a transaction of its own, its
        rows streamed; a file opened read-only is a sandbox (:data:`READ_ONLY_CONFIG`)."""
        with self.transaction() as conn:
            yield conn.stream_raw(sql)

    @contextmanager
    def engine_connection(self, run_ids, qrels_id: int) -> Iterator[Any]:
        """The file's own DuckDB connection: the rows are there."""
        with self.connect() as conn:
            yield conn.duck

    @contextmanager
    def rows_connection(self, run_ids, qrels_id: int, *, load: bool) -> Iterator[Connection]:
        """The file's connection: the rows are there."""
        with self.connect() as conn:
            yield conn

    # --- writing evaluations -----------------------------------------------------------------

    def store_values(
        self, conn: Connection, duck, select: str, params: dict[str, Any],
        table: str = "evaluation_values",
    ) -> None:  # fmt: skip
        """Insert the rows of ``select`` (``evaluation_id, query_id, value``, run on ``duck``)
        into ``evaluation_values`` (or ``table``, by the select's column names) in the
        transaction of ``conn``: the same connection, so DuckDB moves the rows itself."""
        duck.execute(f"INSERT INTO {table} BY NAME {select}", params)

    def lock_evaluations(self, conn: Connection, pairs) -> None:
        """Nothing to lock: a file has one writer at a time."""

    # --- ingest ------------------------------------------------------------------------------

    @contextmanager
    def staging(self) -> Iterator[Backend]:
        """An ingest parses, checks and writes in the file itself, in one transaction; the
        file is held for the block."""
        with self.session():
            yield self

    def publish(self, staging: Backend, results: list, place) -> list:
        """Nothing to copy: the ingest wrote in the file."""
        return results

    def publish_all(self, scratch: Backend, place) -> None:
        """Nothing to copy: trec-eval stored in the file."""

    # --- a run's rows, taken out and put back (retention: rankhouse.catalog.retention) -------

    #: Bytes a run row takes in a file, the estimate of the space a prune returns (measured on
    #: DL19 nights: docs/retention.md).
    run_row_bytes = RUN_ROW_BYTES

    def run_rows_table(self, conn: Connection, run_id: int):
        """The rows of run ``run_id`` as an Arrow table (``query_id, doc_id, rank, score``),
        in query and document byte order."""
        return read_run_rows(conn.duck, run_id)

    def delete_run_rows(self, conn: Connection, run_id: int) -> int:
        """Delete the rows of run ``run_id`` (nothing else), in the transaction of ``conn``;
        how many went."""
        return int(
            conn.duck.execute("DELETE FROM run_rows WHERE run_id = ?", [run_id]).fetchone()[0]
        )

    def restore_run_rows(self, conn: Connection, run_id: int, rows) -> int:
        """Insert ``rows`` (an Arrow table as :meth:`run_rows_table` gives) as the rows of run
        ``run_id``, in the transaction of ``conn``; how many."""
        return insert_arrow_rows(conn.duck, run_id, rows)

    def compact(self) -> Reclaimed:
        """Copy the file into a new one and put it in the old one's place, returning the space
        DuckDB keeps after a delete to the file system (:func:`.compaction.compact_file`)."""
        if self._memory:
            raise RankhouseError("an in-memory warehouse has no file to compact")
        if self.read_only:
            raise RankhouseError(f"cannot compact {self.where}: it is open read-only")
        with self.session():
            before, after = compact_file(self.path, self.duck)
            self._release(checked=False)  # the old file's connection: open the new one
            self._open()
        return Reclaimed(before, after, f"compacted {self.where}")

    def close(self) -> None:
        """Close the file (DuckDB writes its checkpoint); the store cannot be used after."""
        if self._duck is not None:
            self._release(checked=False)
        self._depth = 0
        self._closed = True

    def __repr__(self) -> str:
        return f"DuckDBFile({self.path!r}{', read_only=True' if self.read_only else ''})"


def _pending(where: str, conn: Connection, names: list[str]) -> list:
    """The migrations a warehouse opened read-only lacks."""
    try:
        return pending_migrations(conn, names)
    except SchemaError as exc:
        raise SchemaError(f"cannot open the warehouse {where}: {exc}") from None


@contextmanager
def _opening(where: str) -> Iterator[None]:
    """What the database refuses while the warehouse opens is said as such."""
    try:
        yield
    except DatabaseError as exc:
        raise RankhouseError(f"cannot open warehouse {where}: {exc.reason}") from None


# --- is the file a whole warehouse? ---------------------------------------------------------------


def object_names(conn: Connection) -> list[str]:
    """The tables and views of the warehouse's own schema, in lower case
    (:func:`recognise`)."""
    return recognise(conn)[0]


def recognise(conn: Connection) -> tuple[list[str], bool]:
    """The tables and views of the warehouse's own schema, in lower case, and whether they
    are the whole newest schema: every table with each of its columns, every view binding.

    A whole warehouse is recognised by one statement that names every object and every
    column of its tables, and reads nothing. Listing the catalogue with
    :data:`~rankhouse.backends.schema.OBJECTS_QUERY` would make DuckDB build its system
    views first: 10-15 ms at the first query of a process, a twentieth of an ``eval``
    served from storage. When that statement does not bind (a new, older, damaged or
    foreign database), the catalogue is listed.
    """
    try:
        conn.execute_raw(_whole_schema())
    except duckdb.Error:
        return [row[0].lower() for row in conn.execute(OBJECTS_QUERY)], False
    return sorted(expected_objects("duckdb")), True


@cache  # made at the first opening, not at import: the command line opens in a thread
def _whole_schema() -> str:
    columns = ", ".join(
        f'"{table}"."{column}"'
        for table, names in expected_columns("duckdb").items()
        for column in names
    )
    return f"SELECT {columns} FROM {', '.join(sorted(expected_objects('duckdb')))} LIMIT 0"


def check_whole(where: str, conn: Connection, names: list[str]) -> None:
    """Name what a warehouse that :func:`recognise` did not find whole lacks: a table or view,
    a column, or a view that no longer reads its tables.

    Raises:
        SchemaError: the warehouse is damaged.
    """
    check_complete(where, names, "duckdb")
    check_complete(where, names, "duckdb", conn.execute(COLUMNS_QUERY).all())
    for view in sorted(expected_objects("duckdb") - set(expected_columns("duckdb"))):
        try:
            conn.execute_raw(f"SELECT * FROM {view} LIMIT 0")
        except duckdb.Error as exc:
            raise SchemaError(
                f"the warehouse {where} is damaged: the view {view} no longer reads its "
                f"tables ({first_line(exc)}; changed outside rankhouse?); restore the file "
                "from a copy, or ingest again into a new warehouse"
            ) from None


def holds_nothing(conn: Connection) -> bool:
    """Whether the DuckDB file under ``conn`` holds nothing at all: no block written and
    nothing in its write-ahead log, as a file DuckDB has just created.

    Asked of DuckDB's storage rather than its catalogue: on a new file, the statement that
    :func:`object_names` tries first fails, and a failed name lookup, like a first
    listing of the catalogue, costs DuckDB about 10 ms. Only for a file: an in-memory database
    reports no blocks whatever it holds.
    """
    blocks, wal = conn.execute_raw(
        "SELECT total_blocks, wal_size FROM pragma_database_size() "
        "WHERE database_name = current_database()"
    ).one()
    return blocks == 0 and wal == "0 bytes"
