"""The DuckDB settings every warehouse file is opened with (rankhouse.defaults.DUCKDB_CONFIG)."""

from __future__ import annotations

from pathlib import Path

from rankhouse import Warehouse


def test_a_large_commit_is_written_into_the_file_not_the_write_ahead_log(tmp_path: Path):
    run = tmp_path / "large.run"
    lines = (f"q{i % 50} Q0 doc{i:07d} {i // 50 + 1} {1.0 / (i + 1)!r} sys" for i in range(60_000))
    run.write_text("\n".join(lines) + "\n")
    path = tmp_path / "w.duckdb"
    wal = Path(f"{path}.wal")
    with Warehouse(str(path)) as wh:
        stored = wh.ingest_run(str(run), progress=False)
        held = wal.stat().st_size if wal.exists() else 0
        with wh.connect() as conn:
            rows = conn.execute("SELECT count(*) FROM run_rows").scalar_one()
    assert rows == 60_000
    assert [r.num_rows for r in stored] == [60_000]
    # DuckDB's default (16 MB) would keep the 60,000 rows in the log until the file closes
    assert held < 1_000_000
