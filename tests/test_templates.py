"""New warehouse files copied from the empty warehouse kept in the cache folder
(rankhouse.templates): the copy is the warehouse the migrations build, records its own
migration times, never replaces a file, and a damaged, missing or unwritable template only
means that the migrations build the file in place."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from conftest import EXAMPLES
from schema_helpers import described

from rankhouse import Warehouse, schema, templates
from rankhouse.defaults import DUCKDB_CONFIG
from rankhouse.schema import known_migrations


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("RANKHOUSE_CACHE", str(folder))
    return folder


def _templates(folder: Path) -> list[Path]:
    return sorted(folder.glob("warehouse-*.duckdb"))


def _no_migrations(monkeypatch) -> None:
    def refuse(db, pending):
        raise AssertionError("the migrations ran: the file was not copied")

    monkeypatch.setattr(schema, "_create", refuse)


def test_a_new_file_is_copied_from_the_template_built_once(cache, tmp_path, monkeypatch):
    Warehouse(tmp_path / "first.duckdb").close()
    [template] = _templates(cache)
    _no_migrations(monkeypatch)  # from here on a new file can only be a copy
    with Warehouse(tmp_path / "second.duckdb") as wh, wh.connect() as conn:
        versions = conn.execute("SELECT version FROM schema_migrations ORDER BY 1").scalars()
    assert versions == [m.version for m in known_migrations()]
    assert _templates(cache) == [template]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "first.duckdb", "second.duckdb"]


def test_a_copy_is_the_warehouse_the_migrations_build(cache, tmp_path, monkeypatch):
    Warehouse(tmp_path / "builds.duckdb").close()  # builds the template
    Warehouse(tmp_path / "copied.duckdb").close()
    monkeypatch.setenv("RANKHOUSE_CACHE", "off")
    Warehouse(tmp_path / "in_place.duckdb").close()
    assert described(tmp_path / "copied.duckdb") == described(tmp_path / "in_place.duckdb")


def test_a_copy_records_its_migrations_as_applied_when_it_was_made(cache, tmp_path, monkeypatch):
    monkeypatch.setattr(schema, "utc_now", lambda: datetime(2001, 1, 1))
    Warehouse(tmp_path / "builds.duckdb").close()
    monkeypatch.setattr(schema, "utc_now", lambda: datetime(2002, 2, 2))
    Warehouse(tmp_path / "copied.duckdb").close()

    def applied(path: Path) -> set:
        con = duckdb.connect(str(path), read_only=True)
        try:
            rows = con.execute("SELECT applied_at FROM schema_migrations").fetchall()
            return {applied_at for (applied_at,) in rows}
        finally:
            con.close()

    [template] = _templates(cache)
    assert applied(template) == {datetime(2001, 1, 1)}
    assert applied(tmp_path / "copied.duckdb") == {datetime(2002, 2, 2)}


def test_a_damaged_template_is_removed_and_never_copied(cache, tmp_path, monkeypatch):
    Warehouse(tmp_path / "builds.duckdb").close()
    [template] = _templates(cache)
    data = bytearray(template.read_bytes())
    data[len(data) // 2] ^= 0xFF
    template.write_bytes(bytes(data))
    with Warehouse(tmp_path / "new.duckdb") as wh, wh.connect() as conn:
        assert conn.execute("SELECT count(*) FROM runs").scalar() == 0
    [rebuilt] = _templates(cache)
    assert rebuilt.read_bytes() != bytes(data)
    assert templates._read_template(cache, templates._key(DUCKDB_CONFIG)) is not None


def test_a_cache_that_cannot_be_written_leaves_the_migrations_to_build_it(tmp_path, monkeypatch):
    blocker = tmp_path / "a file, not a folder"
    blocker.write_text("")
    monkeypatch.setenv("RANKHOUSE_CACHE", str(blocker / "cache"))
    with Warehouse(tmp_path / "new.duckdb") as wh, wh.connect() as conn:
        assert conn.execute("SELECT count(*) FROM schema_migrations").scalar() == len(
            known_migrations()
        )


def test_with_the_cache_off_nothing_is_written_there(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKHOUSE_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    Warehouse(tmp_path / "new.duckdb").close()
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()


def test_an_existing_file_is_never_replaced(cache, tmp_path):
    Warehouse(tmp_path / "builds.duckdb").close()
    existing = tmp_path / "existing.duckdb"
    existing.write_bytes(b"somebody's file")
    assert templates.copy_to(existing, dict(DUCKDB_CONFIG)) is False
    assert existing.read_bytes() == b"somebody's file"
    assert not list(tmp_path.glob(".*"))  # the copy under its hidden name is gone


def test_without_hard_links_the_migrations_build_the_file(cache, tmp_path, monkeypatch):
    Warehouse(tmp_path / "builds.duckdb").close()

    def no_links(source, target):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(templates.os, "link", no_links)
    built = []
    original = schema._create

    def create(db, pending):
        built.append(1)
        return original(db, pending)

    monkeypatch.setattr(schema, "_create", create)
    with Warehouse(tmp_path / "new.duckdb") as wh, wh.connect() as conn:
        assert conn.execute("SELECT count(*) FROM runs").scalar() == 0
    assert built == [1]
    assert not list(tmp_path.glob(".*"))


def test_the_command_line_copies_the_template(cache, tmp_path, run_cli):
    qrels, run = EXAMPLES / "qrels.txt", EXAMPLES / "run.bm25.txt"
    env = {"RANKHOUSE_CACHE": str(cache)}
    outputs = []
    for name in ("a.duckdb", "b.duckdb"):
        done = run_cli("--db", tmp_path / name, "eval", qrels, run, "-m", "AP", db=False, env=env)
        assert done.exit_code == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert len(_templates(cache)) == 1
    assert not list(tmp_path.glob("*.wal"))
