"""The file of a pruned run ingested again brings its rows back: checked against the rows' hash
recorded when they were pruned, as ``runs restore`` checks an archive, and put back the same
way (docs/retention.md, "The run's file brings its rows back").

"The same content" is what the catalogue identifies a run by: the sha256 of the file's bytes,
the parse options (format, order, columns, delimiter) and the run tag. Other bytes, or the
same bytes read otherwise, are other content: stored as today, the pruned run left as it is.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from cli_helpers import ERROR_LINE
from conftest import BACKENDS, EXAMPLES, ICEBERG

from rankhouse import Warehouse
from rankhouse.catalog.retention import rows_sha256
from rankhouse.errors import ConflictError, RankhouseError
from rankhouse.results import EvaluationResult

QRELS = EXAMPLES / "qrels.txt"
NIGHTS = [EXAMPLES / "nights" / f"bm25.night{n}.txt" for n in (1, 2)]
MEASURES = ["AP", "nDCG@10", "P@5", "RR"]
#: Rows of an example night (161 lines, one of them a comment): hand-counted with wc -l.
NIGHT_ROWS = 160


def _pruned_night(wh: Warehouse) -> EvaluationResult:
    """Two nights evaluated, the first one's rows pruned (no archive); the values before."""
    wh.ingest_qrels(QRELS, name="q")
    for n, night in enumerate(NIGHTS, start=1):
        wh.ingest_run(night, name=f"night-{n}")
    before = wh.evaluate("q", ["night-1", "night-2"], MEASURES)
    [row] = wh.prune(keep_last=1).pruned
    assert (row[0], row[3]) == ("night-1", NIGHT_ROWS)
    return before


def _table(wh: Warehouse, run_id: int):
    """The rows of run ``run_id`` as the store gives them (Arrow)."""
    with wh.backend.connect() as conn:
        return wh.backend.run_rows_table(conn, run_id)


def _rows(wh: Warehouse, run: str) -> int:
    """The rows the store holds for ``run`` (in an Iceberg table on that option)."""
    return _table(wh, wh.run(run)["id"]).num_rows


@pytest.mark.parametrize("backend_target", [*BACKENDS, ICEBERG], indirect=True)
def test_the_same_file_again_restores_and_recomputes_the_same_bits(any_warehouse: Warehouse):
    wh = any_warehouse
    before = _pruned_night(wh)

    [result] = wh.ingest_run(NIGHTS[0])

    assert (result.name, result.created, result.restored_rows) == ("night-1", False, NIGHT_ROWS)
    assert result.describe() == (
        f"restored the pruned rows of run 'night-1' from {NIGHTS[0]} ({NIGHT_ROWS} rows)"
    )
    assert wh.run("night-1")["pruned_at"] is None
    assert _rows(wh, "night-1") == NIGHT_ROWS
    again = wh.evaluate("q", ["night-1", "night-2"], MEASURES, recompute=True)
    assert again.per_query.equals(before.per_query)  # the values stored before the prune
    assert again.aggregates["value"].tolist() == before.aggregates["value"].tolist()
    # its rows present, the file is stored content as before: nothing new
    [same] = wh.ingest_run(NIGHTS[0], name="night-1")
    assert (same.created, same.restored_rows) == (False, 0)
    assert same.describe() == f"already stored as run 'night-1' (id {same.id}), nothing new"


def test_evaluating_the_file_restores_its_run(warehouse: Warehouse):
    """``eval QRELS FILE`` ingests the file as ``ingest run`` does: the values computed again
    from the rows put back are the ones stored before the prune."""
    before = _pruned_night(warehouse)

    again = warehouse.evaluate("q", NIGHTS[0], ["AP", "P@5"], recompute=True)

    assert warehouse.run("night-1")["pruned_at"] is None
    stored = before.per_query[
        (before.per_query["run"] == "night-1") & before.per_query["measure"].isin(["AP", "P@5"])
    ]
    assert again.per_query.values.tolist() == stored.values.tolist()  # the same doubles


def test_other_bytes_or_other_options_are_other_content(warehouse: Warehouse, tmp_path: Path):
    _pruned_night(warehouse)
    altered = tmp_path / NIGHTS[0].name  # the same file name, one score changed
    text = NIGHTS[0].read_text()
    assert " 3.292 bm25\n" in text
    altered.write_text(text.replace(" 3.292 bm25\n", " 3.293 bm25\n", 1))

    with pytest.raises(
        ConflictError, match="run name 'night-1' is already used by different content"
    ):
        warehouse.ingest_run(altered, name="night-1")
    [version] = warehouse.ingest_run(altered, name="night-1", new_version=True)
    # the same bytes ranked by their ranks instead of their scores
    [by_rank] = warehouse.ingest_run(NIGHTS[0], name="by-rank", order="rank")

    assert (version.name, version.created, version.restored_rows) == ("night-1@2", True, 0)
    assert (by_rank.created, by_rank.restored_rows) == (True, 0)
    assert _rows(warehouse, "night-1@2") == _rows(warehouse, "by-rank") == NIGHT_ROWS
    assert warehouse.run("night-1")["pruned_at"] is not None
    assert _rows(warehouse, "night-1") == 0


