"""The warehouse's schema: numbered migrations applied in order, and the checks every store
makes when it opens (is this rankhouse's warehouse, and is it whole?).

DuckDB files take ``migrations/NNNN_name.sql``; PostgreSQL servers take the same numbers from
``migrations/postgresql/`` (its types, byte-wise collation and UNIQUE constraints). Both folders
move in step: migration N means the same schema on either backend, and each is recorded in
``schema_migrations``. Each schema version belongs to the release that brought it
(:data:`rankhouse.version.RELEASES`); from migration 15 on, ``schema_migrations.release``
records it, so that an older rankhouse meeting a newer warehouse names the release it needs.
A DuckDB file is upgraded when it is opened; a server's warehouse only by ``rankhouse
migrate`` (:func:`upgrade`, docs/scaling.md).

The checks on opening are taken around the connection, not by it, so that every backend calls
them the same way, just after connecting (with the names its ``object_names`` finds): a
database of another application is never migrated (:func:`refuse_foreign`), and a warehouse
lacking a table, view or column of its schema is reported as damaged
(:func:`check_complete`); what the schema holds is read from the migrations themselves
(:func:`expected_objects`, :func:`expected_columns`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..defaults import __version__, migrations_dir, release_of_schema
from ..errors import DatabaseError, SchemaError, noun

if TYPE_CHECKING:
    from .base import Backend, Connection

_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path

    def statements(self) -> list[str]:
        """The file's statements, split on ';' at line ends (migrations hold no ';' in strings)."""
        text = "\n".join(
            line
            for line in self.path.read_text(encoding="utf-8").splitlines()
            if not line.lstrip().startswith("--")
        )
        return [part.strip() for part in re.split(r";\s*(?:\n|$)", text) if part.strip()]

    @property
    def summary(self) -> str:
        """What the migration changes, in one sentence: the first of the header comment of its
        file in ``migrations/`` (the same schema on every backend)."""
        header = []
        for line in (migration_folder() / self.path.name).read_text(encoding="utf-8").splitlines():
            if not line.startswith("--") or not line[2:].strip():
                break
            header.append(line[2:].strip())
        text = re.sub(r"^\d{4}[^:]*:\s*", "", " ".join(header))
        return re.split(r"(?<=\.)\s", text, maxsplit=1)[0]

    @property
    def release(self) -> str:
        """The release that brought this migration."""
        return release_of_schema(self.version) or __version__

    @property
    def label(self) -> str:
        """``0015_releases``: how messages name the migration."""
        return f"{self.version:04d}_{self.name}"


#: Key of the PostgreSQL advisory lock held while migrating (any constant shared by all).
MIGRATION_LOCK = 0x72616E6B  # 'rank'


def migration_folder(dialect: str = "duckdb") -> Path:
    """The folder of the migrations for a backend's dialect: the default store's (a DuckDB
    file) at the top of ``migrations/``, every other store's in the folder of its name."""
    base = migrations_dir()
    return base if dialect == "duckdb" else base / dialect


def known_migrations(dialect: str = "duckdb") -> list[Migration]:
    """Every migration shipped with this version of rankhouse for ``dialect``, in order."""
    found = []
    # listed, not globbed: pathlib's glob costs the opening of every warehouse a millisecond
    for path in sorted(p for p in migration_folder(dialect).iterdir() if p.name.endswith(".sql")):
        match = _MIGRATION_NAME.match(path.name)
        if match is None:
            raise SchemaError(f"migration file {path.name!r} is not named NNNN_name.sql")
        found.append(Migration(int(match.group(1)), match.group(2), path))
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise SchemaError(f"migrations must be numbered 1..n without gaps, found {versions}")
    return found


def applied_versions(conn: Connection, names: Collection[str] | None = None) -> list[int]:
    """Versions recorded in ``schema_migrations`` (empty for a new warehouse); ``names``, the
    tables of the database when the caller has just listed them, saves looking again.

    Raises:
        SchemaError: the table is another application's (its versions are not rankhouse's
            numbered migrations, or name other migrations than rankhouse's).
    """
    return sorted(row.version for row in _recorded(conn, names))


def _recorded(conn: Connection, names: Collection[str] | None) -> list:
    """The rows of ``schema_migrations``, checked to be rankhouse's (:func:`applied_versions`)."""
    present = "schema_migrations" in names if names is not None else None
    if not (conn.has_table("schema_migrations") if present is None else present):
        return []
    recorded = conn.execute("SELECT * FROM schema_migrations")
    if not {"version", "name"} <= set(recorded.keys()):
        raise _foreign(f"it has the columns {', '.join(recorded.keys())}")
    rows = recorded.all()
    known = {m.version: m.name for m in known_migrations(conn.dialect)}
    for row in rows:
        if not isinstance(row.version, int) or isinstance(row.version, bool):
            raise _foreign(f"version holds {row.version!r}")
        if row.version in known and row.name != known[row.version]:
            raise _foreign(f"version {row.version} is named {row.name!r}")
    return rows


