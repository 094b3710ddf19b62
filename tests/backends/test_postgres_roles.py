"""The roles of docs/scaling.md, created exactly as written there, on a real server.

The owner creates and migrates the tables (``rankhouse migrate``); writers store and remove
rows and nothing more (no DROP, TRUNCATE, ALTER or GRANT, no migration, no change to
``schema_migrations``); analysts read, and can neither store large
objects nor hold the advisory locks writers need. Commands that only read create nothing in
an empty database, and a warehouse that lost ``schema_migrations`` is reported as damaged
rather than given a new, empty one. Each test gets a database of its own: the documented
``REVOKE``s change PostgreSQL's functions for the whole database.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa
from cli_helpers import ERROR_LINE
from conftest import EXAMPLES
from schema_helpers import RawDatabase, insert_run_and_qrels, migrate_by_hand

from rankhouse import Warehouse
from rankhouse.backends.postgresql.connection import key_number
from rankhouse.errors import RankhouseError

SCALING = Path(__file__).resolve().parents[2] / "docs" / "scaling.md"


def roles_sql() -> str:
    """The role setup of docs/scaling.md, as written there."""
    section = SCALING.read_text(encoding="utf-8").split("### Roles", 1)[1]
    return re.search(r"```sql\n(.*?)```", section, flags=re.S).group(1)


@dataclass(frozen=True)
class Team:
    """URLs of the documented logins in a database of its own, and the names used there."""

    admin: str
    writer: str
    second_writer: str
    analyst: str
    superuser: str
    names: dict[str, str]


def _url(server: str, database: str, login: str | None = None) -> str:
    url = sa.make_url(server).set(database=database)
    if login is not None:
        url = url.set(username=login)
    return url.render_as_string(hide_password=False)


@pytest.fixture
def team(postgres_server):
    """The documented roles, under names of this test's own (roles are the whole server's), in
    a new database where the documented SQL ran as written."""
    suffix = uuid.uuid4().hex[:8]
    names = {
        "rankhouse_owner": f"rh_owner_{suffix}",
        "rankhouse_writer": f"rh_writer_{suffix}",
        "rankhouse_reader": f"rh_reader_{suffix}",
        "warehouse_admin": f"admin_{suffix}",
        "nightly": f"nightly_{suffix}",
        "analyst": f"analyst_{suffix}",
        "rankhouse": f"team_{suffix}",
    }
    sql = re.sub(r"\b(\w+)\b", lambda m: names.get(m.group(1), m.group(1)), roles_sql())
    statements = [s for s in sql.split(";") if s.strip()]
    second = [s.replace(names["nightly"], f"nightly2_{suffix}") for s in statements]
    statements += [s for s in second if f"nightly2_{suffix}" in s]  # a second writer login
    database = f"team_{suffix}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {database}")
    superuser = _url(postgres_server, database)
    with psycopg.connect(superuser, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)
    yield Team(
        admin=_url(postgres_server, database, names["warehouse_admin"]),
        writer=_url(postgres_server, database, names["nightly"]),
        second_writer=_url(postgres_server, database, f"nightly2_{suffix}"),
        analyst=_url(postgres_server, database, names["analyst"]),
        superuser=superuser + f"?options=-csearch_path%3D{names['rankhouse']}",
        names=names,
    )
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {database} WITH (FORCE)")
        for role in ("warehouse_admin", "nightly", "analyst"):
            conn.execute(f"DROP ROLE {names[role]}")
        conn.execute(f"DROP ROLE nightly2_{suffix}")
        for role in ("rankhouse_owner", "rankhouse_writer", "rankhouse_reader"):
            conn.execute(f"DROP ROLE {names[role]}")


def _one_error_line(result) -> str:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert re.match(ERROR_LINE, result.stderr), result.stderr
    return result.stderr


def _relations(team: Team) -> list[str]:
    with psycopg.connect(team.superuser) as conn:
        return sorted(
            name
            for (name,) in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s",
                [team.names["rankhouse"]],
            )
        )


def _stored(team: Team) -> Team:
    """The team's warehouse with qrels, a run and its evaluation, created by the owner."""
    with Warehouse(team.admin) as wh:  # the owner's first command creates the tables
        wh.ingest_qrels(EXAMPLES / "qrels.txt")
    with Warehouse(team.writer) as wh:
        wh.evaluate("qrels", EXAMPLES / "run.bm25.txt", ["AP"])
    return team


