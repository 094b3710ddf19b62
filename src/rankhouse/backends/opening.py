"""Checks every store makes when it opens: is this rankhouse's warehouse, and is it whole?

They are taken around the connection, not by it, so that every backend calls them the same
way, just after connecting (with the names its ``object_names`` finds): a database of another
application is never migrated (:func:`refuse_foreign`), and a warehouse lacking a table or
view of its schema is reported as damaged (:func:`check_complete`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from ..errors import SchemaError
from ..words import noun
from .schema import known_migrations

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
def expected_columns(dialect: str = "duckdb") -> dict[str, tuple[str, ...]]:
    """The columns of each table a warehouse holds once every known migration is applied, in
    order (read from the migrations' CREATE and ALTER TABLE statements)."""
    tables: dict[str, list[str]] = {"schema_migrations": ["version", "name", "applied_at"]}
    for migration in known_migrations(dialect):
        for statement in migration.statements():
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
    for i, char in enumerate(body):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    return [item.strip() for item in items if item.strip()]


@cache
def expected_objects(dialect: str = "duckdb") -> frozenset[str]:
    """The tables and views a warehouse holds once every known migration is applied."""
    names = {"schema_migrations"}
    for migration in known_migrations(dialect):
        for statement in migration.statements():
            if created := _CREATE.match(statement):
                names.add(created.group(1).lower())
            elif dropped := _DROP.match(statement):
                names.discard(dropped.group(1).lower())
            elif renamed := _RENAME.match(statement):
                names.discard(renamed.group(1).lower())
                names.add(renamed.group(2).lower())
    return frozenset(names)
