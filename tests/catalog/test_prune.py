"""Retention: ``runs prune`` deletes old runs' rows and nothing else; every number stays, the
pruned runs are marked, and what would need the rows says how to bring them back
(docs/retention.md). On a DuckDB file and a PostgreSQL server where the store matters; the
policy and the CLI on small hand-made warehouses in a DuckDB file.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import ERROR_LINE, cli_env
from conftest import EXAMPLES

from rankhouse import Warehouse
from rankhouse.errors import InputError, NotFoundError

QRELS = EXAMPLES / "qrels.txt"
NIGHTS = [EXAMPLES / "nights" / f"bm25.night{n}.txt" for n in (1, 2, 3, 4)]
MEASURES = ["AP", "nDCG@10"]
#: Rows of each example night (161 lines, one of them a comment): hand-counted with wc -l.
NIGHT_ROWS = 160


def _nights(wh: Warehouse, count: int = 3) -> list[str]:
    wh.ingest_qrels(QRELS, name="q")
    names = []
    for n, night in enumerate(NIGHTS[:count], start=1):
        wh.ingest_run(night, name=f"bm25-{n}")
        names.append(f"bm25-{n}")
    return names


def _numbers(wh: Warehouse) -> tuple:
    """Every stored number with what identifies it: evaluations, per-query values, checks."""
    with wh.connect() as conn:
        return tuple(
            tuple(map(tuple, conn.execute(sql).all()))
            for sql in (
                "SELECT id, run_id, measure, value, input_signature FROM evaluations ORDER BY id",
                "SELECT evaluation_id, query_id, value FROM evaluation_values "
                "ORDER BY evaluation_id, query_id",
                "SELECT id, run_id, baseline_run_id, passed FROM regress_checks ORDER BY id",
                "SELECT check_id, measure, delta, margin FROM regress_verdicts "
                "ORDER BY check_id, measure",
            )
        )


def _row_count(wh: Warehouse) -> int:
    with wh.connect() as conn:
        return conn.execute("SELECT count(*) FROM run_rows").scalar_one()


def test_pruned_values_stay_bit_identical(any_warehouse: Warehouse):
    wh = any_warehouse
    names = _nights(wh)
    for name in names:
        wh.regress(
            name,
            baseline="reference",
            qrels="q",
            measures=["nDCG@10"],
            allow_missing_baseline=True,
        )
    before = wh.evaluate("q", names, MEASURES, with_per_query=True)
    numbers = _numbers(wh)

    done = wh.prune(keep_last=1)

    # bm25-1 is the gate's reference (pinned on the first night): kept with bm25-3, the newest
    assert [(row[0], row[5]) for row in done.rows] == [
        ("bm25-1", "kept: gate reference"),
        ("bm25-2", "pruned"),
    ]
    assert done.pruned[0][3] == NIGHT_ROWS
    # a server vacuums run_rows after a prune (this login owns it); a file waits for compact
    expected = "VACUUM run_rows" if wh.dialect == "postgresql" else None
    assert (done.reclaimed or "")[:15] == (expected or "")
    assert _numbers(wh) == numbers
    assert _row_count(wh) == 2 * NIGHT_ROWS
    after = wh.evaluate("q", names, MEASURES, with_per_query=True)
    assert after.per_query.equals(before.per_query)  # exact: the stored doubles, read again
    assert after.aggregates["value"].tolist() == before.aggregates["value"].tolist()
    assert set(after.query_counts) == {"bm25-1", "bm25-3"}  # the pruned run has none to count
    runs = wh.runs().set_index("name")
    assert runs.loc["bm25-2", "num_rows"] == NIGHT_ROWS  # what it had
    assert runs["pruned_at"].notna().tolist() == [False, True, False]


def test_computing_on_a_pruned_run_says_how_to_restore(warehouse: Warehouse, tmp_path: Path):
    _nights(warehouse, 2)
    warehouse.evaluate("q", ["bm25-1", "bm25-2"], ["AP"])
    warehouse.prune(keep_last=1, archive=tmp_path / "archive")

    with pytest.raises(
        NotFoundError,
        match=r"the rows of run 'bm25-1' were pruned on .*160 rows "
        r"removed.*P@5 \(not stored for it\) cannot be computed.*bring them back "
        r"from .*archive.*Warehouse.restore\('bm25-1'\)",
    ):
        warehouse.evaluate("q", ["bm25-1"], ["P@5"])
    with pytest.raises(NotFoundError, match=r"AP \(recompute\) cannot be computed"):
        warehouse.evaluate("q", ["bm25-1"], ["AP"], recompute=True)
    with pytest.raises(NotFoundError, match=r"its order drift cannot be computed"):
        warehouse.drift("bm25-2", baseline="bm25-1")


@pytest.fixture(scope="module")
def two_systems(tmp_path_factory) -> Path:
    """Two systems of three nights ingested 40, 30 and 20 days ago (a-1 .. a-3 and b-1 ..
    b-3, in the order a-1, b-1, a-2, b-2, a-3, b-3), b-1 accepted as b's gate reference."""
    db = tmp_path_factory.mktemp("policy") / "w.duckdb"
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, name="q")
        for system, first in (("a", 0), ("b", 1)):
            for n in (1, 2, 3):
                wh.ingest_run(NIGHTS[(first + n - 1) % 4], name=f"{system}-{n}")
                with wh.transaction() as conn:
                    conn.execute(
                        "UPDATE runs SET system_tag = :tag, ingested_at = ingested_at - "
                        f"INTERVAL '{50 - 10 * n} days' WHERE name = :name",
                        {"tag": system, "name": f"{system}-{n}"},
                    )
        wh.accept_reference("b-1", qrels="q", reason="the first b night")
    return db


