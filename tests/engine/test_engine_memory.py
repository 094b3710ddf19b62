"""The in-memory engine database (trec-eval without a warehouse, ``rankhouse.evaluate`` on
frames) holds at most ``$RANKHOUSE_MEMORY_LIMIT`` in memory: past it DuckDB spills to a
folder under the system's temporary directory, and the values do not change."""

from __future__ import annotations

import random

import pytest
from conftest import EXAMPLES

from rankhouse.engine import VALUES_TABLE, compute, scratch_database
from rankhouse.errors import RankhouseWarning
from rankhouse.ingest.parse import load_into_engine
from rankhouse.measures import parse_measures

_LIFTED = (
    "Warning: the evaluation needed more memory than $RANKHOUSE_MEMORY_LIMIT='{limit}' allows "
    "DuckDB to hold without spilling: computed again without the limit\n"
)


def _files(tmp_path, queries=300, docs=1000):
    """A run with tied scores and graded qrels: enough rows to pass a 30 MB limit."""
    rng = random.Random(7)
    qrels, run = [], []
    for q in range(queries):
        for d in rng.sample(range(docs * 2), 40):
            qrels.append(f"{q} 0 d{d} {rng.choice([0, 0, 1, 2, 3])}")
        scored = [(rng.randint(0, 300) / 10, d) for d in rng.sample(range(docs * 2), docs)]
        scored.sort(key=lambda pair: -pair[0])  # ranks that agree with the scores
        for rank, (score, d) in enumerate(scored, 1):
            run.append(f"{q} Q0 d{d} {rank} {score} sys")
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n")
    (tmp_path / "run").write_text("\n".join(run) + "\n")
    return tmp_path / "qrels", tmp_path / "run"


def test_trec_eval_under_a_small_limit_spills_prints_the_same_and_leaves_no_file(tmp_path, run_cli):
    qrels, run = _files(tmp_path)
    spill_root = tmp_path / "tmp"
    spill_root.mkdir()
    args = ("trec-eval", "-q", "-m", "all_trec", qrels, run)
    free = run_cli(*args, db=False)
    env = {"RANKHOUSE_MEMORY_LIMIT": "30MB", "TMPDIR": str(spill_root)}
    bounded = run_cli(*args, db=False, env=env)
    assert free.exit_code == bounded.exit_code == 0, bounded.stderr
    assert bounded.stdout == free.stdout
    assert len(free.stdout.splitlines()) > 300 * 90  # every query, every measure
    # where DuckDB could not spill, the evaluation ran again without the limit, and said so
    assert bounded.stderr in ("", _LIFTED.format(limit="30MB"))
    assert list(spill_root.iterdir()) == []  # DuckDB removed what it spilled


def test_the_limit_is_in_force_and_spills_under_the_temporary_directory(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setenv("RANKHOUSE_MEMORY_LIMIT", "30MB")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    duck = scratch_database()
    try:
        assert duck.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "28.6 MiB"
        duck.execute(
            "INSERT INTO run_rows SELECT 1, (i // 1000)::VARCHAR, 'doc' || i::VARCHAR, NULL, "
            "random() FROM range(2000000) AS t(i)"
        )
        assert duck.execute("SELECT count(*) FROM run_rows").fetchone()[0] == 2_000_000
        spilled = duck.execute("SELECT path FROM duckdb_temporary_files()").fetchall()
        assert spilled and all(path.startswith(str(tmp_path)) for (path,) in spilled)
    finally:
        duck.close()
    assert list(tmp_path.iterdir()) == []


def _values(tmp_path, limit: str | None) -> list[tuple]:
    qrels, run = _files(tmp_path, queries=50, docs=200)
    duck = scratch_database()
    try:
        load_into_engine(duck, qrels, "qrels")
        load_into_engine(duck, run, "run")
        if limit:
            duck.execute(f"SET memory_limit = '{limit}'")
        measures = parse_measures(["map", "ndcg_cut.10", "P.5,10", "bpref", "rbp_resid"])
        compute(duck, [1], 1, measures)
        return duck.execute(f"SELECT * FROM {VALUES_TABLE} ORDER BY ALL").fetchall()
    finally:
        duck.close()


def test_a_computation_that_runs_out_of_memory_runs_again_without_the_limit(tmp_path):
    free = _values(tmp_path, None)
    with pytest.warns(RankhouseWarning, match="computed again without the limit"):
        bounded = _values(tmp_path, "1MB")
    assert len(free) == 50 * 6
    assert str(bounded) == str(free)  # the same doubles (NaN included)


def test_a_limit_duckdb_cannot_read_is_one_clear_error(run_cli):
    done = run_cli(
        "trec-eval",
        "-m",
        "map",
        EXAMPLES / "qrels.txt",
        EXAMPLES / "run.bm25.txt",
        db=False,
        env={"RANKHOUSE_MEMORY_LIMIT": "lots"},
    )
    assert done.exit_code == 1
    assert done.stderr.startswith("Error: $RANKHOUSE_MEMORY_LIMIT='lots': ")
    assert "Memory must have a number" in done.stderr
