"""A database that holds nothing gets every migration in one transaction, without the
statements that change rows (there are none to change): the schema must be the one that the
migration files build statement by statement, the UPDATEs included."""

from __future__ import annotations

import duckdb
import pytest
from schema_helpers import migrate_by_hand

from rankhouse import SchemaError, Warehouse, schema
from rankhouse.schema import known_migrations
from rankhouse.warehouse import resolve_target

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


def _described(path) -> dict[str, list]:
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


def _one_by_one(path) -> None:
    """The schema as the migration files build it: every statement run."""
    db = Warehouse._open_database(resolve_target(path), read_only=False)
    try:
        with db.transaction() as con:
            migrate_by_hand(con, "duckdb", len(known_migrations()))
    finally:
        db.close()


def test_a_new_warehouse_has_the_schema_the_migrations_build(tmp_path):
    fresh, stepped = tmp_path / "fresh.duckdb", tmp_path / "stepped.duckdb"
    Warehouse(fresh).close()
    _one_by_one(stepped)
    built, expected = _described(fresh), _described(stepped)
    assert built == expected
    assert len(built["migrations"]) == len(known_migrations())
    assert all(count == 0 for table, count in built["rows"] if table != "schema_migrations")


def test_a_new_warehouse_skips_only_statements_that_change_rows():
    skipped = [
        statement
        for migration in known_migrations()
        for statement in migration.statements()
        if schema._ROW_CHANGE.match(statement)
    ]
    assert skipped, "the migrations carry old values forward with UPDATE statements"
    assert all(s.split()[0].upper() in {"UPDATE", "DELETE"} for s in skipped)


def test_a_failing_migration_leaves_a_new_file_empty(tmp_path, monkeypatch):
    broken = known_migrations()
    last = broken[-1]
    path = tmp_path / "last.sql"
    path.write_text(last.path.read_text() + "\nCREATE TABLE runs (x INTEGER);\n")
    monkeypatch.setattr(
        schema,
        "known_migrations",
        lambda dialect="duckdb": [*broken[:-1], schema.Migration(last.version, last.name, path)],
    )
    target = tmp_path / "w.duckdb"
    with pytest.raises(SchemaError, match=f"migration {last.version:04d}_{last.name} failed"):
        Warehouse(target)
    con = duckdb.connect(str(target), read_only=True)
    try:  # one transaction: nothing of the earlier migrations stayed either
        assert con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE NOT internal"
        ).fetchone() == (0,)
    finally:
        con.close()
