"""Schemas built by hand from the migration files, as an older rankhouse left them."""

from __future__ import annotations

from rankhouse.schema import known_migrations


def migrate_by_hand(con, dialect: str, version: int) -> None:
    """Run migrations 1 to ``version`` statement by statement on the warehouse connection
    ``con`` (every statement, the ``UPDATE``s included), each recorded in
    ``schema_migrations``."""
    con.execute_raw(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
        "applied_at TIMESTAMP NOT NULL)"
    )
    for migration in known_migrations(dialect)[:version]:
        for statement in migration.statements():
            con.execute_raw(statement)
        con.execute(
            "INSERT INTO schema_migrations VALUES (:v, :n, now())",
            {"v": migration.version, "n": migration.name},
        )
