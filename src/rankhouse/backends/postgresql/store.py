"""A team's store: a warehouse on a PostgreSQL server, through SQLAlchemy (psycopg 3).

The server keeps the data; measures are computed by DuckDB on this machine, in a
:class:`~.workspace.Workspace` that holds the rows evaluated (from the local
:class:`~.workspace.RowCache`, or fetched as Arrow through ADBC). Ingests parse in a local
staging warehouse and are published in one transaction (:mod:`.publish`, binary COPY). Many
processes write at once: advisory locks on content, names and evaluations, UNIQUE
constraints behind them.

**Opening a server's schema**: the checks a DuckDB file gets, and who migrates.

* Reading never creates: a command that only reads, or a read-only session, on a schema that
  holds no warehouse says so and creates nothing (not even ``schema_migrations``).
* Another application's schema is refused untouched; a warehouse lacking a table, a view, a
  column or ``schema_migrations`` is reported as damaged (:mod:`rankhouse.backends.schema`).
* Creating is not upgrading: the first command that stores creates the tables of an empty
  schema, but a warehouse at an older schema is upgraded only by ``rankhouse migrate``
  (:func:`upgrade_schema`); every other command refuses it, naming the schema, the release
  and the command (on a shared server, one teammate's new release must not lock out the
  others' older one without a word).
* Only the role that owns the schema migrates it: a writer's login, which may store and remove
  rows but not change tables (docs/scaling.md, Roles), is told so before anything is tried.
  Migrations run under an advisory lock, taken only when some are pending, so that processes
  opening a new database at once apply each one once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec
from typing import Any

from ...defaults import release_of_schema
from ...duck import load_package
from ...errors import (
    ConflictError,
    DatabaseError,
    NoWarehouseError,
    RankhouseError,
    SchemaError,
    WarehouseLockedError,
    first_line,
)
from ...lazy import psycopg
from ...lazy import sqlalchemy as sa
from ..base import EVALUATION_ROWS, Opening, Reclaimed, translated
from ..duckdb_file import DuckDBFile
from ..schema import (
    MIGRATION_LOCK,
    Migration,
    applied_versions,
    check_complete,
    migrate,
    older_schema,
    pending_migrations,
    refuse_foreign,
)
from .connection import (
    CONNECT_TIMEOUT_ENV,
    DEFAULT_STATEMENT_TIMEOUT,
    LOCK_TIMEOUT_ENV,
    STATEMENT_TIMEOUT_ENV,
    ServerConnection,
    connect_timeout,
    lock,
    parse_url,
    refuse_copy_stream,
    run_read_only,
    set_timeouts,
    take,
)
from .iceberg import IcebergRows, open_rows, split_url
from .publish import (
    RUN_ROW_BYTES,
    copy_into,
    publish,
    publish_all,
    vacuum_run_rows,
    with_run_id,
)
from .workspace import Workspace, libpq_url

#: The extra that installs the PostgreSQL drivers.
POSTGRES_EXTRA = 'pip install "rankhouse[postgres]"'


def require_postgres_drivers() -> None:
    """Raise one clear error when the PostgreSQL drivers are not installed."""
    # looked up, not imported: ADBC (and pyarrow with it) is imported only to fetch rows
    for package in ("sqlalchemy", "psycopg", "adbc_driver_postgresql"):
        if find_spec(package) is None:
            raise RankhouseError(
                f"a postgresql:// warehouse needs the PostgreSQL drivers ({package} is "
                f"missing); install them with: {POSTGRES_EXTRA}"
            )


class PostgreSQL:
    """A warehouse on a PostgreSQL server, opened, checked and migrated.

    Args:
        url: an SQLAlchemy URL (``postgresql+psycopg://...``); ``?iceberg=LOCATION`` on the
            command that creates the warehouse keeps its run rows in an Apache Iceberg table
            there (:mod:`.iceberg`).
        opening: how (:class:`~..base.Opening`). ``read_only``: every transaction of the
            sessions is read-only; ``create``: an empty schema may get the warehouse's tables;
            ``hold`` is for a DuckDB file's sake (a server's connections are pooled per call);
            ``upgrade``: None refuses a warehouse at an older schema, False opens it as it is,
            for :meth:`upgrade` (``rankhouse migrate``), True upgrades it on opening.
    """

    dialect = "postgresql"
    local_compute = False
    many_writers = True
    enforces_unique = True

    def __init__(self, url: str, opening: Opening = Opening()) -> None:
        read_only, create, _, upgrade = opening
        require_postgres_drivers()
        url, location = split_url(url)
        parsed = parse_url(url)
        if read_only:
            options = " ".join(
                filter(None, [parsed.query.get("options"), "-c default_transaction_read_only=on"])
            )
            parsed = parsed.update_query_dict({"options": options})
        self.url = url
        self.where = url.split("@")[-1]
        self.read_only = read_only
        self.engine = sa.create_engine(parsed)
        sa.event.listen(self.engine, "connect", _tune_postgresql)
        self._workspace: Workspace | None = None
        #: Where the run rows live when not in the server's tables (None: ``run_rows``).
        self.iceberg: IcebergRows | None = None
        try:
            open_schema(self, create, upgrade)
            self.iceberg = open_rows(self, location)
        except DatabaseError as exc:
            self.engine.dispose()
            raise RankhouseError(f"cannot open warehouse {self.where}: {exc.reason}") from None
        except BaseException:
            self.engine.dispose()
            raise

    def upgrade(self) -> list:
        """Apply the migrations the warehouse lacks, as its owner (``rankhouse migrate``)."""
        return upgrade_schema(self)

    def backup_command(self, version: int) -> str:
        """A command that copies the warehouse as it is (its schema at ``version``)."""
        with self.connect() as conn:
            return backup_command(self, conn, version)

    def object_names(self, conn: ServerConnection) -> list[str]:
        """The tables and views of the warehouse's own schema, in lower case."""
        return schema_objects(conn)[0]

    # --- connections -------------------------------------------------------------------------

    @contextmanager
    def session(self) -> Iterator[PostgreSQL]:
        """Nothing to hold: each call takes a connection from the pool and gives it back."""
        yield self

    @contextmanager
    def connect(self) -> Iterator[ServerConnection]:
        """A connection for reading."""
        with self._connection() as conn, translated(_errors(), self._refusal):
            yield ServerConnection(conn)

    @contextmanager
    def transaction(self) -> Iterator[ServerConnection]:
        """A connection inside one transaction: committed on success, rolled back on error.
        The Iceberg rows of the runs it deleted go once it has committed (a process killed
        in between leaves rows no catalogue row names: :meth:`.iceberg.IcebergRows.orphans`)."""
        with self._connection() as conn, translated(_errors(), self._refusal):
            with conn.begin():
                server = ServerConnection(conn)
                yield server
            if server.deleted_runs and self.iceberg is not None:
                self.iceberg.delete_unnamed(server.deleted_runs)

    @contextmanager
    def statement(self, sql: str) -> Iterator[tuple[list[str], Iterator[list[tuple]]] | None]:
        """One statement of the user's (``rankhouse sql``): read-only, in a transaction that is
        rolled back and refused to a login a transaction does not contain
        (:func:`.connection.run_read_only`);
        else in a transaction of its own, committed.

        Raises:
            RankhouseError: a statement or a login that read-only ``sql`` refuses, or
                ``COPY ... TO STDOUT``.
            DatabaseError: the server refused the statement.
        """
        if not self.read_only:
            refuse_copy_stream(sql)
            with self.transaction() as conn:
                yield conn.stream_raw(sql)
            return
        with self._connection() as raw, translated(_errors(), self._refusal):
            transaction = raw.begin()
            try:
                yield run_read_only(ServerConnection(raw), sql)
            finally:
                if transaction.is_active:
                    transaction.rollback()

    def _connection(self):
        """A new SQLAlchemy connection; an unreachable server or a refused login is a
        RankhouseError (one line on the command line), not a driver traceback."""
        try:
            return self.engine.connect()
        except sa.exc.DBAPIError as exc:
            shown = self.engine.url.set(drivername="postgresql", query={})
            where = shown.render_as_string(hide_password=True)
            reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
            if "timeout expired" in reason:
                seconds = connect_timeout(self.engine.url)
                reason = (
                    f"the server did not answer within {seconds} s (connect_timeout; wait longer "
                    f"with ?connect_timeout=SECONDS in the URL or ${CONNECT_TIMEOUT_ENV})"
                )
            raise RankhouseError(f"cannot connect to the warehouse {where}: {reason}") from None

    def _refusal(self, exc: BaseException) -> RankhouseError | None:
        """A statement the server refuses to this login (no privilege, sessions read-only by
        the role's settings, no schema to create the tables in) says what to do; a UNIQUE
        constraint that stopped a writer outside rankhouse's locks is a conflict. Refusals
        in a session rankhouse opened read-only itself are the caller's to explain
        (``rankhouse sql`` names --write): None."""
        reason = getattr(exc, "orig", None) or exc
        if isinstance(reason, psycopg.errors.UniqueViolation):
            return ConflictError(f"another writer stored the same name or content: {reason}")
        waited = _waited(reason)
        if waited is not None:
            return waited
        only_read = "this login may only read: open the warehouse with --read-only"
        if "schema_migrations" in str(reason):  # the owner's alone, even to a writer
            only_read = "only the role that owns the schema changes it, with rankhouse migrate"
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
        hint = next((h for kind, h in hints.items() if isinstance(reason, kind)), None)
        if hint is None:
            return None
        return RankhouseError(
            f"the server refused: {first_line(reason)} ({hint}; roles in docs/scaling.md)"
        )

    def workspace(self) -> Workspace:
        """The local DuckDB where this warehouse's evaluations compute (made when first
        needed)."""
        if self._workspace is None:
            self._workspace = Workspace(libpq_url(self.engine.url), self)
        return self._workspace

    @contextmanager
    def engine_connection(self, run_ids, qrels_id: int) -> Iterator[Any]:
        """The workspace's DuckDB connection, the rows loaded there."""
        workspace = self.workspace()
        workspace.load(run_ids, qrels_id)
        with workspace.scratch.connect() as conn:
            yield conn.duck

    @contextmanager
    def rows_connection(
        self, run_ids, qrels_id: int, *, load: bool
    ) -> Iterator[ServerConnection | Any]:
        """The workspace when the rows are loaded there (or cached, or ``load``: they are
        about to be evaluated), else the server, which counts a stored run's queries faster
        than it sends the rows."""
        workspace = self.workspace()
        if load or self.iceberg is not None or workspace.has(run_ids, qrels_id):
            workspace.load(run_ids, qrels_id)
            with workspace.scratch.connect() as conn:
                yield conn
            return
        with self.connect() as conn:
            yield conn

    # --- writing ---------------------------------------------------------------------------

    def store_values(
        self, conn: ServerConnection, duck, select: str, params: dict,
        table: str = "evaluation_values",
    ) -> None:  # fmt: skip
        """COPY the rows of ``select`` (read as Arrow from ``duck``) into
        ``evaluation_values`` (or ``table``), in the transaction of ``conn``."""
        load_package()  # the rows are read through the relation API
        rows = duck.sql(select, params=params).to_arrow_reader(batch_size=100_000)
        copy_into(conn, table, rows)

    def lock_evaluations(self, conn: ServerConnection, pairs) -> None:
        """Lock the evaluations of the (run id, qrels id) ``pairs`` for the rest of the
        transaction: two processes storing the same evaluation at once then store it once
        (the second replaces the first)."""
        lock(conn, [f"evaluations:{run_id}:{qrels_id}" for run_id, qrels_id in pairs])

    # --- a run's rows, taken out and put back (retention: rankhouse.catalog.retention) -------

    #: Bytes a run row takes on the server, index included (issue 37's measure), the estimate
    #: of the space a prune frees for reuse (docs/retention.md).
    run_row_bytes = RUN_ROW_BYTES

    def run_rows_table(self, conn: ServerConnection, run_id: int):
        """The rows of run ``run_id`` as an Arrow table (``query_id, doc_id, rank, score``),
        in query and document byte order, fetched through ADBC (or scanned from the Iceberg
        table that holds them)."""
        if self.iceberg is not None:
            return self.iceberg.rows_of(run_id)
        return self.workspace().fetch_table(
            "SELECT query_id, doc_id, rank, score FROM run_rows "
            f'WHERE run_id = {int(run_id)} ORDER BY query_id COLLATE "C", doc_id COLLATE "C"'
        )

    def delete_run_rows(self, conn: ServerConnection, run_id: int) -> int:
        """Delete the rows of run ``run_id`` (nothing else) in the transaction of ``conn``,
        holding the run's rows against another prune or restore; how many went. Rows in
        an Iceberg table go once the transaction has committed (:meth:`transaction`)."""
        lock(conn, [f"run_rows:{int(run_id)}"])
        if self.iceberg is not None:
            found = self.iceberg.count(run_id)
            conn.delete_run_rows(run_id)
            return found
        return int(
            conn.execute(
                "WITH gone AS (DELETE FROM run_rows WHERE run_id = :id RETURNING 1) "
                "SELECT count(*) FROM gone",
                {"id": int(run_id)},
            ).scalar_one()
        )

    def restore_run_rows(self, conn: ServerConnection, run_id: int, rows) -> int:
        """COPY ``rows`` (an Arrow table as :meth:`run_rows_table` gives) in as the rows of run
        ``run_id``, in the transaction of ``conn``; how many."""
        lock(conn, [f"run_rows:{int(run_id)}"])
        if self.iceberg is not None:
            self.iceberg.put_back(with_run_id(rows, run_id))
            return rows.num_rows
        copy_into(conn, "run_rows", with_run_id(rows, run_id).to_batches(max_chunksize=100_000))
        return rows.num_rows

    def compact(self) -> Reclaimed:
        """Plain ``VACUUM`` of ``run_rows`` (:func:`.publish.vacuum_run_rows`): the space of
        deleted rows becomes reusable by the table; the server's files keep their size."""
        with translated(_errors(), self._refusal):
            return Reclaimed(None, None, vacuum_run_rows(self.engine))

    @contextmanager
    def staging(self) -> Iterator[DuckDBFile]:
        """The workspace's staging warehouse, emptied for the next use when the block ends
        (cheaper than a new one)."""
        staging = self.workspace().staging
        try:
            yield staging
        finally:
            with staging.transaction() as conn:
                for table in _STAGED_TABLES:
                    conn.execute(f"DELETE FROM {table}")

    def publish(self, staging: DuckDBFile, results: list, place) -> list:
        """Copy what an ingest stored in ``staging`` to the server (:func:`.publish.publish`)."""
        return publish(self, staging, results, place)

    def publish_all(self, scratch: DuckDBFile, place) -> None:
        """Copy every qrels set, run and evaluation of ``scratch`` to the server."""
        publish_all(self, scratch, place)

    def close(self) -> None:
        """Close the workspace and the server's connections."""
        if self._workspace is not None:
            self._workspace.close()
        if self.iceberg is not None:
            self.iceberg.close()
        self.engine.dispose()

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        if self.iceberg is not None:
            mode += f", iceberg={self.iceberg.location!r}"
        return f"PostgreSQL({self.engine.url.render_as_string(hide_password=True)!r}{mode})"