@pytest.mark.parametrize(
    ("policy", "pruned", "kept"),
    [
        ({"keep_last": 1}, ["a-1", "a-2", "b-2"], ["b-1"]),
        ({"keep_last": 2}, ["a-1"], ["b-1"]),
        ({"older_than": 25}, ["a-1", "a-2", "b-2"], ["b-1"]),
        ({"older_than": 15}, ["a-1", "a-2", "b-2", "a-3", "b-3"], ["b-1"]),
        ({"keep_last": 1, "older_than": 25, "system": "a"}, ["a-1", "a-2"], []),
        ({"keep_last": 0, "system": ["b"]}, ["b-2", "b-3"], ["b-1"]),
        ({"keep_last": 5}, [], []),
    ],
)
def test_policy_selects_by_night_age_and_system(
    two_systems: Path, tmp_path: Path, policy, pruned, kept
):
    """The runs each policy prunes, worked out by hand from the nights' ages."""
    db = tmp_path / "w.duckdb"
    shutil.copy(two_systems, db)
    with Warehouse(db) as wh:
        rows = _row_count(wh)

        planned = wh.prune(**policy, dry_run=True)
        assert _row_count(wh) == rows  # a dry run changes nothing
        assert wh.runs()["pruned_at"].isna().all()
        done = wh.prune(**policy)

        for result, action in ((planned, "would prune"), (done, "pruned")):
            assert [row[0] for row in result.pruned] == pruned
            assert {row[5] for row in result.pruned} <= {action}
            assert [row[0] for row in result.rows if row not in result.pruned] == kept
        assert planned.estimated_bytes == int(NIGHT_ROWS * 15.2) * len(pruned)
        assert _row_count(wh) == rows - NIGHT_ROWS * len(pruned)
        assert sorted(wh.runs().dropna(subset=["pruned_at"])["name"]) == sorted(pruned)
        assert [row[0] for row in wh.prune(**policy).rows] == kept  # nothing more to prune


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ({}, "a prune needs a policy: keep_last=90 .* and/or older_than=365"),
        ({"keep_last": -1}, "keep_last must be 0 or more"),
        ({"older_than": -2}, "older_than must be 0 or more days"),
    ],
)
def test_policy_refused(warehouse: Warehouse, policy, message):
    with pytest.raises(InputError, match=message):
        warehouse.prune(**policy)


def _cli(db: Path, *args, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rankhouse", "--db", str(db), *map(str, args)],
        capture_output=True,
        text=True,
        input=stdin,
        env=cli_env(),
        timeout=120,
    )


def test_cli_prune_asks_lists_and_marks(tmp_path: Path):
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        _nights(wh, 2)
        wh.evaluate("q", ["bm25-1", "bm25-2"], ["AP"])

    refused = _cli(db, "runs", "prune", "--keep-last", "1")
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        "Error: this policy would prune the rows of 1 run (160 rows, about 0.0 MB, estimated at "
        "15.2 bytes a row); pass --yes to prune them (there is no terminal to ask)"
    )
    assert _cli(db, "runs", "prune").stderr.startswith("Error: a prune needs a policy: --keep-last")
    dry = _cli(db, "runs", "prune", "--keep-last", "1", "--dry-run", "--format", "json")
    assert json.loads(dry.stdout) == [
        {
            "run": "bm25-1",
            "system_tag": "bm25",
            "ingested_at": json.loads(dry.stdout)[0]["ingested_at"],
            "rows": 160,
            "bytes": 2432,
            "action": "would prune",
            "archive": "",
        }
    ]
    done = _cli(db, "runs", "prune", "--keep-last", "1", "--yes", "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "run,system_tag,ingested_at,rows,bytes,action,archive"
    assert "the file keeps its size until `rankhouse compact`" in done.stderr

    listed = json.loads(_cli(db, "runs", "list", "--format", "json").stdout)
    assert [(r["name"], r["rows"], r["pruned"] is not None) for r in listed] == [
        ("bm25-1", 160, True),
        ("bm25-2", 160, False),
    ]
    shown = _cli(db, "runs", "show", "bm25-1", "--format", "json").stdout
    assert (json.loads(shown)["pruned_rows"], json.loads(shown)["archive"]) == (160, "")
    stored = _cli(db, "eval", "q", "bm25-1", "-m", "AP")
    assert stored.returncode == 0
    assert "not in the run" not in stored.stderr and "Warning" not in stored.stderr
    new = _cli(db, "eval", "q", "bm25-1", "-m", "P@5")
    assert new.returncode == 1
    assert new.stderr == (
        f"Error: the rows of run 'bm25-1' were pruned on {listed[0]['pruned'][:10]} (160 rows "
        "removed; its stored values stay), so P@5 (not stored for it) cannot be computed for "
        "it; they were pruned without an archive (--archive keeps a pruned run restorable): "
        "ingesting the run's file again brings them back\n"
    )
    recompute = _cli(db, "eval", "q", "bm25-1", "-m", "AP", "--recompute")
    assert "AP (--recompute) cannot be computed" in recompute.stderr
    restore = _cli(db, "runs", "restore", "bm25-1")
    assert restore.returncode == 1
    assert restore.stderr == (
        "Error: run 'bm25-1' was pruned without an archive: no archive holds its rows; "
        f"ingesting its file again ({NIGHTS[0]}) brings them back\n"
    )
    for error in (refused, new, restore):
        assert re.match(ERROR_LINE, error.stderr)
