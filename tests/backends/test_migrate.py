"""``rankhouse migrate``: the explicit upgrade of a warehouse to the schema this release needs.

A warehouse is built at schema 14 (the last of the releases that all called themselves 0.1.0)
from the migration files, as those releases left it; 0.15.0 brought schema 15, 0.16.0 schema 16,
0.17.0 schema 17, 0.18.0 schemas 18 and 19, and this release (0.19.0) brings schema 20.
A server's warehouse at an older schema is refused by every other command until the owner
migrates it (the roles: tests/backends/test_postgres_roles.py); a DuckDB file is upgraded by any
command that opens it, as before. A warehouse recorded at a schema newer than this release knows is
refused, naming the release it needs.
"""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa
from cli_helpers import ERROR_LINE
from schema_helpers import RawDatabase, insert_run_and_qrels, migrate_by_hand

import rankhouse
from rankhouse.backends import duckdb_path, resolve_target
from rankhouse.backends.schema import known_migrations
from rankhouse.defaults import RELEASES, release_of_schema

#: What migration 15 changes, as the first sentence of its header says it.
SUMMARY_15 = (
    "each schema version records the rankhouse release that brought it, and only the owner "
    "changes schema_migrations."
)
#: What migration 16 changes, as the first sentence of its header says it.
SUMMARY_16 = (
    "a run whose rows were pruned is marked in the catalogue: when, how many rows it had, "
    "the hash of those rows and where they were archived."
)
#: What migration 17 changes.
SUMMARY_17 = "a qrels set stored as a new version of a named set records the set it follows."
#: What migration 18 changes.
SUMMARY_18 = (
    "raters and their individual judgments are stored, and a qrels set built from them records "
    "its rule and the judgment sets it read."
)
#: What migration 19 changes.
SUMMARY_19 = "a qrels set ingested with intents keeps each judgment of each intent (subtopic)."
#: What migration 20 changes.
SUMMARY_20 = (
    "each evaluation computed from now on keeps, per query, the judged share of the run's top k "
    "for its measure's cutoff."
)


def _old_warehouse(target: str, version: int = 14) -> str:
    """A warehouse at schema ``version`` holding a run 'r' and qrels 'q'; its URL."""
    url = resolve_target(target)
    db = RawDatabase(url)
    with db.transaction() as con:
        migrate_by_hand(con, db.dialect, version)
        insert_run_and_qrels(con)
    db.close()
    return url


def _recorded(url: str) -> list[tuple]:
    """(version, name, release) of each row of schema_migrations; release None before 15."""
    db = RawDatabase(url)
    with db.transaction() as con:
        columns = {row[0] for row in con.execute_raw(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'schema_migrations' AND table_schema = current_schema()"
        ).all()}  # fmt: skip
        release = "release" if "release" in columns else "NULL"
        rows = con.execute_raw(
            f"SELECT version, name, {release} FROM schema_migrations ORDER BY version"
        ).all()
    db.close()
    return [tuple(row) for row in rows]


def _where(url: str) -> str:
    path = duckdb_path(url)
    return path if path is not None else url.split("@")[-1]


def _backup(url: str, version: int) -> str:
    """The backup command migrate names, written out from the URL (pg_dump's own options)."""
    path = duckdb_path(url)
    if path is not None:
        return f"cp {path} {path}.schema-{version}"
    parsed = sa.make_url(url)
    schema = parsed.query["options"].split("=")[-1]
    return (
        f"pg_dump --format=custom --schema={schema} --file={schema}-schema-{version}.dump "
        f"--host={parsed.host} --port={parsed.port} --username={parsed.username} "
        f"{parsed.database}"
    )


def test_each_schema_version_belongs_to_a_release():
    for dialect in ("duckdb", "postgresql"):
        assert RELEASES[-1] == (rankhouse.__version__, len(known_migrations(dialect)))
    assert [release_of_schema(v) for v in (1, 14, 15, 16, 17, 18, 19, 20, 21)] == [
        *("0.1.0", "0.1.0", "0.15.0", "0.16.0", "0.17.0", "0.18.0", "0.18.0", "0.19.0"),
        None,
    ]
    assert [m.release for m in known_migrations()][13:] == [
        *("0.1.0", "0.15.0", "0.16.0", "0.17.0", "0.18.0", "0.18.0", "0.19.0")
    ]
    assert known_migrations("postgresql")[14].summary == SUMMARY_15
    assert known_migrations("postgresql")[15].summary == SUMMARY_16
    assert known_migrations("postgresql")[16].summary == SUMMARY_17
    assert known_migrations("postgresql")[17].summary == SUMMARY_18
    assert known_migrations("postgresql")[18].summary == SUMMARY_19
    assert known_migrations("postgresql")[19].summary == SUMMARY_20


def test_the_version_is_the_release(run_cli):
    shown = run_cli("--version", db=False)
    assert (shown.exit_code, shown.stdout) == (0, "rankhouse 0.19.0\n")


