"""The analysts' views, the five documented SQL questions, and ``rankhouse sql``.

The questions are read from docs/history.md and run on both backends without rankhouse: on the
warehouse file opened with the ``duckdb`` module alone, as the ``duckdb`` shell would open it,
and on a PostgreSQL warehouse through plain psycopg, as any SQL tool would.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pandas as pd
import psycopg
import pytest
from conftest import BACKENDS, drop_postgres_schema, new_postgres_schema
from series_helpers import make_runs, qrels_path

from rankhouse import Warehouse
from rankhouse.regress import regress

DOCS = Path(__file__).resolve().parents[2] / "docs" / "history.md"
MEASURES = ["nDCG@10", "AP"]
RUNS = ["bm25-old", "bm25-new", "splade", "night-1", "night-2", "night-3"]
VIEWS = ["run_catalog", "qrels_catalog", "latest_evaluations", "query_values", "regress_results"]


def documented_questions() -> list[str]:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("### Five questions in SQL", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sql\n(.*?)```", section, flags=re.S)


@pytest.fixture(scope="module", params=BACKENDS)
def warehouse_file(request, shared_dir, tmp_path_factory) -> tuple[str, dict]:
    """A closed warehouse with six runs of three systems, evaluated and gated: a DuckDB file,
    then a PostgreSQL warehouse.

    Returns the file path or server URL and the reference data: evaluate's per-query values
    and summary, and the regress results.
    """
    folder = tmp_path_factory.mktemp("sql")
    run_files = make_runs(shared_dir, folder / "runs")
    if request.param == "duckdb":
        path = str(folder / "warehouse.duckdb")
    else:
        server = request.getfixturevalue("postgres_server")
        schema, path = new_postgres_schema(server)
        request.addfinalizer(lambda: drop_postgres_schema(server, schema))
    with Warehouse(path) as wh:
        wh.ingest_qrels(qrels_path(shared_dir), name="dl19")
        for name in RUNS:
            commit = {"commit": f"commit-{name}"} if name.startswith("night") else None
            wh.ingest_run(run_files[name], name=name, meta=commit)
            if name == "bm25-old":  # last week's bm25 run
                with wh.transaction() as conn:
                    conn.execute(
                        "UPDATE runs SET ingested_at = ingested_at - INTERVAL '8 days' "
                        "WHERE name = 'bm25-old'"
                    )
        result = wh.evaluate("dl19", RUNS, MEASURES)
        gates = [
            regress(wh, name, baseline="previous", qrels="dl19", measures=MEASURES)
            for name in ("night-2", "night-3")
        ]
    reference = {"per_query": result.per_query, "summary": result.summary, "gates": gates}
    return path, reference


@pytest.fixture
def plain(warehouse_file):
    """The warehouse opened without rankhouse: the duckdb module, or psycopg for a server."""
    target = warehouse_file[0]
    if target.startswith("postgresql://"):
        connection = psycopg.connect(target, autocommit=True)
        connection.execute("SET default_transaction_read_only = on")
    else:
        connection = duckdb.connect(target, read_only=True)
    yield connection
    connection.close()


def frame(connection, query: str) -> pd.DataFrame:
    """A query's rows as a DataFrame, through either module."""
    cursor = connection.execute(query)
    return pd.DataFrame(cursor.fetchall(), columns=[d[0] for d in cursor.description])


def test_the_docs_hold_five_questions():
    assert len(documented_questions()) == 5


@pytest.mark.parametrize("view", VIEWS)
def test_views_open_in_plain_duckdb(plain, view):
    rows = plain.execute(f"SELECT count(*) FROM {view}").fetchone()[0]
    assert rows > 0


def test_latest_evaluations_has_one_row_per_run_and_measure(plain, warehouse_file):
    found = frame(
        plain, "SELECT run_name, measure, value FROM latest_evaluations ORDER BY run_name, measure"
    )
    summary = warehouse_file[1]["summary"].set_index("run")
    assert len(found) == len(RUNS) * len(MEASURES)
    for row in found.itertuples():
        assert row.value == summary.at[row.run_name, row.measure]


def test_query_values_carry_run_details(plain, warehouse_file):
    found = frame(
        plain,
        "SELECT run_name, system_tag, measure, query_id, value, "
        "CAST(run_metadata AS JSON) ->> 'commit' AS git_commit FROM query_values",
    )
    per_query = warehouse_file[1]["per_query"]
    merged = found.merge(
        per_query, left_on=["run_name", "measure", "query_id"], right_on=["run", "measure", "query"]
    )
    assert len(merged) == len(per_query) == len(found)
    assert (merged["value_x"] == merged["value_y"]).all()
    nightly = found[found["system_tag"] == "nightly"]
    assert set(nightly["git_commit"]) == {"commit-night-1", "commit-night-2", "commit-night-3"}


