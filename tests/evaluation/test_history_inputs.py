"""Input signatures: every stored evaluation records what it was computed from (qrels content,
queries evaluated, relevance level, missing-query policy, options), migration 0011 gives the
older ones theirs, and history shows a short id and a boundary where it changes.

The expected signatures are computed here with hashlib from the definition
(docs/history.md), never read from rankhouse.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from schema_helpers import RawDatabase, insert_run_and_qrels, migrate_by_hand

from rankhouse import Warehouse
from rankhouse.backends import resolve_target
from rankhouse.evaluation.stored import EMPTY_QUERY_SET, query_set_hash

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq3 0 d 1\n"
FULL = "q1 Q0 a 1 3 sys\nq1 Q0 b 2 2 sys\nq2 Q0 c 1 1 sys\nq3 Q0 x 1 1 sys\n"
SHORT = "q1 Q0 a 1 3 sys\nq2 Q0 c 1 1 sys\n"  # answers q1 and q2 only


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def signature(sha: str, queries: list[str], level: int, policy: str, options: str) -> str:
    """The definition: md5 of five lines (the queries' own md5 over their sorted ids)."""
    return _md5("\n".join([sha, _md5("\n".join(sorted(queries))), str(level), policy, options]))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    for name, text in (("full", FULL), ("short", SHORT)):
        (tmp_path / f"{name}.run").write_text(text)
    return tmp_path


def test_each_evaluation_stores_its_signature(files, any_warehouse):
    wh = any_warehouse
    wh.ingest_qrels(files / "qrels.txt", name="q")
    wh.ingest_run(files / "short.run", name="short")
    wh.evaluate("q", "short", ["AP", "nDCG@10"])
    wh.evaluate("q", "short", ["AP"], missing_queries="skip")
    wh.evaluate("q", "short", ["AP"], relevance_level=2)
    with wh.connect() as conn:
        sha = conn.execute("SELECT content_sha256 FROM qrels_sets").scalar_one()
        stored = {
            (row.label): row.input_signature
            for row in conn.execute("SELECT label, input_signature FROM evaluations").all()
        }
        latest = conn.execute(
            "SELECT measure, input_signature FROM latest_evaluations ORDER BY measure"
        ).all()
    every = ["q1", "q2", "q3"]  # scored as trec_eval -c scores them: the qrels' queries
    assert stored == {
        "AP": signature(sha, every, 1, "zero", "{}"),
        "nDCG@10": signature(sha, every, 1, "zero", "{}"),
        "AP [missing_queries=skip]": signature(sha, ["q1", "q2"], 1, "skip", "{}"),
        "AP(rel=2)": signature(sha, every, 2, "zero", "{}"),
    }
    assert dict(map(tuple, latest)) == stored  # queryable beside the values


def test_the_empty_query_set_is_the_md5_of_nothing():
    assert hashlib.md5(b"").hexdigest() == EMPTY_QUERY_SET
    assert query_set_hash([]) == EMPTY_QUERY_SET


def test_migration_0011_gives_older_evaluations_the_same_signature(backend_target):
    db = RawDatabase(resolve_target(backend_target))
    with db.transaction() as con:
        migrate_by_hand(con, db.dialect, 10)
        insert_run_and_qrels(con, 2)
        for level, policy, options in ((1, "zero", "{}"), (2, "skip", '{"max_rank": 5}')):
            con.execute(
                "INSERT INTO evaluations (run_id, qrels_id, qrels_sha256, measure, parameters, "
                "relevance_level, missing_queries, options, aggregate, value, num_q, "
                "rankhouse_version, created_at, label) VALUES (1, 1, 'sha', 'AP', '{}', :l, :p, "
                ":o, 'mean', 0.5, 2, 'old', now(), 'AP')",
                {"l": level, "p": policy, "o": options},
            )
        con.execute_raw(  # byte order: 'Q' before 'a' before 'b'
            "INSERT INTO evaluation_values VALUES (1, 'b', 0.5), (1, 'a', 0.5), (1, 'Q', 0.5)"
        )
        con.execute_raw(
            "INSERT INTO regress_checks (run_id, baseline_run_id, baseline_spec, qrels_id, test, "
            "correction, alpha, max_drop, relative, options, passed, created_at) VALUES "
            "(1, 1, 'previous', 1, 't', 'none', 0.05, 0.01, false, '{}', true, now())"
        )
    db.close()
    Warehouse.migrate(backend_target)  # a server's warehouse: the owner's explicit step
    with Warehouse(backend_target) as wh, wh.connect() as conn:
        found = conn.execute("SELECT input_signature FROM evaluations ORDER BY id").scalars()
        mode = conn.execute("SELECT mode FROM regress_checks").scalar_one()
    assert list(found) == [
        signature("sha", ["Q", "a", "b"], 1, "zero", "{}"),
        _md5("\n".join(["sha", _md5(""), "2", "skip", '{"max_rank": 5}'])),  # no value rows
    ]
    assert mode == "significance"  # every check before 0011 was


def test_history_shows_the_inputs_and_where_they_change(files, warehouse, run_cli, db_path):
    warehouse.ingest_qrels(files / "qrels.txt", name="q")
    for i, name in enumerate(("one", "two", "three", "four")):
        text = (SHORT if name == "three" else FULL).replace(" 3 sys", f" {3 + i} sys")
        (files / f"{name}.run").write_text(text)  # other content: another run
        warehouse.ingest_run(files / f"{name}.run", name=name)
    warehouse.evaluate("q", ["one", "two", "three", "four"], ["AP"], missing_queries="skip")
    history = warehouse.history(measures=["AP"], missing_queries="skip")
    with warehouse.connect() as conn:
        sha = conn.execute("SELECT content_sha256 FROM qrels_sets").scalar_one()
    every = signature(sha, ["q1", "q2", "q3"], 1, "skip", "{}")[:8]
    fewer = signature(sha, ["q1", "q2"], 1, "skip", "{}")[:8]
    assert list(history["inputs"]) == [every, every, fewer, every]
    # three answered fewer queries: its mean is over other queries, on both sides a boundary
    assert list(history["new_inputs"]) == [False, False, True, True]

    shown = run_cli("history", "-m", "AP", "--missing-queries", "skip", "-f", "json")
    assert shown.exit_code == 0, shown.stderr
    rows = json.loads(shown.stdout)
    assert [(r["inputs"], r["new_inputs"]) for r in rows] == [
        (every, False),
        (every, False),
        (fewer, True),
        (every, True),
    ]


def test_an_unknown_signature_is_a_boundary_and_stops_the_gate(files, warehouse):
    """NULL (a row written by other means) equals nothing: history breaks on both sides of
    it, and a gate against a baseline judged on it stops (exit 2 on the command line)."""
    from rankhouse.regress import InputChangeError

    warehouse.ingest_qrels(files / "qrels.txt", name="q")
    for i, name in enumerate(("one", "two", "three")):
        (files / f"{name}.run").write_text(FULL.replace(" 3 sys", f" {3 + i} sys"))
        warehouse.ingest_run(files / f"{name}.run", name=name)
    warehouse.regress("one", baseline="last-passed", qrels="q", measures=["AP:1"],
                      allow_missing_baseline=True)  # fmt: skip
    warehouse.regress("two", baseline="last-passed", qrels="q", measures=["AP:1"])
    warehouse.evaluate("q", "three", ["AP"])
    with warehouse.transaction() as conn:
        conn.execute(
            "UPDATE evaluations SET input_signature = NULL WHERE run_id = "
            "(SELECT id FROM runs WHERE name = 'two')"
        )
    history = warehouse.history(measures=["AP"])
    assert history["inputs"].tolist()[1] is None
    assert list(history["new_inputs"]) == [False, True, True]
    with pytest.raises(InputChangeError, match="AP: the baseline's inputs are unknown"):
        warehouse.regress("three", baseline="last-passed", qrels="q", measures=["AP:1"])
    passed = warehouse.regress(
        "three", baseline="last-passed", qrels="q", measures=["AP:1"], allow_input_change=True
    )
    assert passed.baseline == "two" and passed.input_change.startswith("AP: the baseline's")
