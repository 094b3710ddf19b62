"""``rankhouse sql`` without ``--write`` on a PostgreSQL warehouse reads, and does nothing else.

The issue's reproducers, run on a real server as the login ``scripts/with-postgres`` gives
(a superuser): a program run by ``COPY ... TO PROGRAM``, ``/etc/passwd`` read by
``pg_read_file``, password hashes read from ``pg_authid``, rows deleted through ``dblink``. A
read-only transaction is no sandbox for such a login, so read-only ``sql`` refuses it, and any
login whose powers reach the server's files or programs; ``--write`` runs the statement with
all of them. Large objects, which PostgreSQL 15 lets a read-only transaction write, are refused
by name, and a read-only statement's transaction is rolled back, so that none is kept however
it was called. ``COPY ... TO STDOUT`` is one line, not three tracebacks.
"""

from __future__ import annotations

import re
import uuid

import psycopg
import pytest
import sqlalchemy as sa
from cli_helpers import ERROR_LINE
from conftest import EXAMPLES

from rankhouse import Warehouse


def _one_error_line(result) -> str:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert re.match(ERROR_LINE, result.stderr), result.stderr
    return result.stderr


def _as(url: str, login: str) -> str:
    return sa.make_url(url).set(username=login).render_as_string(hide_password=False)


def _schema(url: str) -> str:
    return re.search(r"search_path%3D(\w+)", url).group(1)


@pytest.fixture
def stored(postgres_url):
    """A warehouse (owned by a login that is no superuser) holding qrels and a run."""
    with Warehouse(postgres_url) as wh:
        wh.ingest_qrels(EXAMPLES / "qrels.txt")
        wh.ingest_run(EXAMPLES / "run.bm25.txt")
    return postgres_url


@pytest.fixture
def superuser(stored, postgres_server):
    """The test server's superuser, in the warehouse's schema (as the issue connected)."""
    return _as(stored, sa.make_url(postgres_server).username)


def _counts(url: str) -> tuple:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM judgments), "
            "(SELECT count(*) FROM pg_largeobject_metadata)"
        ).fetchone()


def test_a_superuser_is_refused_read_only_sql(superuser, tmp_path, run_cli, postgres_server):
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        dblink = conn.execute(
            "SELECT count(*) FROM pg_available_extensions WHERE name = 'dblink'"
        ).fetchone()[0]
        if dblink:
            conn.execute("CREATE EXTENSION IF NOT EXISTS dblink")
    marker = tmp_path / "ran"
    server = sa.make_url(superuser)
    attempts = [
        f"COPY (SELECT 1) TO PROGRAM 'touch {marker}'",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT rolname, rolpassword FROM pg_authid",
    ]
    if dblink:
        attempts.append(
            f"SELECT dblink_exec('host={server.host} port={server.port} dbname={server.database} "
            f"user={server.username} options=-csearch_path={_schema(superuser)}', "
            "'DELETE FROM judgments')"
        )
    before = _counts(superuser)
    login = server.username
    for statement in attempts:
        refused = run_cli("--db", superuser, "sql", statement, db=False)
        assert _one_error_line(refused) == (
            f"Error: sql without --write refuses the login {login}: it is a superuser, and a "
            "read-only transaction does not stop such a login from running programs or reading "
            "files on the server; connect as a login that may only read (docs/scaling.md, "
            "Roles), or pass --write to run the statement with all of this login's powers\n"
        ), statement
    assert not marker.exists()
    assert _counts(superuser) == before
    written = run_cli("--db", superuser, "sql", "--write", "SELECT count(*) AS n FROM runs",
                      "-f", "csv", db=False)  # fmt: skip
    assert (written.exit_code, written.stdout) == (0, "n\n1\n"), written.stderr


POWERS = [
    ("GRANT pg_read_server_files TO {login}", "it is a member of pg_read_server_files"),
    ("GRANT pg_execute_server_program TO {login}", "it is a member of pg_execute_server_program"),
    ("GRANT EXECUTE ON FUNCTION pg_read_file(text) TO {login}", "it may call pg_read_file(text)"),
    ("ALTER ROLE {login} CREATEROLE", "it may create roles (CREATEROLE)"),
]


@pytest.mark.parametrize(("grant", "reason"), POWERS, ids=[g.split()[1] for g, _ in POWERS])
def test_a_login_that_reaches_the_servers_files_is_refused(
    stored, postgres_server, run_cli, grant, reason
):
    login = f"powerful_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {login} LOGIN")
        conn.execute(f"GRANT USAGE ON SCHEMA {_schema(stored)} TO {login}")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {_schema(stored)} TO {login}")
        conn.execute(grant.format(login=login))
    try:
        refused = run_cli("--db", _as(stored, login), "sql", "SELECT 1", db=False)
        assert _one_error_line(refused).startswith(
            f"Error: sql without --write refuses the login {login}: {reason}, and a read-only "
            "transaction does not stop"
        )
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {login}")
            conn.execute(f"REVOKE EXECUTE ON FUNCTION pg_read_file(text) FROM {login}")
            conn.execute(f"DROP ROLE {login}")


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT lo_from_bytea(0, '\\x41414141'::bytea)",
        "SELECT lo_create(0)",
        "select LO_CREAT(-1)",
        "SELECT lo_import('/etc/hostname')",
        "SELECT lo_put(1, 0, '\\x41'::bytea)",
    ],
)
def test_large_object_writes_are_refused(stored, run_cli, statement):
    before = _counts(stored)
    refused = run_cli("--db", stored, "sql", statement, db=False)
    function = re.search(r"(\w+)\(", statement).group(1)
    assert _one_error_line(refused) == (
        f"Error: {function}() creates, changes or moves a large object, which PostgreSQL allows "
        "in a read-only transaction: sql without --write refuses it; pass --write to run it\n"
    )
    assert _counts(stored) == before


def test_a_read_only_statement_is_rolled_back(stored, run_cli):
    """A large object written where no name shows it (a query built at run time) is gone with
    the transaction, which read-only sql never commits."""
    before = _counts(stored)
    hidden = "SELECT query_to_xml('SELECT lo_' || 'from_bytea(0, ''\\x41'')', true, false, '')"
    ran = run_cli("--db", stored, "sql", hidden, "-f", "csv", db=False)
    assert ran.exit_code == 0, ran.stderr
    assert "lo_from_bytea" in ran.stdout  # it ran, and wrote, inside the transaction
    assert _counts(stored) == before


@pytest.mark.parametrize("write", [[], ["--write"]], ids=["read-only", "write"])
@pytest.mark.parametrize(
    "statement",
    [
        "COPY (SELECT * FROM runs) TO STDOUT",
        "copy runs to stdout with (format csv)",
        "/* a comment first */\nCOPY judgments FROM STDIN",
    ],  # fmt: skip
)
def test_copy_to_stdout_is_one_line(stored, run_cli, write, statement):
    result = run_cli("--db", stored, "sql", *write, statement, db=False)
    assert _one_error_line(result) == (
        "Error: COPY ... TO STDOUT (or FROM STDIN) streams rows outside a query, which sql does "
        "not relay: write the query as SELECT ... and pick its output with -f csv (or use "
        "psql's \\copy)\n"
    )
    assert _counts(stored)[:2] == (1, 144)
