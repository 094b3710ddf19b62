"""A warehouse on a PostgreSQL server: schema, constraints, the CLI, and the same numbers.

These tests need a server (``scripts/with-postgres python -m pytest`` starts one); they skip
without it, except under CI, where they must run.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import psycopg
import pytest
from conftest import EXAMPLES
from psycopg.conninfo import conninfo_to_dict
from sqlalchemy import make_url

from rankhouse import Warehouse
from rankhouse.backends.postgresql.workspace import libpq_url
from rankhouse.backends.schema import known_migrations
from rankhouse.errors import ConflictError
from rankhouse.ingest.reuse import publish_all

MEASURES = ["P@5", "nDCG@10", "AP", "RR", "R@100", "Rprec", "bpref", "NumRet"]


def _rows(url: str, query: str, params=()) -> list[tuple]:
    with Warehouse(url) as wh, wh.connect() as conn:
        return [tuple(row) for row in conn.sa_connection.exec_driver_sql(query, params).fetchall()]


def test_migration_folders_move_in_step():
    duck = [(m.version, m.name) for m in known_migrations("duckdb")]
    server = [(m.version, m.name) for m in known_migrations("postgresql")]
    assert server == duck


def test_the_workspace_url_reads_in_libpq_as_the_warehouse_url_says():
    # libpq's own parser (psycopg's conninfo_to_dict): a read-only warehouse's two options,
    # separated by a space, and a password with a plus sign
    url = make_url(
        "postgresql+psycopg://u:p%2Bw@h:5432/db?options=-csearch_path%3Ds"
        "%20-c%20default_transaction_read_only%3Don"
    )
    assert conninfo_to_dict(libpq_url(url)) == {
        "user": "u",
        "password": "p+w",
        "host": "h",
        "port": "5432",
        "dbname": "db",
        "options": "-csearch_path=s -c default_transaction_read_only=on",
    }
    assert conninfo_to_dict(libpq_url(make_url("postgresql://u@h/db"))) == {
        "user": "u",
        "host": "h",
        "dbname": "db",
    }


def test_migrations_applied_in_order_and_recorded(postgres_url):
    Warehouse(postgres_url).close()
    Warehouse(postgres_url).close()  # a second open applies nothing
    recorded = _rows(postgres_url, "SELECT version, name FROM schema_migrations ORDER BY version")
    assert recorded == [(m.version, m.name) for m in known_migrations("postgresql")]


def _open(url: str) -> int:
    with Warehouse(url) as wh, wh.connect() as conn:
        return conn.execute("SELECT count(*) FROM schema_migrations").scalar_one()


def test_processes_opening_a_new_database_at_once_migrate_once(postgres_url):
    with ProcessPoolExecutor(4) as pool:
        counts = list(pool.map(_open, [postgres_url] * 4))
    assert counts == [len(known_migrations("postgresql"))] * 4


def _relations(target: str) -> dict[str, list[str]]:
    """{table or view: its column names in order} of a warehouse's own schema."""
    with Warehouse(target) as wh, wh.connect() as conn:
        names = conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema() ORDER BY table_name"
        ).scalars()
        return {name: conn.execute(f"SELECT * FROM {name} LIMIT 0").keys() for name in names}


def test_tables_and_views_have_the_same_columns_on_both_backends(postgres_url, tmp_path):
    on_server = _relations(postgres_url)
    on_file = _relations(str(tmp_path / "w.duckdb"))
    assert on_server == on_file
    views = {"run_catalog", "qrels_catalog", "latest_evaluations", "query_values"}
    assert views | {"regress_results", "run_ranking", "runs", "evaluations"} <= set(on_server)


def test_ids_compare_bytewise_and_metadata_is_jsonb(postgres_url):
    Warehouse(postgres_url).close()
    columns = _rows(
        postgres_url,
        "SELECT table_name, column_name, collation_name, data_type FROM "
        "information_schema.columns WHERE table_schema = current_schema() AND "
        "table_name IN ('runs', 'run_rows', 'judgments', 'evaluation_values', 'qrels_sets')",
    )
    found = {(t, c): (collation, kind) for t, c, collation, kind in columns}
    for column in ("query_id", "doc_id"):
        assert found[("run_rows", column)][0] == "C"
        assert found[("judgments", column)][0] == "C"
    assert found[("evaluation_values", "query_id")][0] == "C"
    assert found[("runs", "name")][0] == "C"
    assert found[("runs", "metadata")][1] == "jsonb"


