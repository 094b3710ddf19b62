"""Qrels versions and ``qrels diff`` (docs/judgments.md, Versions and diffs).

Other judgments under a taken name are the name's next version (``q@2``), each recording the
version it follows; the bare name keeps naming the first. The diff's expected values are
counted by hand from the two small qrels files below.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from schema_helpers import RawDatabase, insert_run_and_qrels, migrate_by_hand

from rankhouse import NotFoundError, Warehouse
from rankhouse.backends import resolve_target

#: Version 1. Query 3 is judged only here; d2 (grade 0) is removed in B.
QRELS_A = "1 0 d1 2\n1 0 d2 0\n1 0 d3 1\n2 0 d4 1\n2 0 d5 0\n3 0 d6 1\n5 0 d9 1\n"
#: Version 2: d3 1 -> 2, d4 1 -> 0, d7 added with grade 0, query 4 only here (d8, grade 3).
QRELS_B = "1 0 d1 2\n1 0 d3 2\n1 0 d7 0\n2 0 d4 0\n2 0 d5 0\n4 0 d8 3\n5 0 d9 1\n"
#: Version 3: one grade of B changed (d5 0 -> 1).
QRELS_C = QRELS_B.replace("2 0 d5 0", "2 0 d5 1")
#: Top documents: d3 (q1), d4 (q2), d6 (q3), d9 (q5); no row for query 4.
RUN = "1 Q0 d3 1 3 sys\n1 Q0 d1 2 2 sys\n2 Q0 d4 1 1 sys\n3 Q0 d6 1 1 sys\n5 Q0 d9 1 1 sys\n"


@pytest.fixture
def files(tmp_path):
    for name, text in [("a.qrels", QRELS_A), ("b.qrels", QRELS_B), ("c.qrels", QRELS_C)]:
        (tmp_path / name).write_text(text)
    (tmp_path / "sys.run").write_text(RUN)
    return tmp_path


def _csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def _cli(run_cli, target, *args):
    done = run_cli("--db", target, *args, db=False)
    assert done.exit_code == 0, done.stderr
    return done


def test_versions_are_kept_with_their_lineage(backend_target, files, run_cli):
    said = [
        _cli(run_cli, backend_target, "ingest", "qrels", name, "--name", "q").stderr
        for name in ("a.qrels", "b.qrels", "c.qrels", "b.qrels")
    ]
    assert said == [
        "stored qrels set 'q' (id 1): 4 queries, 7 judgments\n",
        "stored qrels set 'q@2' (id 2): 4 queries, 7 judgments\n",
        "stored qrels set 'q@3' (id 3): 4 queries, 7 judgments\n",
        "already stored as qrels set 'q@2' (id 2), nothing new\n",  # the same content again
    ]
    listed = _csv(_cli(run_cli, backend_target, "qrels", "list", "-f", "csv").stdout)
    assert [(r["name"], r["version"], r["follows"]) for r in listed] == [
        ("q", "1", ""),
        ("q@2", "2", "q"),
        ("q@3", "3", "q@2"),
    ]
    # --replace keeps its meaning: what holds the name is overwritten, no version is made
    (files / "x.qrels").write_text("7 0 x 1\n")
    (files / "y.qrels").write_text("7 0 y 1\n")
    _cli(run_cli, backend_target, "ingest", "qrels", "x.qrels", "--name", "other")
    replaced = _cli(
        run_cli, backend_target, "ingest", "qrels", "y.qrels", "--name", "other", "--replace"
    )
    assert replaced.stderr == "stored qrels set 'other' (id 5): 1 query, 1 judgment\n"
    # removing a version leaves the lineage of the next one readable
    _cli(run_cli, backend_target, "qrels", "rm", "q@2", "--yes")
    listed = _csv(_cli(run_cli, backend_target, "qrels", "list", "-f", "csv").stdout)
    assert [(r["name"], r["version"], r["follows"]) for r in listed] == [
        ("q", "1", ""),
        ("q@3", "3", "q@2 (removed)"),
        ("other", "", ""),
    ]
    with Warehouse(backend_target) as wh:
        frame = wh.qrels_sets()
        assert list(frame["follows"].fillna("")) == ["", "q@2 (removed)", ""]


def test_a_diff_counted_by_hand(any_warehouse, files):
    wh = any_warehouse
    for name in ("a.qrels", "b.qrels"):
        wh.ingest_qrels(files / name, name="q", progress=False)
    wh.ingest_run(files / "sys.run", progress=False)
    wh.evaluate("q", "sys", ["P@1", "AP"])
    wh.evaluate("q@2", "sys", ["P@1"])

    found = wh.qrels_diff("q", "q@2")
    assert (found.a, found.b) == ("q", "q@2")
    assert found.queries.values.tolist() == [
        # query, judged_a, judged_b, added, removed, changed, unchanged
        ["1", 3, 3, 1, 1, 1, 1],
        ["2", 2, 2, 0, 0, 1, 1],
        ["3", 1, 0, 0, 1, 0, 0],
        ["4", 0, 1, 1, 0, 0, 0],
        ["5", 1, 1, 0, 0, 0, 1],
    ]
    assert found.totals == {
        "queries_a": 4,
        "queries_b": 4,
        "only_in_a": 1,
        "only_in_b": 1,
        "judged_a": 7,
        "judged_b": 7,
        "added": 2,
        "removed": 2,
        "changed": 2,
        "unchanged": 3,
    }
    transitions = found.rows("transitions")
    assert transitions.columns == ["grade_a", "0", "1", "2", "3", "absent"]
    assert transitions.rows == [
        ("0", 1, 0, 0, 0, 1),  # d5 stays 0; d2 (0) removed: 0 and absent differ
        ("1", 1, 1, 1, 0, 1),  # d4 -> 0, d9 stays 1, d3 -> 2, d6 removed
        ("2", 0, 0, 1, 0, 0),  # d1 unchanged
        ("3", 0, 0, 0, 0, 0),
        ("absent", 1, 0, 0, 1, None),  # d7 added as 0, d8 added as 3
    ]
    assert found.rows("changes").rows == [
        ("1", "d2", 0, None, "removed"),
        ("1", "d3", 1, 2, "changed"),
        ("1", "d7", None, 0, "added"),
        ("2", "d4", 1, 0, "changed"),
        ("3", "d6", 1, None, "removed"),
        ("4", "d8", None, 3, "added"),
    ]
    # P@1 with q: queries 1, 2, 3, 5, each top document relevant -> 1.0; with q@2: queries
    # 1, 2, 4, 5 -> (1 + 0 + 0 + 1) / 4 (query 4 has no row: 0). AP was not asked with q@2.
    # The evaluations' queries 1, 2 and 3 have differing judgments, 5 none.
    assert found.rows("evaluations").rows == [
        ("sys", "AP", 1.0, 4, 3, None),
        ("sys", "P@1", 1.0, 4, 3, 0.5),
    ]
    # nothing moved: the evaluations with q stay tied to q
    assert wh.qrels_diff("q@2", "q").totals["added"] == 2
    unchanged = {"only_in_a": 0, "only_in_b": 0, "added": 0, "removed": 0, "changed": 0}
    assert wh.qrels_diff("q", "q").totals == {**found.totals, **unchanged, "unchanged": 7}
    with pytest.raises(NotFoundError, match="no qrels set named 'nosuch'"):
        wh.qrels_diff("q", "nosuch")


def test_the_diff_command_prints_each_section(files, run_cli):
    for name in ("a.qrels", "b.qrels"):
        assert run_cli("ingest", "qrels", name, "--name", "q").exit_code == 0
    table = run_cli("qrels", "diff", "q", "q@2", "--changes")
    assert table.exit_code == 0, table.stderr
    titles = [
        "judgments per query, q -> q@2",
        "totals, q -> q@2",
        "grade transitions (rows: grade in q, columns: grade in q@2)",
        "stored evaluations that used q",
        "judgments added, removed and changed",
    ]
    assert all(title in table.stdout for title in titles), table.stdout
    document = json.loads(run_cli("qrels", "diff", "q", "q@2", "-f", "json").stdout)
    assert list(document) == ["a", "b", "queries", "totals", "transitions", "evaluations"]
    assert document["totals"]["changed"] == 2 and document["evaluations"] == []
    absent = {"grade_a": "absent", "0": 1, "1": 0, "2": 0, "3": 1, "absent": None}
    assert document["transitions"][-1] == absent
    queries = _csv(run_cli("qrels", "diff", "q", "q@2", "-f", "csv").stdout)
    assert [(r["query"], r["added"], r["removed"]) for r in queries][:2] == [
        ("1", "1", "1"),
        ("2", "0", "0"),
    ]
    tsv = run_cli("qrels", "diff", "q", "q@2", "-f", "tsv", "--section", "changes").stdout
    assert tsv.splitlines()[:2] == ["query\tdoc\tgrade_a\tgrade_b\tchange", "1\td2\t0\t\tremoved"]
    missing = run_cli("qrels", "diff", "q", "nosuch")
    assert missing.exit_code == 1 and missing.stderr.startswith(
        "Error: no qrels set named 'nosuch'"
    )


def test_a_warehouse_at_schema_16_takes_versions(backend_target, files, run_cli):
    url = resolve_target(backend_target)
    db = RawDatabase(url)
    with db.transaction() as con:  # as rankhouse 0.16.0 left it, holding qrels 'q'
        migrate_by_hand(con, db.dialect, 16)
        insert_run_and_qrels(con)
    db.close()
    _cli(run_cli, url, "migrate")
    stored = _cli(run_cli, url, "ingest", "qrels", "a.qrels", "--name", "q")
    assert stored.stderr == "stored qrels set 'q@2' (id 2): 4 queries, 7 judgments\n"
    listed = _csv(_cli(run_cli, url, "qrels", "list", "-f", "csv").stdout)
    assert [(r["name"], r["version"], r["follows"]) for r in listed] == [
        ("q", "1", ""),
        ("q@2", "2", "q"),
    ]