#: What a staging warehouse may hold after an ingest or a trec-eval, children first.
_STAGED_TABLES = (*EVALUATION_ROWS, "evaluations", "judgments", "judgment_intents")
_STAGED_TABLES += ("qrels_sets", "run_rows", "runs")


def _waited(reason: BaseException) -> RankhouseError | None:
    """A statement the server stopped at one of the session's time limits (:mod:`.connection`)
    says which, and how to change it."""
    if isinstance(reason, psycopg.errors.LockNotAvailable):
        return WarehouseLockedError(
            "the server stopped waiting for a lock that another session holds (lock_timeout: "
            f"${LOCK_TIMEOUT_ENV} seconds, default 30): run again when it has finished, or wait "
            f"longer with ${LOCK_TIMEOUT_ENV}=SECONDS"
        )
    if isinstance(reason, psycopg.errors.QueryCanceled) and "statement timeout" in str(reason):
        return RankhouseError(
            "the server stopped the statement at its time limit (statement_timeout: "
            f"${STATEMENT_TIMEOUT_ENV} seconds, default {DEFAULT_STATEMENT_TIMEOUT}; 0: none)"
        )
    return None


def _errors() -> tuple[type[BaseException], ...]:
    """The drivers' errors a statement raises (psycopg's own: execute_raw, COPY)."""
    return (sa.exc.DBAPIError, psycopg.Error)


