"""A database that holds nothing gets every migration in one transaction, without the
statements that change rows (there are none to change): the schema must be the one that the
migration files build statement by statement, the UPDATEs included."""

from __future__ import annotations

import duckdb
import pytest
from schema_helpers import described, migrate_by_hand

from rankhouse import SchemaError, Warehouse
from rankhouse.backends import schema
from rankhouse.backends.duckdb_file.connection import DuckDBConnection
from rankhouse.backends.schema import known_migrations
from rankhouse.defaults import DUCKDB_CONFIG


def _one_by_one(path) -> None:
    """The schema as the migration files build it: every statement run."""
    con = duckdb.connect(str(path), config=DUCKDB_CONFIG)  # as rankhouse opens a file
    try:
        con.begin()
        migrate_by_hand(DuckDBConnection(con), "duckdb", len(known_migrations()))
        con.commit()
    finally:
        con.close()


def test_a_new_warehouse_has_the_schema_the_migrations_build(tmp_path):
    fresh, stepped = tmp_path / "fresh.duckdb", tmp_path / "stepped.duckdb"
    Warehouse(fresh).close()
    _one_by_one(stepped)
    built, expected = described(fresh), described(stepped)
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