def test_the_documented_roles_write_and_read(team, run_cli):
    _stored(team)
    with Warehouse(team.second_writer) as wh:  # another writer writes to what the first stored
        wh.ingest_run(EXAMPLES / "run.dense.txt")
        stored = wh.evaluate("qrels", ["bm25", "dense"], ["AP"]).summary
    with Warehouse(team.analyst, read_only=True) as wh:
        served = wh.evaluate("qrels", ["bm25", "dense"], ["AP"])
        assert served.num_reused == 2 and served.summary.equals(stored)
    read = run_cli("--db", team.analyst, "sql", "SELECT count(*) AS n FROM latest_evaluations",
                   "-f", "csv", db=False)  # fmt: skip
    assert (read.exit_code, read.stdout) == (0, "n\n2\n"), read.stderr
    with (
        Warehouse(team.analyst) as wh,  # without --read-only: the server refuses, in one line
        pytest.raises(RankhouseError, match="the server refused: .*open the warehouse with "),
    ):
        wh.ingest_run(EXAMPLES / "nights" / "bm25.night1.txt", name="night-1")
    with psycopg.connect(team.superuser) as conn:
        owners = conn.execute(
            "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = %s",
            [team.names["rankhouse"]],
        ).fetchall()
    assert owners == [(team.names["rankhouse_owner"],)]


def test_raters_and_their_judgments_follow_the_roles(team, tmp_path):
    """Migration 0018's tables get the roles' rights from the default privileges: a writer
    stores a rater's judgments and builds qrels from them; an analyst reads them, writes none."""
    _stored(team)
    with Warehouse(team.writer) as wh:
        wh.ingest_judgments(EXAMPLES / "qrels.txt", rater="assessor", kind="human")
        built = wh.build_qrels("panel", rule="rater:assessor")
    assert built.created and built.num_judgments == 144
    with Warehouse(team.analyst, read_only=True) as wh:
        assert wh.raters()["judgments"].tolist() == [144]
        assert wh.qrels_builds()["rater"].tolist() == ["assessor"]
    with (
        Warehouse(team.analyst) as wh,
        pytest.raises(RankhouseError, match="the server refused: .*open the warehouse with "),
    ):
        (tmp_path / "mine.qrels").write_text("q1 0 doc068 1\n")
        wh.ingest_judgments(tmp_path / "mine.qrels", rater="analyst")


SCHEMA_CHANGES = [
    ("DROP TABLE runs", "must be owner of table runs"),
    ("TRUNCATE judgments", "permission denied for table judgments"),
    ("ALTER TABLE runs ADD COLUMN note TEXT", "must be owner of table runs"),
    ("DROP VIEW latest_evaluations", "must be owner of view latest_evaluations"),
    ("CREATE TABLE notes (a INTEGER)", "permission denied for schema"),
]


def test_a_writer_cannot_change_the_schema(team, run_cli):
    _stored(team)
    before = _relations(team)
    for statement, reason in SCHEMA_CHANGES:
        refused = run_cli("--db", team.writer, "sql", "--write", statement, db=False)
        assert reason in _one_error_line(refused), statement
    granted = run_cli("--db", team.writer, "sql", "--write",
                      f"GRANT ALL ON runs TO {team.names['analyst']}", db=False)  # fmt: skip
    assert granted.exit_code == 0  # PostgreSQL warns that it granted nothing
    assert _relations(team) == before
    with psycopg.connect(team.superuser) as conn:
        assert conn.execute(
            "SELECT has_table_privilege(%s, 'runs', 'INSERT'), count(*) FROM judgments",
            [team.names["analyst"]],
        ).fetchone() == (False, 144)
    removed = run_cli("--db", team.writer, "runs", "rm", "bm25", db=False)  # rows: a writer's
    assert removed.exit_code == 0, removed.stderr