def _foreign(found: str) -> SchemaError:
    return SchemaError(
        f"it is not a rankhouse warehouse: its schema_migrations table is another "
        f"application's ({found}, not one of rankhouse's numbered migrations); rankhouse does "
        "not add its tables to another application's database"
    )


def pending_migrations(conn: Connection, names: Collection[str] | None = None) -> list[Migration]:
    """Migrations not yet applied; raises SchemaError if the warehouse is newer than the code.
    ``names``: as for :func:`applied_versions`."""
    rows = _recorded(conn, names)
    applied = sorted(row.version for row in rows)
    known = known_migrations(conn.dialect)
    newest_known = known[-1].version if known else 0
    if applied and max(applied) > newest_known:
        newest = max(rows, key=lambda row: row.version)
        needed = getattr(newest, "release", None)  # recorded since schema 15
        release = f"rankhouse {needed} or newer" if needed else "a newer rankhouse"
        install = f"'rankhouse>={needed}'" if needed else "rankhouse"
        raise SchemaError(
            f"this warehouse is at schema {newest.version} ({release}); this is rankhouse "
            f"{__version__}, which knows schemas up to {newest_known}: upgrade rankhouse "
            f"(pip install -U {install})"
        )
    lost = sorted(set(range(1, max(applied, default=0) + 1)) - set(applied))
    if lost:  # migrations apply in order: a hole means a row was deleted by hand
        raise SchemaError(
            f"schema_migrations records version {max(applied)} but not "
            f"{', '.join(map(str, lost))} (a row deleted by hand?); restore the file from a copy"
        )
    return [m for m in known if m.version not in set(applied)]


def schema_version(conn: Connection) -> int:
    """The warehouse's schema version: the newest migration it records (0: none)."""
    return max(applied_versions(conn), default=0)


@dataclass(frozen=True)
class SchemaUpgrade:
    """What ``rankhouse migrate`` (:meth:`rankhouse.Warehouse.migrate`) found and did.

    Attributes:
        where: the warehouse, as messages name it.
        dialect: its store's dialect.
        version: its schema version before.
        pending: the migrations it lacked, in order.
        applied: those applied (none on a dry run, or when another process applied them first).
        backup: a command that copies the warehouse as it is.
    """

    where: str
    dialect: str
    version: int
    pending: tuple[Migration, ...]
    applied: tuple[Migration, ...]
    backup: str

    @property
    def newest(self) -> int:
        """The schema version this release needs."""
        return self.pending[-1].version if self.pending else self.version


def upgrade(db: Backend, *, dry_run: bool = False) -> SchemaUpgrade:
    """What ``rankhouse migrate`` does on the store ``db`` (opened with ``upgrade=False``):
    read its schema version and the migrations it lacks, then, unless ``dry_run``, apply them
    as its store does (a server: as its owner, under the migration lock)."""
    with db.connect() as conn:
        version = schema_version(conn)
        pending = tuple(pending_migrations(conn))
    backup = db.backup_command(version)
    applied = tuple(db.upgrade()) if pending and not dry_run else ()
    return SchemaUpgrade(db.where, db.dialect, version, pending, applied, backup)


def older_schema(where: str, version: int, pending: list[Migration], how: str) -> SchemaError:
    """The refusal of a warehouse at an older schema than this release needs, which
    ``rankhouse migrate`` upgrades (``how``: who runs it, and the backup first)."""
    labels = ", ".join(m.label for m in pending)
    return SchemaError(
        f"the warehouse {where} is at schema {version} (rankhouse {release_of_schema(version)}); "
        f"this is rankhouse {__version__}, which needs schema {pending[-1].version} ({labels}): "
        f"{how}"
    )


def migrate(db: Backend, names: Collection[str] | None = None) -> list[Migration]:
    """Apply pending migrations of the store ``db``, each in its own transaction with its row
    in ``schema_migrations``. Returns those applied.

    ``names``: the store's tables as the caller listed them just before, when no other
    process can have changed them since (a DuckDB file has one writer); None lists them
    again. A store with many writers holds a lock of its own around this call, so that
    processes opening a new database at once apply each migration once.
    """
    with db.connect() as conn:
        pending = pending_migrations(conn, names)
    if not pending:
        return pending
    if names is not None and not names:  # a database that holds nothing yet
        return _create(db, pending)
    for migration in pending:
        try:
            with db.transaction() as conn:  # a failure leaves no schema_migrations behind
                conn.execute(_MIGRATIONS_TABLE)
                _apply(conn, migration, migration.statements())
        except DatabaseError as exc:  # rolled back: the warehouse is as it was
            raise _failed(migration, exc) from exc
    return pending


