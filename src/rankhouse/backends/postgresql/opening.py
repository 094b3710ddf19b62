"""Opening a warehouse on a PostgreSQL server: the checks a DuckDB file gets, and who migrates.

* Reading never creates: a command that only reads, or a read-only session, on a schema that
  holds no warehouse says so and creates nothing (not even ``schema_migrations``).
* Another application's schema is refused untouched; a warehouse lacking a table, a view, a
  column or ``schema_migrations`` is reported as damaged (:mod:`rankhouse.backends.opening`).
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

from ...errors import NoWarehouseError, SchemaError
from ...version import release_of_schema
from ..opening import check_complete, refuse_foreign
from ..schema import (
    MIGRATION_LOCK,
    Migration,
    applied_versions,
    migrate,
    older_schema,
    pending_migrations,
)
from .connection import ServerConnection
from .locks import take
from .settings import parse_url

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
