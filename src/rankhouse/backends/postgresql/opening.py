"""Opening a warehouse on a PostgreSQL server: the checks a DuckDB file gets, and who migrates.

* Reading never creates: a command that only reads, or a read-only session, on a schema that
  holds no warehouse says so and creates nothing (not even ``schema_migrations``).
* Another application's schema is refused untouched; a warehouse lacking a table, a view, a
  column or ``schema_migrations`` is reported as damaged (:mod:`rankhouse.backends.opening`).
* Only the role that owns the schema migrates it: a writer's login, which may store and remove
  rows but not change tables (docs/scaling.md, Roles), is told to run one command as the
  owner, before anything is tried. Migrations run under an advisory lock, taken only when
  some are pending, so that processes opening a new database at once apply each one once.
"""

from __future__ import annotations

from ...errors import NoWarehouseError, SchemaError
from ..opening import check_complete, refuse_foreign
from ..schema import MIGRATION_LOCK, migrate, pending_migrations
from .connection import ServerConnection
from .locks import take

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


def open_schema(store, create: bool) -> None:
    """Check the schema of the PostgreSQL ``store``; migrate it when it may (the module).

    Raises:
        NoWarehouseError: no warehouse there, and ``create`` is false or ``store`` read-only.
        SchemaError: another application's schema, a damaged or newer warehouse, or one that
            needs migrations this login may not apply.
        WarehouseLockedError: another process held the migration lock for the whole wait.
    """
    where = store.where
    with store.connect() as conn:
        names, columns = schema_objects(conn)
        refuse_foreign(where, names, OTHER_SCHEMA)
        if "schema_migrations" not in names and (store.read_only or not create):
            raise NoWarehouseError(
                f"no warehouse at {where}: its schema holds no tables yet; ingest qrels or a "
                "run to create one (as the role that owns the schema, docs/scaling.md)"
            )
        pending = _pending(where, conn, names)
        if pending and store.read_only:
            raise SchemaError(
                "this warehouse needs a schema upgrade; open it once without --read-only"
            )
        if pending:
            _check_may_migrate(conn, where, names, pending)
    if pending:
        with store.connect() as locked:
            take(locked, MIGRATION_LOCK, _MIGRATING, session=True)
            locked.commit()
            try:
                migrate(store)  # what is still pending once the lock is held
            except SchemaError as exc:
                raise SchemaError(f"cannot open the warehouse {where}: {exc}") from None
            finally:
                locked.execute("SELECT pg_advisory_unlock(:key)", {"key": MIGRATION_LOCK})
                locked.commit()
        with store.connect() as conn:  # another process may have migrated part of it
            names, columns = schema_objects(conn)
    check_complete(where, names, store.dialect, columns)


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


def _check_may_migrate(conn: ServerConnection, where: str, names: list[str], pending) -> None:
    """Refuse, before trying, migrations that this login may not apply: creating tables needs
    the CREATE privilege on the schema, changing them the role that owns them."""
    found = conn.execute(_PRIVILEGES).one()
    fresh = "schema_migrations" not in names
    if found.may_create and (fresh or found.owns):
        return
    versions = ", ".join(f"{m.version:04d}_{m.name}" for m in pending)
    needed = "its tables created" if fresh else f"a schema upgrade ({versions})"
    raise SchemaError(
        f"the warehouse {where} needs {needed}, and this login ({found.login}) may not change "
        f"the schema {found.schema}: only the role that owns it does; run one rankhouse "
        "command that writes (e.g. ingest) as that role first (docs/scaling.md, Roles)"
    )