def _tune_postgresql(dbapi_connection, _record) -> None:
    # JSONB comes back as its text, as the DuckDB file's VARCHAR does: one code path decodes it.
    from psycopg.types.string import TextLoader

    dbapi_connection.adapters.register_loader("jsonb", TextLoader)
    set_timeouts(dbapi_connection)


# --- opening a server's schema --------------------------------------------------------------------


#: Tables and views of the session's schema with their columns, in one round trip; a table
#: without columns comes once with a NULL column. Unlike information_schema, it lists tables
#: this login has no privilege on: they still make a schema another application's.
SCHEMA_QUERY = """
SELECT c.relname, a.attname
FROM pg_class c
LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relnamespace = to_regnamespace(current_schema()) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
"""

#: What a refusal of another application's schema tells the user to do.
OTHER_SCHEMA = (
    "name a schema of its own, e.g. ?options=-csearch_path%3Drankhouse in the URL (docs/scaling.md)"
)


def schema_objects(conn: ServerConnection) -> tuple[list[str], list[tuple[str, str]]]:
    """The tables and views of the warehouse's schema, and their (table, column) pairs."""
    rows = conn.execute(SCHEMA_QUERY).all()
    names = sorted({row[0].lower() for row in rows})
    return names, [(row[0].lower(), row[1].lower()) for row in rows if row[1] is not None]