@pytest.mark.parametrize("backend_target", BACKENDS, indirect=True)
def test_rows_that_hash_otherwise_are_refused(any_warehouse: Warehouse):
    """The stored rows were changed after the ingest (``sql --write``), then pruned: the
    file's rows are not the rows recorded, so they are refused and nothing changes."""
    wh = any_warehouse
    wh.ingest_qrels(QRELS, name="q")
    [night] = wh.ingest_run(NIGHTS[0], name="night-1")
    from_file = rows_sha256(_table(wh, night.id))
    with wh.backend.transaction() as conn:
        conn.execute(
            "UPDATE run_rows SET score = score + 1 WHERE run_id = :id AND query_id = 'q1' "
            "AND doc_id = 'doc078'",
            {"id": night.id},
        )
    recorded = rows_sha256(_table(wh, night.id))
    assert recorded != from_file
    wh.prune(keep_last=0)
    with wh.connect() as conn:
        runs_before = conn.execute("SELECT id, name FROM runs ORDER BY id").all()

    with pytest.raises(RankhouseError) as refused:
        wh.ingest_run(NIGHTS[0])

    assert str(refused.value) == (
        f"the file {NIGHTS[0]} does not hold the rows of run 'night-1': they hash to sha256 "
        f"{from_file}, and the catalogue recorded sha256 {recorded} when they were pruned; "
        "nothing restored"
    )
    assert wh.run("night-1")["pruned_at"] is not None
    assert _rows(wh, "night-1") == 0
    with wh.connect() as conn:
        assert conn.execute("SELECT id, name FROM runs ORDER BY id").all() == runs_before


@pytest.mark.parametrize("backend_target", ["postgresql"], indirect=True)
def test_two_writers_restore_a_run_once(backend_target: str):
    """Two processes ingesting the file of a pruned run at once on a server: one restores
    its rows, the other finds them restored (stored already, or restored meanwhile); the run
    holds its rows once. The race is not forced: four runs give it four chances."""
    nights = [EXAMPLES / "nights" / f"bm25.night{n}.txt" for n in (1, 2, 3, 4)]
    with Warehouse(backend_target) as wh:
        for n, night in enumerate(nights, start=1):
            wh.ingest_run(night, name=f"night-{n}")
        wh.prune(keep_last=0)
    writers = [Warehouse(backend_target) for _ in range(2)]

    def ingest(writer: Warehouse, night: Path) -> str:
        try:
            return writer.ingest_run(night)[0].describe()
        except RankhouseError as exc:
            return str(exc)

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            said = [list(pool.map(ingest, writers, [night] * 2)) for night in nights]
        for n, both in enumerate(said, start=1):
            assert sum(line.startswith("restored the pruned rows") for line in both) == 1
            assert _rows(writers[0], f"night-{n}") == NIGHT_ROWS
    finally:
        for writer in writers:
            writer.close()


def test_each_pruned_tag_of_a_file_and_a_dataframe(warehouse: Warehouse, tmp_path: Path):
    lines = NIGHTS[0].read_text().splitlines()[1:]
    two_tags = tmp_path / "two.txt"
    two_tags.write_text(
        "".join(f"{line}\n" for line in lines)
        + "".join(f"{line.replace(' bm25', ' other')}\n" for line in lines[:40])
    )
    frame = pd.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 0.5]}
    )
    warehouse.ingest_run(two_tags)
    [from_frame] = warehouse.ingest_run(frame, name="frame")
    warehouse.prune(keep_last=0, system=["bm25", "run"])  # tag 'other' keeps its rows

    bm25, other = warehouse.ingest_run(two_tags)
    [again] = warehouse.ingest_run(frame.copy())

    assert [(r.name, r.created, r.restored_rows) for r in (bm25, other)] == [
        ("bm25", False, NIGHT_ROWS),
        ("other", False, 0),
    ]
    assert other.describe() == f"already stored as run 'other' (id {other.id}), nothing new"
    assert (again.id, again.restored_rows) == (from_frame.id, 3)
    assert again.describe() == "restored the pruned rows of run 'frame' from DataFrame (3 rows)"
    assert [_rows(warehouse, name) for name in ("bm25", "other", "frame")] == [NIGHT_ROWS, 40, 3]
    assert not any(warehouse.run(name)["pruned_at"] for name in ("bm25", "other", "frame"))


def test_cli_ingest_run_restores_then_recompute_works(db_path: Path, run_cli):
    with Warehouse(db_path) as wh:
        before = _pruned_night(wh)
    refused = run_cli("eval", "q", "night-1", "-m", "AP", "--recompute")
    assert refused.exit_code == 1 and "were pruned" in refused.stderr
    assert re.match(ERROR_LINE, refused.stderr)

    done = run_cli("ingest", "run", NIGHTS[0])
    recomputed = run_cli("eval", "q", "night-1", "-m", "AP", "--recompute", "--format", "json")

    assert done.exit_code == 0, done.stderr
    assert done.stderr == (
        f"restored the pruned rows of run 'night-1' from {NIGHTS[0]} ({NIGHT_ROWS} rows)\n"
    )
    assert recomputed.exit_code == 0, recomputed.stderr
    stored_ap = before.aggregates.set_index(["run", "measure"]).loc[("night-1", "AP"), "value"]
    assert json.loads(recomputed.stdout)[0]["AP"] == stored_ap  # the double stored before