def test_only_the_owner_creates_the_tables(team, run_cli):
    refused = run_cli("--db", team.writer, "ingest", "qrels", EXAMPLES / "qrels.txt", db=False)
    assert _one_error_line(refused) == (
        f"Error: the warehouse {team.writer.split('@')[-1]} needs its tables created, and this "
        f"login ({team.names['nightly']}) may not change the schema {team.names['rankhouse']}: "
        "only the role that owns it does; run one rankhouse command that writes (e.g. ingest) "
        "as that role first (docs/scaling.md, Roles)\n"
    )
    assert _relations(team) == []
    created = run_cli("--db", team.admin, "ingest", "qrels", EXAMPLES / "qrels.txt", db=False)
    assert created.exit_code == 0, created.stderr
    assert "schema_migrations" in _relations(team)


def _at_schema_14(team: Team) -> None:
    """The team's warehouse as the releases before 0.15.0 left it (schema 14, created by the
    owner; the default privileges gave writers INSERT, UPDATE and DELETE on every table), with
    a run and a qrels set."""
    db = RawDatabase(team.admin)
    with db.transaction() as con:
        migrate_by_hand(con, "postgresql", 14)
        insert_run_and_qrels(con)
    db.close()


def _schema_migrations_rights(team: Team, login: str) -> tuple[bool, ...]:
    with psycopg.connect(team.superuser) as conn:
        return conn.execute(
            "SELECT has_table_privilege(%s, 'schema_migrations', 'SELECT'), "
            + ", ".join(
                f"has_table_privilege(%s, 'schema_migrations', '{right}')"
                for right in ("INSERT", "UPDATE", "DELETE", "TRUNCATE")
            ),
            [team.names[login]] * 5,
        ).fetchone()


def test_only_the_owner_migrates(team, run_cli):
    _at_schema_14(team)
    assert _schema_migrations_rights(team, "nightly") == (True, True, True, True, False)
    where = team.writer.split("@")[-1]
    for login, url in (("nightly", team.writer), ("analyst", team.analyst)):
        refused = run_cli("--db", url, "migrate", db=False)
        assert _one_error_line(refused) == (
            f"Error: the warehouse {where} is at schema 14 (rankhouse 0.1.0); this is rankhouse "
            "0.19.0, which needs schema 20 (0015_releases, 0016_pruned_runs, 0017_qrels_lineage, "
            "0018_raters, 0019_judgment_intents, 0020_evaluation_judged): this login "
            f"({team.names[login]}) "
            f"may not change the schema {team.names['rankhouse']}, only the role that owns it: "
            f"run `rankhouse --db postgresql://OWNER@{where} migrate` as that role "
            "(docs/scaling.md, Upgrading)\n"
        )
    for url in (team.writer, team.admin):  # upgrading is an explicit step, even for the owner
        refused = run_cli("--db", url, "runs", "list", db=False)
        assert "is at schema 14 (rankhouse 0.1.0); this is rankhouse 0.19.0, which needs " in (
            _one_error_line(refused)
        )
    dry = run_cli("--db", team.admin, "migrate", "--dry-run", db=False)
    assert dry.exit_code == 0 and "0015_releases (rankhouse 0.15.0): " in dry.stdout
    with psycopg.connect(team.superuser) as conn:
        assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone() == (14,)
    done = run_cli("--db", team.admin, "migrate", db=False)
    assert done.exit_code == 0, done.stderr
    assert done.stdout.endswith(
        "Applied 0015_releases, 0016_pruned_runs, 0017_qrels_lineage, 0018_raters, "
        "0019_judgment_intents, 0020_evaluation_judged: the warehouse is at schema 20.\n"
    )
    with psycopg.connect(team.superuser) as conn:
        assert conn.execute(
            "SELECT version, release FROM schema_migrations WHERE version >= 14 ORDER BY version"
        ).fetchall() == [
            *((14, None), (15, "0.15.0"), (16, "0.16.0")),
            *((17, "0.17.0"), (18, "0.18.0"), (19, "0.18.0"), (20, "0.19.0")),
        ]
    for login in ("nightly", "analyst"):  # they still read it, and change it no more
        assert _schema_migrations_rights(team, login) == (True, False, False, False, False)
    listed = run_cli("--db", team.writer, "runs", "list", "-f", "csv", db=False)
    assert listed.exit_code == 0 and listed.stdout.splitlines()[1].startswith("1,r,t,")