def open_schema(store, create: bool, upgrade: bool | None = None) -> None:
    """Check the schema of the PostgreSQL ``store``; create its tables when it may (the
    module). ``upgrade``: None refuses an older schema; False leaves it for the caller
    (``rankhouse migrate``, :func:`upgrade_schema`); True upgrades it (this login permitting).

    Raises:
        NoWarehouseError: no warehouse there, and ``create`` is false or ``store`` read-only.
        SchemaError: another application's schema, a damaged or newer warehouse, an older one
            (``upgrade`` None), or one that needs migrations this login may not apply.
        WarehouseLockedError: another process held the migration lock for the whole wait.
    """
    where = store.where
    with store.connect() as conn:
        names, columns = schema_objects(conn)
        refuse_foreign(where, names, OTHER_SCHEMA)
        fresh = "schema_migrations" not in names
        if fresh and (store.read_only or not create):
            raise NoWarehouseError(
                f"no warehouse at {where}: its schema holds no tables yet; ingest qrels or a "
                "run to create one (as the role that owns the schema, docs/scaling.md)"
            )
        pending = _pending(where, conn, names)
        if pending and not fresh and upgrade is False:
            return  # rankhouse migrate: the caller says what it will do, then does it
        if pending and not fresh and (upgrade is None or store.read_only):
            version = max(applied_versions(conn, names))
            raise older_schema(where, version, pending, _how_to_upgrade(store, conn, version))
        if pending:
            _check_may_migrate(store, conn, names, pending)
    if pending:
        _apply(store)
        with store.connect() as conn:  # another process may have migrated part of it
            names, columns = schema_objects(conn)
    check_complete(where, names, store.dialect, columns)