def test_unique_names_and_content_are_constraints(postgres_url):
    # the server's UNIQUE constraint reaches the caller as a ConflictError (backends/base.py)
    unique = pytest.raises(ConflictError, match="violates unique constraint")
    with Warehouse(postgres_url) as wh:
        wh.ingest_run(EXAMPLES / "run.bm25.txt")
        with unique, wh.transaction() as conn:
            conn.execute_raw(
                "INSERT INTO runs (name, system_tag, source, content_sha256, parse_options, "
                "ingested_at, metadata, order_by, num_queries, num_rows) SELECT 'other', "
                "system_tag, source, content_sha256, parse_options, ingested_at, metadata, "
                "order_by, num_queries, num_rows FROM runs"
            )
        with pytest.raises(ConflictError, match="violates unique"), wh.transaction() as conn:
            conn.execute_raw(
                "INSERT INTO runs (name, system_tag, source, content_sha256, parse_options, "
                "ingested_at, metadata, order_by, num_queries, num_rows) SELECT name, "
                "system_tag, source, 'x', parse_options, ingested_at, metadata, order_by, "
                "num_queries, num_rows FROM runs"
            )


def test_ingest_deduplicates_and_names_conflict(postgres_url):
    with Warehouse(postgres_url) as wh:
        [first] = wh.ingest_run(EXAMPLES / "run.bm25.txt")
        [again] = wh.ingest_run(EXAMPLES / "run.bm25.txt")
        assert first.created and not again.created and again.id == first.id
        with pytest.raises(ConflictError, match="already used"):
            wh.ingest_run(EXAMPLES / "run.dense.txt", name="bm25")
        [replaced] = wh.ingest_run(EXAMPLES / "run.dense.txt", name="bm25", replace=True)
        assert replaced.created and replaced.id != first.id
        assert list(wh.runs()["name"]) == ["bm25"]
        assert wh.run("bm25")["metadata"]["source"].endswith("run.dense.txt")


def _evaluate(target: str) -> tuple:
    with Warehouse(target) as wh:
        qrels = wh.ingest_qrels(EXAMPLES / "qrels.txt")
        runs = [
            r.id for f in ("run.bm25.txt", "run.dense.txt") for r in wh.ingest_run(EXAMPLES / f)
        ]
        result = wh.evaluate(runs=runs, qrels=qrels.id, measures=MEASURES)
        # the second time the values are read back from the store
        stored = wh.evaluate(runs=runs, qrels=qrels.id, measures=MEASURES)
        assert stored.num_reused == len(runs) * len(MEASURES)
        return result, stored


def _same(left, right) -> bool:
    return all(
        a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(left, right, strict=True)
    )


def test_values_identical_to_the_duckdb_file(postgres_url, tmp_path):
    on_file, file_stored = _evaluate(str(tmp_path / "w.duckdb"))
    on_server, server_stored = _evaluate(postgres_url)
    for ours, theirs in ((on_server, on_file), (server_stored, file_stored)):
        assert (
            ours.per_query[["run", "query", "measure"]]
            .astype(str)
            .equals(theirs.per_query[["run", "query", "measure"]].astype(str))
        )
        assert _same(ours.per_query["value"], theirs.per_query["value"])
        assert _same(ours.aggregates["value"], theirs.aggregates["value"])


#: A server that is never reached: the drivers are looked for before connecting.
_NOWHERE = "postgresql://nobody@127.0.0.1:9/none"


@pytest.mark.parametrize("driver", ["psycopg", "adbc_driver_postgresql", "sqlalchemy"])
@pytest.mark.parametrize(
    "call",
    [
        ["runs", "list"],
        ["trec-eval", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.bm25.txt")],
        ["eval", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.bm25.txt"), "-m", "AP"],
    ],
    ids=["runs-list", "trec-eval", "eval"],
)
def test_missing_driver_is_one_error_line(driver, call):
    """The console script's own entry point, with one driver's import blocked."""
    blocked = (
        f"import sys; sys.modules[{driver!r}] = None; sys.argv[0] = 'rankhouse'; "
        "from rankhouse.cli.entry import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked, "--db", _NOWHERE, *call],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: a postgresql:// warehouse needs the PostgreSQL drivers")
    assert line.endswith('install them with: pip install "rankhouse[postgres]"')


def test_missing_driver_in_python_is_a_rankhouse_error():
    blocked = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from rankhouse import Warehouse\n"
        "from rankhouse.errors import RankhouseError\n"
        "try:\n"
        f"    Warehouse({_NOWHERE!r})\n"
        "except RankhouseError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", blocked], capture_output=True, text=True, timeout=120
    )
    assert 'pip install "rankhouse[postgres]"' in done.stdout, done.stderr


def test_sql_read_only_is_a_read_only_transaction(postgres_url):
    Warehouse(postgres_url).close()
    with Warehouse(postgres_url, read_only=True) as wh, wh.connect() as conn:
        assert conn.execute_raw("SHOW transaction_read_only").scalar_one() == "on"
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute_raw("CREATE TABLE sneaky (x INTEGER)")