WRITES_TO_MIGRATIONS = [
    "UPDATE schema_migrations SET name = 'x'",
    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'x', now())",
    "DELETE FROM schema_migrations WHERE version = 15",
    "TRUNCATE schema_migrations",
]


@pytest.mark.parametrize("statement", WRITES_TO_MIGRATIONS)
def test_a_writer_cannot_change_schema_migrations(team, run_cli, statement):
    _stored(team)  # created by this release: the revoke holds for a new warehouse too
    with (
        psycopg.connect(team.writer) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for table "
                      "schema_migrations"),
    ):  # fmt: skip
        conn.execute(statement)
    refused = run_cli("--db", team.writer, "sql", "--write", statement, db=False)
    assert _one_error_line(refused) == (
        "Error: the server refused: permission denied for table schema_migrations (only the "
        "role that owns the schema changes it, with rankhouse migrate; roles in "
        "docs/scaling.md)\n"
    )
    listed = run_cli("--db", team.second_writer, "runs", "list", db=False)  # nobody locked out
    assert listed.exit_code == 0, listed.stderr


@pytest.mark.parametrize("command", [["runs", "list"], ["history"], ["qrels", "list"]])
@pytest.mark.parametrize("login", ["admin", "writer", "analyst", "superuser"])
def test_commands_that_only_read_create_nothing(team, run_cli, command, login):
    url = getattr(team, login)
    result = run_cli("--db", url, *command, db=False)
    assert _one_error_line(result).startswith(f"Error: no warehouse at {url.split('@')[-1]}: ")
    assert _relations(team) == []


@pytest.mark.parametrize(
    "command", [["runs", "list"], ["--read-only", "history"], ["ingest", "qrels", "q.txt"]]
)
@pytest.mark.parametrize("login", ["admin", "writer"])
def test_a_dropped_schema_migrations_is_damage(team, run_cli, tmp_path, command, login):
    _stored(team)
    (tmp_path / "q.txt").write_bytes((EXAMPLES / "qrels.txt").read_bytes())
    with psycopg.connect(team.admin) as conn:
        conn.execute("DROP TABLE schema_migrations")
    before = _relations(team)
    result = run_cli("--db", getattr(team, login), *command, db=False)
    assert "is damaged: schema_migrations is missing from its schema" in _one_error_line(result)
    assert _relations(team) == before  # no new, empty schema_migrations


LARGE_OBJECTS = [
    "SELECT lo_from_bytea(0, '\\x41414141'::bytea)",
    "SELECT lo_create(0)",
    "SELECT lo_creat(-1)",
]


@pytest.mark.parametrize("statement", LARGE_OBJECTS)
def test_an_analyst_cannot_store_large_objects(team, run_cli, statement):
    _stored(team)
    with psycopg.connect(team.analyst) as conn:  # even in a read-write transaction of its own
        conn.execute("SET TRANSACTION READ WRITE")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            conn.execute(statement)
    read_only = run_cli("--db", team.analyst, "sql", statement, db=False)
    assert "creates, changes or moves a large object" in _one_error_line(read_only)
    written = run_cli("--db", team.analyst, "sql", "--write", statement, db=False)
    assert "permission denied for function lo_" in _one_error_line(written)
    with psycopg.connect(team.superuser) as conn:
        assert conn.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone() == (0,)


def test_an_analyst_cannot_hold_a_writers_lock(team, run_cli):
    _stored(team)
    key = key_number("evaluations:1:1")
    for function in ("pg_advisory_lock", "pg_try_advisory_lock", "pg_advisory_lock_shared",
                     "pg_advisory_xact_lock", "pg_try_advisory_xact_lock_shared"):  # fmt: skip
        with (
            psycopg.connect(team.analyst) as conn,
            pytest.raises(psycopg.errors.InsufficientPrivilege),
        ):
            conn.execute(f"SELECT {function}(%s)", [key])
    held = run_cli("--db", team.analyst, "sql", f"SELECT pg_advisory_lock({key})", db=False)
    assert "permission denied for function pg_advisory_lock" in _one_error_line(held)
    with Warehouse(team.writer) as wh:  # writers still take them
        wh.evaluate("qrels", "bm25", ["AP"], recompute=True)