def upgrade_schema(store) -> list[Migration]:
    """Apply the migrations the warehouse of ``store`` lacks (``rankhouse migrate``), refused
    before anything is tried to a login that may not; returns those applied (none when
    another process applied them first).

    Raises:
        SchemaError: this login may not change the schema, or a migration failed (rolled
            back: the warehouse is as it was).
        WarehouseLockedError: another process held the migration lock for the whole wait.
    """
    with store.connect() as conn:
        names = schema_objects(conn)[0]
        pending = _pending(store.where, conn, names)
        if pending:
            _check_may_migrate(store, conn, names, pending)
    applied = _apply(store) if pending else []
    with store.connect() as conn:
        names, columns = schema_objects(conn)
    check_complete(store.where, names, store.dialect, columns)
    return applied


def _apply(store) -> list[Migration]:
    """The pending migrations applied under the migration lock. An empty schema gets them all
    in one transaction: another process opening it meanwhile sees no tables or every table,
    never a schema half built, which it would refuse as an older one."""
    with store.connect() as locked:
        take(locked, MIGRATION_LOCK, _MIGRATING, session=True)
        locked.commit()
        try:
            with store.connect() as conn:  # under the lock, nobody else migrates
                names = schema_objects(conn)[0]
            return migrate(store, names)  # what is still pending once the lock is held
        except SchemaError as exc:
            raise SchemaError(f"cannot open the warehouse {store.where}: {exc}") from None
        finally:
            locked.execute("SELECT pg_advisory_unlock(:key)", {"key": MIGRATION_LOCK})
            locked.commit()