_ONE_AT_A_TIME = "a PostgreSQL warehouse runs one SQL statement at a time; send them one by one"


@pytest.mark.parametrize(
    ("lift", "said"),
    [
        ("SET TRANSACTION READ WRITE; DELETE FROM runs", _ONE_AT_A_TIME),
        (
            "COMMIT; SET default_transaction_read_only = off; DELETE FROM runs",
            "COMMIT is not taken here: rankhouse sql runs each query in a transaction of its own",
        ),
        ("SELECT 1; DELETE FROM runs", _ONE_AT_A_TIME),
    ],
)
def test_sql_cannot_lift_read_only(postgres_url, lift, said, run_cli):
    """One statement per call, and no COMMIT: nothing can turn the transaction read-write."""
    with Warehouse(postgres_url) as wh:
        wh.ingest_run(EXAMPLES / "run.bm25.txt")
    refused = run_cli("--db", postgres_url, "sql", lift, db=False)
    assert refused.exit_code == 1
    assert refused.stderr.startswith(f"Error: {said}")
    with Warehouse(postgres_url, read_only=True) as wh:
        assert list(wh.runs()["name"]) == ["bm25"]


def test_under_ci_a_missing_server_fails_the_tests(tmp_path):
    """CI=true: the PostgreSQL tests fail without a server, never skip."""
    env = {k: v for k, v in os.environ.items() if k != "RANKHOUSE_TEST_POSTGRES"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
         "migrations_applied_in_order"],
        capture_output=True,
        text=True,
        env=env | {"CI": "true"},
        cwd=tmp_path,
        timeout=300,
    )  # fmt: skip
    assert done.returncode != 0
    assert "CI must run the PostgreSQL tests" in done.stdout
    assert "skipped" not in done.stdout


def _evaluations(target: str) -> list[tuple]:
    with Warehouse(target, read_only=True) as wh, wh.connect() as conn:
        return [
            tuple(row)
            for row in conn.execute(
                "SELECT run_name, system_tag, run_ingested_at, qrels_name, measure, query_id, "
                "value FROM query_values ORDER BY run_name, measure, query_id"
            )
        ]


def test_a_file_warehouse_moves_to_the_server(postgres_url, tmp_path):
    """docs/scaling.md's move: the runs, qrels and evaluations land as they were, twice."""
    path = str(tmp_path / "w.duckdb")
    with Warehouse(path) as wh:
        wh.ingest_qrels(EXAMPLES / "qrels.txt")
        wh.evaluate("qrels", [EXAMPLES / "run.bm25.txt", EXAMPLES / "run.dense.txt"], MEASURES)
    for _ in range(2):
        with Warehouse(path, read_only=True) as file, Warehouse(postgres_url) as server:
            publish_all(server.backend, file.backend)
    moved = _evaluations(postgres_url)
    assert len(moved) > 100 and moved == _evaluations(path)
    with Warehouse(postgres_url) as wh, wh.connect() as conn:
        assert conn.execute("SELECT count(*) FROM evaluations").scalar() == 2 * len(MEASURES)


def test_a_schema_migrated_by_another_process_while_this_one_waits_is_whole(postgres_url):
    """A ``rankhouse migrate`` that lists a server's schema while another process migrates it
    (some migrations committed, the lock held) waits for the lock, then sees the whole schema:
    it must list it again rather than judge the part it saw (that said "damaged: ...
    missing"), and applies nothing twice."""
    import threading

    from rankhouse.backends.schema import MIGRATION_LOCK

    migrations = known_migrations("postgresql")
    server = psycopg.connect(postgres_url)
    server.autocommit = True
    server.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK])
    server.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
        "applied_at TIMESTAMP NOT NULL)"
    )

    def apply(migration) -> None:
        for statement in migration.statements():
            server.execute(statement)
        server.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, now())",
            [migration.version, migration.name],
        )

    apply(migrations[0])  # what the waiting process will have seen
    opened: list = []

    def open_warehouse() -> None:
        try:
            found = Warehouse.migrate(postgres_url)
            opened.append("whole" if found.version == 1 and not found.applied else found)
        except Exception as exc:  # reported by the assertion below
            opened.append(exc)

    waiting = threading.Thread(target=open_warehouse)
    waiting.start()
    try:
        for _ in range(200):  # until it waits for the migration lock (it has listed by then)
            blocked = server.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).fetchone()[0]
            if blocked:
                break
            threading.Event().wait(0.05)
        assert blocked, "the second process never waited for the migration lock"
        for migration in migrations[1:]:
            apply(migration)
    finally:
        server.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK])
        waiting.join(60)
        server.close()
    assert opened == ["whole"]
