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


def refuse_foreign(where: str, names: Iterable[str]) -> None:
    """Refuse a DuckDB database that holds tables but no rankhouse schema (another application's
    file): rankhouse never adds its tables to it. An empty database is fine to initialise.

    Raises:
        SchemaError: ``names`` (the database's tables and views) lack ``schema_migrations`` but
            are not empty.
    """
    names = sorted(set(names))
    if not names or "schema_migrations" in names:
        return
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    raise SchemaError(
        f"{where} is not a rankhouse warehouse: it holds {len(names)} other "
        f"{noun(len(names), 'table or view', 'tables or views')} "
        f"({shown}) and no schema_migrations table; rankhouse does not add its tables to another "
        "application's database: name a new file with --db"
    )


def check_complete(where: str, names: Iterable[str], dialect: str = "duckdb") -> None:
    """Report a warehouse at the newest schema version that lacks one of its tables or views.

    Raises:
        SchemaError: a table or view the migrations create is missing (dropped by hand).
    """
    missing = sorted(expected_objects(dialect) - set(names))
    if missing:
        raise SchemaError(
            f"the warehouse {where} is damaged: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing from its schema (dropped outside "
            "rankhouse?); restore the file from a copy, or ingest again into a new warehouse"
        )


_CREATE = re.compile(
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I
)
_DROP = re.compile(r"DROP\s+(?:TABLE|VIEW)\s+(?:IF\s+EXISTS\s+)?(\w+)", re.I)
_RENAME = re.compile(r"ALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)", re.I)


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