def backup_command(store, conn: ServerConnection, version: int) -> str:
    """A pg_dump command that copies the warehouse's schema as it is, at ``version``."""
    url = parse_url(store.url)
    schema = conn.execute("SELECT current_schema() AS s").scalar()
    options = " ".join(
        f"--{name}={value}"
        for name, value in (("host", url.host), ("port", url.port), ("username", url.username))
        if value is not None
    )
    return (
        f"pg_dump --format=custom --schema={schema} --file={schema}-schema-{version}.dump "
        f"{options} {url.database}"
    )


def _how_to_upgrade(store, conn: ServerConnection, version: int) -> str:
    return (
        f"the role that owns the schema upgrades it with `rankhouse --db "
        f"postgresql://OWNER@{store.where} migrate` after a backup (e.g. "
        f"{backup_command(store, conn, version)}); until then, keep to rankhouse "
        f"{release_of_schema(version)} (docs/scaling.md, Upgrading)"
    )


#: What the migration lock guards, in words.
_MIGRATING = "the lock on the warehouse's schema (held while a process migrates it)"


def _pending(where: str, conn: ServerConnection, names: list[str]) -> list:
    try:
        return pending_migrations(conn, names)
    except SchemaError as exc:
        raise SchemaError(f"cannot open the warehouse {where}: {exc}") from None


_PRIVILEGES = """
SELECT current_user AS login, current_schema() AS schema,
       has_schema_privilege(current_schema(), 'CREATE') AS may_create,
       (SELECT pg_has_role(tableowner, 'USAGE') FROM pg_tables
        WHERE schemaname = current_schema() AND tablename = 'schema_migrations') AS owns
"""


def _check_may_migrate(store, conn: ServerConnection, names: list[str], pending) -> None:
    """Refuse, before trying, migrations that this login may not apply: creating tables needs
    the CREATE privilege on the schema, changing them the role that owns them."""
    found = conn.execute(_PRIVILEGES).one()
    fresh = "schema_migrations" not in names
    if found.may_create and (fresh or found.owns):
        return
    if fresh:
        raise SchemaError(
            f"the warehouse {store.where} needs its tables created, and this login "
            f"({found.login}) may not change the schema {found.schema}: only the role that owns "
            "it does; run one rankhouse command that writes (e.g. ingest) as that role first "
            "(docs/scaling.md, Roles)"
        )
    version = max(applied_versions(conn, names))
    raise older_schema(
        store.where,
        version,
        pending,
        f"this login ({found.login}) may not change the schema {found.schema}, only the role "
        f"that owns it: run `rankhouse --db postgresql://OWNER@{store.where} migrate` as that "
        "role (docs/scaling.md, Upgrading)",
    )
