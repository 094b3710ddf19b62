"""The archive of pruned rows: ``runs prune --archive DIR`` writes each run's rows to a Parquet
file named by its content hash, and ``runs restore`` brings them back, checked against the hash
the catalogue recorded, so that re-evaluation gives the same bits (docs/retention.md).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import BACKENDS, EXAMPLES, ICEBERG

from rankhouse import Warehouse
from rankhouse.catalog.retention import rows_sha256
from rankhouse.errors import NotFoundError, RankhouseError

QRELS = EXAMPLES / "qrels.txt"
NIGHTS = [EXAMPLES / "nights" / f"bm25.night{n}.txt" for n in (1, 2)]
MEASURES = ["AP", "nDCG@10", "P@5", "RR"]


def _run_file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("backend_target", [*BACKENDS, ICEBERG], indirect=True)
def test_restore_and_recompute_give_the_same_bits(any_warehouse: Warehouse, tmp_path: Path):
    wh = any_warehouse
    wh.ingest_qrels(QRELS, name="q")
    for n, night in enumerate(NIGHTS, start=1):
        wh.ingest_run(night, name=f"night-{n}")
    before = wh.evaluate("q", ["night-1", "night-2"], MEASURES)
    archive = tmp_path / "archive"

    done = wh.prune(keep_last=1, archive=archive)

    [(name, _, _, rows, _, action, file)] = done.rows
    assert (name, rows, action) == ("night-1", 160, "pruned")
    # named by the content hash the catalogue keeps: the sha256 of the run file's bytes
    assert Path(file).parent == archive.resolve()
    assert Path(file).name.startswith(_run_file_sha256(NIGHTS[0]) + "-")
    assert [p.name for p in archive.iterdir()] == [Path(file).name]  # no temporary left
    stored = pq.read_table(file)
    assert stored.num_rows == 160
    assert pq.ParquetFile(file).metadata.row_group(0).column(0).compression == "ZSTD"
    assert wh.run("night-1")["pruned_at"] is not None

    restored = wh.restore("night-1")

    assert (restored["restored_rows"], restored["archive"]) == (160, file)
    assert wh.run("night-1")["pruned_at"] is None
    again = wh.evaluate("q", ["night-1", "night-2"], MEASURES, recompute=True)
    assert again.per_query.equals(before.per_query)  # the same doubles, bit for bit
    assert again.aggregates["value"].tolist() == before.aggregates["value"].tolist()
    with pytest.raises(NotFoundError, match="run 'night-1' is not pruned"):
        wh.restore("night-1")


def test_an_altered_archive_is_refused(warehouse: Warehouse, tmp_path: Path):
    warehouse.ingest_qrels(QRELS, name="q")
    warehouse.ingest_run(NIGHTS[0], name="night-1")
    warehouse.evaluate("q", "night-1", ["AP"])
    [row] = warehouse.prune(keep_last=0, archive=tmp_path / "a").rows
    file = Path(row[6])
    rows = pq.read_table(file)
    recorded = rows_sha256(rows)
    # one score moved in its last bit: the same rows but for one double
    scores = rows.column("score").to_pylist()
    scores[7] = float.fromhex(scores[7].hex()[:-1] + ("1" if scores[7].hex()[-1] != "1" else "2"))
    altered = rows.set_column(3, "score", pa.array(scores, pa.float64()))
    pq.write_table(altered, file, compression="zstd")

    with pytest.raises(RankhouseError) as refused:
        warehouse.restore("night-1")

    said = str(refused.value)
    assert said.startswith(f"the archive {file} does not hold the rows of run 'night-1'")
    assert f"sha256 {rows_sha256(altered)}" in said and f"sha256 {recorded}" in said
    assert warehouse.run("night-1")["pruned_at"] is not None  # nothing restored

    file.write_bytes(file.read_bytes()[:100])  # cut short
    with pytest.raises(RankhouseError, match=f"cannot read the archive {file}"):
        warehouse.restore("night-1")
    file.unlink()
    with pytest.raises(NotFoundError, match=f"no archive of run 'night-1' at {file}"):
        warehouse.restore("night-1")
    # the archive moved: restore names its folder
    moved = tmp_path / "moved"
    moved.mkdir()
    pq.write_table(rows, moved / file.name, compression="zstd")
    assert warehouse.restore("night-1", archive=moved)["restored_rows"] == 160


def test_rows_hash_ignores_order_and_chunks_not_bits():
    """The rows' hash is a function of the rows as a set: their order and chunks do not
    change it; a null rank and a rank of 0, or -0.0 and 0.0, do."""
    rows = pa.table(
        {
            "query_id": ["q1", "q1", "q2"],
            "doc_id": ["d1", "d2", "d1"],
            "rank": pa.array([1, None, 3], pa.int32()),
            "score": [2.5, 1.0, 0.0],
        }
    )
    shuffled = pa.concat_tables([rows.slice(2), rows.slice(0, 2)])
    assert rows_sha256(shuffled) == rows_sha256(rows)
    zero_rank = rows.set_column(2, "rank", pa.array([1, 0, 3], pa.int32()))
    negative_zero = rows.set_column(3, "score", pa.array([2.5, 1.0, -0.0]))
    joined_ids = rows.set_column(0, "query_id", pa.array(["q1q", "1", "q2"]))  # same bytes
    hashes = {rows_sha256(t) for t in (rows, zero_rank, negative_zero, joined_ids)}
    assert len(hashes) == 4