def test_migrate_says_what_it_will_do_then_does_it(backend_target, run_cli):
    url = _old_warehouse(backend_target)
    where = _where(url)
    plan = [
        f"The warehouse {where} is at schema 14 (rankhouse 0.1.0).",
        "rankhouse 0.19.0 needs schema 20: 6 migrations to apply:",
        f"  0015_releases (rankhouse 0.15.0): {SUMMARY_15}",
        f"  0016_pruned_runs (rankhouse 0.16.0): {SUMMARY_16}",
        f"  0017_qrels_lineage (rankhouse 0.17.0): {SUMMARY_17}",
        f"  0018_raters (rankhouse 0.18.0): {SUMMARY_18}",
        f"  0019_judgment_intents (rankhouse 0.18.0): {SUMMARY_19}",
        f"  0020_evaluation_judged (rankhouse 0.19.0): {SUMMARY_20}",
        f"A backup of it as it is (rankhouse makes none): {_backup(url, 14)}",
    ]
    dry = run_cli("--db", url, "migrate", "--dry-run", db=False)
    assert (dry.exit_code, dry.stderr) == (0, "")
    assert dry.stdout.splitlines() == [
        *plan,
        "Dry run: nothing applied; run rankhouse migrate without --dry-run to apply them.",
    ]
    assert _recorded(url)[-1] == (14, "aliases", None)  # the dry run changed nothing

    done = run_cli("--db", url, "migrate", db=False)
    assert (done.exit_code, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        *plan,
        "Applied 0015_releases, 0016_pruned_runs, 0017_qrels_lineage, 0018_raters, "
        "0019_judgment_intents, 0020_evaluation_judged: the warehouse is at schema 20.",
    ]
    recorded = _recorded(url)
    assert [row[0] for row in recorded] == list(range(1, 21))
    assert recorded[13:] == [
        (14, "aliases", None),
        (15, "releases", "0.15.0"),  # the release that brought it
        (16, "pruned_runs", "0.16.0"),
        (17, "qrels_lineage", "0.17.0"),
        (18, "raters", "0.18.0"),
        (19, "judgment_intents", "0.18.0"),
        (20, "evaluation_judged", "0.19.0"),
    ]

    again = run_cli("--db", url, "migrate", db=False)
    assert (again.exit_code, again.stdout) == (0, (
        f"The warehouse {where} is at schema 20 (rankhouse 0.19.0), the schema rankhouse "
        "0.19.0 needs: nothing to migrate.\n"
    ))  # fmt: skip
    listed = run_cli("--db", url, "runs", "list", "-f", "csv", db=False)
    assert listed.exit_code == 0 and listed.stdout.splitlines()[1].startswith("1,r,t,1,1,")


def test_a_server_warehouse_is_not_upgraded_by_other_commands(postgres_url, run_cli):
    url = _old_warehouse(postgres_url)
    where, login = _where(url), sa.make_url(url).username
    for command in (["runs", "list"], ["ingest", "qrels", "q.txt"], ["--read-only", "history"]):
        refused = run_cli("--db", url, *command, db=False)
        assert refused.exit_code == 1 and re.match(ERROR_LINE, refused.stderr), refused.stderr
        assert refused.stderr == (
            f"Error: the warehouse {where} is at schema 14 (rankhouse 0.1.0); this is rankhouse "
            "0.19.0, which needs schema 20 (0015_releases, 0016_pruned_runs, 0017_qrels_lineage, "
            "0018_raters, 0019_judgment_intents, 0020_evaluation_judged): the role that owns the "
            "schema upgrades it with "
            f"`rankhouse --db postgresql://OWNER@{where} migrate` "
            f"after a backup (e.g. {_backup(url, 14)}); until then, keep to rankhouse 0.1.0 "
            "(docs/scaling.md, Upgrading)\n"
        ), command
    assert login in _backup(url, 14)
    assert _recorded(url)[-1] == (14, "aliases", None)


def test_a_duckdb_file_is_upgraded_by_any_command(db_path, run_cli):
    url = _old_warehouse(str(db_path))
    listed = run_cli("runs", "list", "-f", "csv")
    assert listed.exit_code == 0, listed.stderr
    assert _recorded(url)[-1] == (20, "evaluation_judged", "0.19.0")


@pytest.mark.parametrize("release", ["0.20.0", None])
def test_a_newer_warehouse_names_the_release_it_needs(backend_target, run_cli, release):
    url = resolve_target(backend_target)
    with rankhouse.Warehouse(url):  # created at this release's schema
        pass
    db = RawDatabase(url)
    with db.transaction() as con:  # as a release after this one leaves it
        con.execute("INSERT INTO schema_migrations VALUES (21, 'later', now(), :r)", {"r": release})
    db.close()
    needed = f"rankhouse {release} or newer" if release else "a newer rankhouse"
    install = f"'rankhouse>={release}'" if release else "rankhouse"
    for command in (["runs", "list"], ["migrate", "--dry-run"], ["migrate"]):
        refused = run_cli("--db", url, *command, db=False)
        assert (refused.exit_code, refused.stdout) == (1, "")
        assert refused.stderr == (
            f"Error: cannot open the warehouse {_where(url)}: this warehouse is at schema 21 "
            f"({needed}); this is rankhouse 0.19.0, which knows schemas up to 20: upgrade "
            f"rankhouse (pip install -U {install})\n"
        ), command


def test_migrate_needs_a_warehouse_and_writes(db_path, run_cli):
    missing = run_cli("migrate")
    assert missing.exit_code == 1 and missing.stderr.startswith(f"Error: no warehouse at {db_path}")
    assert not db_path.exists()
    _old_warehouse(str(db_path))
    read_only = run_cli("--read-only", "migrate")
    assert read_only.stderr == ("Error: migrate changes the warehouse's schema; drop --read-only\n")
    assert _recorded(resolve_target(str(db_path)))[-1][0] == 14
