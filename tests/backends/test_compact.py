"""``rankhouse compact``: a DuckDB file gives the space of pruned rows back to the file system
by a copy renamed over it, and a compaction that is killed or fails before the rename leaves
the warehouse as it was (docs/retention.md, backends/duckdb_file/compaction.py).
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli_env
from conftest import EXAMPLES

from rankhouse import Warehouse
from rankhouse.backends.duckdb_file import compaction
from rankhouse.errors import RankhouseError

QRELS = EXAMPLES / "qrels.txt"
NIGHT = EXAMPLES / "nights" / "bm25.night1.txt"
MEASURES = ["AP", "nDCG@10"]


def _filled(db: Path) -> list:
    """A warehouse of a night and 60 clones of its rows (9,600 rows each, by SQL), the
    clones pruned; its stored values."""
    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, name="q")
        wh.ingest_run(NIGHT, name="night-0")
        with wh.transaction() as conn:
            conn.execute(
                "INSERT INTO runs (name, system_tag, source, content_sha256, parse_options, "
                "ingested_at, metadata, order_by, num_queries, num_rows) "
                "SELECT 'clone-' || i, system_tag, source, content_sha256 || i, parse_options, "
                "ingested_at - to_days(CAST(i AS INTEGER)), metadata, order_by, num_queries, "
                "9600 FROM runs, range(1, 61) t(i) WHERE name = 'night-0'"
            )
            conn.execute(
                "INSERT INTO run_rows SELECT c.id, r.query_id, r.doc_id || '-' || k, r.rank, "
                "r.score + k FROM runs c, run_rows r, range(60) t(k) "
                "WHERE c.name LIKE 'clone-%' AND r.run_id = 1"
            )
        values = wh.evaluate("q", "night-0", MEASURES).aggregates["value"].tolist()
        assert len(wh.prune(keep_last=1).pruned) == 60
    return values


def _check_whole(db: Path, values: list) -> None:
    """The warehouse holds its runs, computes the same values and gives new ids after the
    old ones (its sequences came along)."""
    with Warehouse(db) as wh:
        names = set(wh.runs()["name"])
        assert {"night-0", *(f"clone-{i}" for i in range(1, 61))} <= names
        again = wh.evaluate("q", "night-0", MEASURES, recompute=True)
        assert again.aggregates["value"].tolist() == values
        name = f"night-{len(names) - 60}"
        wh.ingest_run(EXAMPLES / "nights" / f"bm25.night{len(names) - 59}.txt", name=name)
        assert wh.run(name)["id"] == len(names) + 1


def test_compact_shrinks_the_file_and_keeps_the_warehouse(tmp_path: Path):
    db = tmp_path / "w.duckdb"
    values = _filled(db)
    size = db.stat().st_size

    done = subprocess.run(
        [sys.executable, "-m", "rankhouse", "--db", str(db), "compact"],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"compacted {db}: {size / 1e6:,.1f} MB -> ")
    assert db.stat().st_size < size / 2  # 576,000 of 585,600 rows were pruned
    assert not (tmp_path / "w.duckdb.compacting").exists()
    _check_whole(db, values)


#: A compaction killed with SIGKILL after its copy is written, before the rename.
_KILLED = """
import os, signal, sys
from rankhouse import Warehouse
from rankhouse.backends.duckdb_file import compaction
compaction.replace = lambda copy, file: os.kill(os.getpid(), signal.SIGKILL)
Warehouse(sys.argv[1]).compact()
"""


def test_a_killed_or_failed_compaction_leaves_the_file(tmp_path: Path, monkeypatch):
    db = tmp_path / "w.duckdb"
    values = _filled(db)
    size = db.stat().st_size

    killed = subprocess.run([sys.executable, "-c", _KILLED, str(db)], env=cli_env(), timeout=120)

    assert killed.returncode == -9
    leftover = tmp_path / "w.duckdb.compacting"
    assert leftover.exists() and leftover.stat().st_size < size  # the copy, never renamed
    assert db.stat().st_size == size
    _check_whole(db, values)

    def full_disk(copy, file):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(compaction, "replace", full_disk)
    size = db.stat().st_size
    with Warehouse(db) as wh, pytest.raises(RankhouseError, match="No space left on device"):
        wh.compact()
    assert not leftover.exists()  # the killed one's and this one's copy removed
    assert db.stat().st_size == size
    monkeypatch.undo()
    with Warehouse(db) as wh:
        assert wh.compact().after < size
    _check_whole(db, values)