def test_question_1_systems_ranked_by_ap(plain, warehouse_file):
    rows = plain.execute(documented_questions()[0]).fetchall()
    summary = warehouse_file[1]["summary"].set_index("run")
    newest = {"bm25": "bm25-new", "splade": "splade", "nightly": "night-3"}
    expected = sorted(
        ((tag, run, summary.at[run, "AP"], 43) for tag, run in newest.items()),
        key=lambda row: -row[2],
    )
    assert rows == expected


def test_question_2_bm25_drops_since_last_week(plain, warehouse_file):
    rows = plain.execute(documented_questions()[1]).fetchall()
    per_query = warehouse_file[1]["per_query"]
    ndcg = per_query[per_query["measure"] == "nDCG@10"].pivot(
        index="query", columns="run", values="value"
    )
    change = (ndcg["bm25-new"] - ndcg["bm25-old"]).rename("change")
    frame = pd.concat([ndcg["bm25-old"], ndcg["bm25-new"], change], axis=1).reset_index()
    frame = frame[frame["change"] < 0].sort_values(["change", "query"]).head(10)
    assert len(frame) > 0
    assert [row[0] for row in rows] == list(frame["query"])
    assert [row[3] for row in rows] == pytest.approx(list(frame["change"]))


def test_question_3_nightly_series_with_gates(plain, warehouse_file):
    rows = plain.execute(documented_questions()[2]).fetchall()
    summary = warehouse_file[1]["summary"].set_index("run")
    gates = warehouse_file[1]["gates"]
    assert [(r[0], r[2], r[3], r[4]) for r in rows] == [
        ("night-1", "commit-night-1", summary.at["night-1", "nDCG@10"], None),
        (
            "night-2",
            "commit-night-2",
            summary.at["night-2", "nDCG@10"],
            "pass" if gates[0].passed else "fail",
        ),
        (
            "night-3",
            "commit-night-3",
            summary.at["night-3", "nDCG@10"],
            "pass" if gates[1].passed else "fail",
        ),
    ]
    assert [r[4] for r in rows] == [None, "pass", "fail"]


def test_question_4_hardest_queries(plain, warehouse_file):
    rows = plain.execute(documented_questions()[3]).fetchall()
    per_query = warehouse_file[1]["per_query"]
    ndcg = per_query[per_query["measure"] == "nDCG@10"]
    stats = ndcg.groupby("query")["value"].agg(["count", "mean", "max"]).reset_index()
    expected = stats.sort_values(["mean", "query"]).head(5)
    assert [r[0] for r in rows] == list(expected["query"])
    assert [r[1] for r in rows] == [len(RUNS)] * 5
    assert [r[2] for r in rows] == pytest.approx(list(expected["mean"]))


def test_question_5_failed_gates(plain, warehouse_file):
    rows = plain.execute(documented_questions()[4]).fetchall()
    failed = warehouse_file[1]["gates"][1]
    assert failed.regressed
    assert [(r[1], r[2], r[3]) for r in rows] == [
        ("night-3", "night-2", measure) for measure in sorted(failed.regressed)
    ]


def test_sql_command_is_read_only_by_default(warehouse_file, run_cli, tmp_path):
    """Last in this file: on a server it empties regress_verdicts of the module's warehouse."""
    target = warehouse_file[0]
    if not target.startswith("postgresql://"):
        path = tmp_path / "copy.duckdb"
        path.write_bytes(Path(target).read_bytes())
        target = str(path)
    env_db = ["--db", target]
    query = documented_questions()[0]
    shown = run_cli(*env_db, "sql", query, "--format", "json", db=False)
    assert shown.exit_code == 0, shown.stderr
    assert [row["system_tag"] for row in json.loads(shown.stdout)][0] in {
        "bm25",
        "splade",
        "nightly",
    }
    denied = run_cli(*env_db, "sql", "DELETE FROM regress_verdicts", db=False)
    assert denied.exit_code == 1
    assert "read-only" in denied.stderr and "--write" in denied.stderr
    allowed = run_cli(*env_db, "sql", "--write", "DELETE FROM regress_verdicts", db=False)
    assert allowed.exit_code == 0, allowed.stderr
    counted = run_cli(
        *env_db,
        "sql",
        "-",
        "-f",
        "csv",
        input="SELECT count(*) AS n FROM regress_verdicts",
        db=False,
    )
    assert counted.stdout.splitlines() == ["n", "0"]
    broken = run_cli(*env_db, "sql", "SELECT nope FROM runs", db=False)
    assert broken.exit_code == 1 and broken.stderr.startswith("Error: the query failed")