def _create(db: Backend, pending: list[Migration]) -> list[Migration]:
    """Every migration applied to a database that holds nothing, in one transaction.

    The tables the migrations create hold no rows yet, so their statements that change rows
    (``UPDATE``, ``DELETE``: what carries old values forward) change nothing and are skipped;
    they would cost binding alone (DuckDB's JSON functions: 10 ms). The schema is the one the
    migrations build one by one (tests/backends/test_schema_fresh.py compares the two).
    """
    migration = pending[0]
    try:
        with db.transaction() as conn:
            conn.execute(_MIGRATIONS_TABLE)
            for migration in pending:
                kept = [s for s in migration.statements() if not _ROW_CHANGE.match(s)]
                _apply(conn, migration, kept)
    except DatabaseError as exc:  # rolled back: the database holds nothing still
        raise _failed(migration, exc) from exc
    return pending


_MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
    " name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
)
_ROW_CHANGE = re.compile(r"(UPDATE|DELETE)\s", re.IGNORECASE)


#: The first migration whose row records its release (migration 15 adds the column).
RELEASE_RECORDED = 15


def _apply(conn: Connection, migration: Migration, statements: list[str]) -> None:
    if statements:
        conn.execute_script(";\n".join(statements))
    values = {"v": migration.version, "n": migration.name, "t": utc_now()}
    if migration.version < RELEASE_RECORDED:
        conn.execute("INSERT INTO schema_migrations VALUES (:v, :n, :t)", values)
        return
    conn.execute(
        "INSERT INTO schema_migrations (version, name, applied_at, release) "
        "VALUES (:v, :n, :t, :r)",
        values | {"r": migration.release},
    )


def _failed(migration: Migration, exc: DatabaseError) -> SchemaError:
    reason = exc.reason
    return SchemaError(
        f"migration {migration.version:04d}_{migration.name} failed ({reason}): the "
        "schema does not match the versions schema_migrations records (a row deleted or "
        "a table changed by hand?); restore the file from a copy"
    )


def utc_now() -> datetime:
    """Now in UTC without a time zone, as the warehouse's TIMESTAMP columns hold it."""
    return datetime.now(UTC).replace(tzinfo=None)


# --- is this rankhouse's warehouse, and is it whole? ----------------------------------------------


#: The tables and views of the warehouse's own schema, on DuckDB and PostgreSQL alike.
OBJECTS_QUERY = (
    "SELECT table_name FROM information_schema.tables "
    "WHERE table_schema = current_schema() AND table_catalog = current_database()"
)


#: The columns of the warehouse's own tables, on DuckDB and PostgreSQL alike (a damaged
#: warehouse is listed with it: :func:`check_complete`).
COLUMNS_QUERY = (
    "SELECT table_name, column_name FROM information_schema.columns "
    "WHERE table_schema = current_schema() AND table_catalog = current_database()"
)

#: Tables every rankhouse warehouse has had since its first migration: a database holding
#: them all without ``schema_migrations`` is a damaged warehouse, not another application's.
CORE_TABLES = frozenset({"qrels_sets", "judgments", "runs", "run_rows"})

#: What a refusal of another application's file tells the user to do.
NEW_FILE = "name a new file with --db"


def refuse_foreign(where: str, names: Iterable[str], remedy: str = NEW_FILE) -> None:
    """Refuse a database that holds tables but no rankhouse schema (another application's
    file, or schema): rankhouse never adds its tables to it. An empty database is fine to
    initialise.

    Raises:
        SchemaError: ``names`` (the database's tables and views) lack ``schema_migrations`` but
            are not empty; worded as damage when they hold rankhouse's own tables.
    """
    names = sorted(set(names))
    if not names or "schema_migrations" in names:
        return
    if set(names) >= CORE_TABLES:
        raise _damaged(where, ["schema_migrations"])
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    raise SchemaError(
        f"{where} is not a rankhouse warehouse: it holds {len(names)} other "
        f"{noun(len(names), 'table or view', 'tables or views')} "
        f"({shown}) and no schema_migrations table; rankhouse does not add its tables to another "
        f"application's database: {remedy}"
    )


