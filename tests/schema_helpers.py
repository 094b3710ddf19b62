"""Schemas built by hand from the migration files, as an older rankhouse left them."""

from __future__ import annotations

from contextlib import contextmanager

import duckdb

from rankhouse.backends.schema import known_migrations


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
        con.execute(  # the columns named: migration 15 adds one (release)
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (:v, :n, now())",
            {"v": migration.version, "n": migration.name},
        )


def insert_run_and_qrels(con, count: int = 1) -> None:
    """A run 'r' and a qrels set 'q' (each id 1), as an older rankhouse stored them, each with
    ``count`` queries and ``count`` rows (judgments, relevant ones)."""
    con.execute(
        "INSERT INTO runs (name, system_tag, source, content_sha256, parse_options, "
        "ingested_at, metadata, order_by, num_queries, num_rows) VALUES "
        "('r', 't', 'f', 'r', '{}', now(), '{}', 'score', :n, :n)",
        {"n": count},
    )
    con.execute(
        "INSERT INTO qrels_sets (name, source, content_sha256, parse_options, ingested_at, "
        "num_queries, num_judgments, num_relevant) VALUES ('q', 'f', 'x', '{}', now(), :n, :n, :n)",
        {"n": count},
    )


#: DuckDB's description of a database's schema, every object with its definition.
CATALOG = {
    "tables": "SELECT table_name, sql FROM duckdb_tables() WHERE NOT internal",
    "columns": "SELECT table_name, column_index, column_name, data_type, is_nullable, "
    "column_default FROM duckdb_columns() WHERE NOT internal",
    "views": "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal",
    "sequences": "SELECT sequence_name, start_value, increment_by, last_value "
    "FROM duckdb_sequences()",
    "constraints": "SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints()",
    "indexes": "SELECT index_name, table_name, sql FROM duckdb_indexes()",
}


def described(path) -> dict[str, list]:
    """The DuckDB file's schema (every object with its definition), its tables' row counts
    and its recorded migrations."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        found = {
            name: sorted(map(str, con.execute(query).fetchall())) for name, query in CATALOG.items()
        }
        tables = [
            name
            for (name,) in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE NOT internal"
            ).fetchall()
        ]
        found["rows"] = sorted(
            (table, con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])
            for table in tables
        )
        found["migrations"] = con.execute(
            "SELECT version, name FROM schema_migrations ORDER BY version"
        ).fetchall()
        return found
    finally:
        con.close()


class RawDatabase:
    """A database as rankhouse's SQL sees it, opened without rankhouse's checks and
    migrations (the stores always migrate on opening): for building an older schema by hand.

    Args:
        url: a warehouse URL (:func:`rankhouse.warehouse.resolve_target`'s).
    """

    def __init__(self, url: str) -> None:
        from rankhouse.backends import duckdb_path

        path = duckdb_path(url)
        self.dialect = "duckdb" if path is not None else "postgresql"
        if path is not None:
            from rankhouse.defaults import DUCKDB_CONFIG

            self._duck = duckdb.connect(path, config=DUCKDB_CONFIG)
        else:
            import sqlalchemy as sa

            self._engine = sa.create_engine(url)

    @contextmanager
    def transaction(self):
        """A connection in one transaction, committed at the end."""
        if self.dialect == "duckdb":
            from rankhouse.backends.duckdb_file.connection import DuckDBConnection

            self._duck.begin()
            yield DuckDBConnection(self._duck)
            self._duck.commit()
            return
        from rankhouse.backends.postgresql.connection import ServerConnection

        with self._engine.connect() as conn, conn.begin():
            yield ServerConnection(conn)

    def close(self) -> None:
        if self.dialect == "duckdb":
            self._duck.close()
        else:
            self._engine.dispose()