def check_complete(
    where: str,
    names: Iterable[str],
    dialect: str = "duckdb",
    columns: Iterable[tuple[str, str]] | None = None,
) -> None:
    """Report a warehouse at the newest schema version that lacks one of its tables or views,
    or (given ``columns``, its (table, column) pairs) a column of one of its tables.

    Raises:
        SchemaError: a table, view or column the migrations create is missing (dropped by
            hand).
    """
    missing = sorted(expected_objects(dialect) - set(names))
    if missing:
        raise _damaged(where, missing)
    if columns is None:
        return
    found = {(table.lower(), column.lower()) for table, column in columns}
    lost = [
        f"column {table}.{column}"
        for table, expected in expected_columns(dialect).items()
        for column in expected
        if (table, column) not in found
    ]
    if lost:
        raise _damaged(where, lost)


def _damaged(where: str, missing: list[str]) -> SchemaError:
    return SchemaError(
        f"the warehouse {where} is damaged: {', '.join(missing)} "
        f"{'is' if len(missing) == 1 else 'are'} missing from its schema (dropped outside "
        "rankhouse?); restore the file from a copy, or ingest again into a new warehouse"
    )


_CREATE = re.compile(
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I
)
_DROP = re.compile(r"DROP\s+(?:TABLE|VIEW)\s+(?:IF\s+EXISTS\s+)?(\w+)", re.I)
_RENAME = re.compile(r"ALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)", re.I)


_ALTER = re.compile(
    r"ALTER\s+TABLE\s+(\w+)\s+(ADD|DROP|RENAME)\s+(?:COLUMN\s+)?(\w+)(?:\s+TO\s+(\w+))?", re.I
)
#: What begins a table constraint (not a column) in a CREATE TABLE.
_CONSTRAINTS = {"primary", "unique", "constraint", "foreign", "check", "exclude"}


@cache
def _final_statements(dialect: str) -> tuple[str, ...]:
    """The statements of every known migration for ``dialect``, in order, read once for
    :func:`expected_columns` and :func:`expected_objects` (each warehouse opening asks both)."""
    return tuple(s for migration in known_migrations(dialect) for s in migration.statements())


@cache
def expected_columns(dialect: str = "duckdb") -> dict[str, tuple[str, ...]]:
    """The columns of each table a warehouse holds once every known migration is applied, in
    order (read from the migrations' CREATE and ALTER TABLE statements)."""
    tables: dict[str, list[str]] = {"schema_migrations": ["version", "name", "applied_at"]}
    for statement in _final_statements(dialect):
        statement = re.sub(r"--[^\n]*", "", statement)
        created = _CREATE.match(statement)
        if created and re.match(r"CREATE\s+TABLE", statement, re.I):
            body = statement[statement.index("(") + 1 : statement.rindex(")")]
            tables[created.group(1).lower()] = [
                item.split()[0].lower()
                for item in _top_level_items(body)
                if item.split()[0].lower() not in _CONSTRAINTS
            ]
        elif dropped := _DROP.match(statement):
            tables.pop(dropped.group(1).lower(), None)
        elif renamed := _RENAME.match(statement):
            tables[renamed.group(2).lower()] = tables.pop(renamed.group(1).lower())
        elif altered := _ALTER.match(statement):
            table, verb, name, new_name = (g and g.lower() for g in altered.groups())
            if verb == "rename" and new_name:
                columns = tables[table]
                columns[columns.index(name)] = new_name
            elif verb == "add":
                tables[table].append(name)
            elif verb == "drop" and name in tables[table]:
                tables[table].remove(name)
    return {table: tuple(columns) for table, columns in tables.items()}


def _top_level_items(body: str) -> list[str]:
    """The comma-separated items of a CREATE TABLE's parentheses (commas inside nested
    parentheses, as in ``DEFAULT nextval('ids')`` or ``DECIMAL(10, 2)``, do not split)."""
    items, depth, start = [], 0, 0
    for found in re.finditer(r"[(),]", body):  # the characters that matter, not every one
        char = found.group()
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(body[start : found.start()])
            start = found.end()
    items.append(body[start:])
    return [item.strip() for item in items if item.strip()]


@cache
def expected_objects(dialect: str = "duckdb") -> frozenset[str]:
    """The tables and views a warehouse holds once every known migration is applied."""
    names = {"schema_migrations"}
    for statement in _final_statements(dialect):
        if created := _CREATE.match(statement):
            names.add(created.group(1).lower())
        elif dropped := _DROP.match(statement):
            names.discard(dropped.group(1).lower())
        elif renamed := _RENAME.match(statement):
            names.discard(renamed.group(1).lower())
            names.add(renamed.group(2).lower())
    return frozenset(names)
