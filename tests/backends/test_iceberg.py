"""Run rows in Apache Iceberg beside a PostgreSQL warehouse (``?iceberg=LOCATION``).

The catalogue stays in the server's tables; a run's rows are one Iceberg commit, published
before its catalogue row; evaluation reads one run's scan; ``runs rm`` deletes the run's rows
from the table; another engine reads the same rows; concurrent writers all land; a writer
killed mid-ingest leaves no run visible. The golden values against trec_eval's outputs run on
this store in tests/measures/test_measures_golden.py. These tests need a server
(``scripts/with-postgres``) and pyiceberg (``rankhouse[iceberg]``).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from conftest import EXAMPLES, drop_postgres_schema, new_postgres_schema, require_pyiceberg

from rankhouse import Warehouse
from rankhouse.backends import store_of
from rankhouse.catalog import run_query_counts
from rankhouse.errors import ConflictError, RankhouseError, RankhouseWarning

MEASURES = ["AP", "nDCG@10", "P@5", "RR"]
WRITERS = 4


@pytest.fixture
def lake(postgres_server: str, tmp_path: Path):
    """(the URL that creates an Iceberg warehouse, the URL without the parameter, the
    folder of its data files), in a schema of its own."""
    require_pyiceberg()
    schema, url = new_postgres_schema(postgres_server)
    folder = tmp_path / "lake"
    yield f"{url}&iceberg={folder}", url, folder
    drop_postgres_schema(postgres_server, schema)


def _scan(url: str, run_id: int) -> pd.DataFrame:
    """The run's rows as pyiceberg reads them itself (no rankhouse code in between)."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import EqualTo

    catalog = SqlCatalog("rankhouse", uri=url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        table = catalog.load_table(("rankhouse", "run_rows"))
        frame = table.scan(row_filter=EqualTo("run_id", run_id)).to_pandas()
    finally:
        catalog.engine.dispose()
    return frame.sort_values(["query_id", "doc_id"], ignore_index=True)


def _tuples(frame: pd.DataFrame) -> list[tuple]:
    """The rows as (query, document, rank, score) of Python values (scores bit for bit)."""
    columns = ["query_id", "doc_id", "rank", "score"]
    return [(q, d, int(r), float(s)) for q, d, r, s in frame[columns].itertuples(index=False)]


def _means(summary: pd.DataFrame) -> dict[str, float]:
    """{measure: mean} of a one-run summary."""
    return summary[MEASURES].iloc[0].to_dict()


def _file_rows(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, sep=r"\s+", header=None, dtype={0: str, 2: str})
    frame = frame.rename(columns={0: "query_id", 2: "doc_id", 3: "rank", 4: "score"})
    return frame[["query_id", "doc_id", "rank", "score"]].sort_values(
        ["query_id", "doc_id"], ignore_index=True
    )


def test_rows_in_iceberg_catalogue_in_postgresql(lake, tmp_path):
    create, url, folder = lake
    run_file = EXAMPLES / "run.bm25.txt"
    with Warehouse(create) as wh:
        qrels = wh.ingest_qrels(EXAMPLES / "qrels.txt", name="qrels")
        [run] = wh.ingest_run(run_file, name="bm25")
    with Warehouse(url) as wh, wh.connect() as conn:  # the choice is read from the warehouse
        assert store_of(wh).iceberg is not None
        assert conn.execute("SELECT count(*) FROM run_rows").scalar() == 0
        assert conn.execute("SELECT num_rows FROM runs").scalar() == 160
        ours = wh.evaluate(qrels.id, run.id, MEASURES).summary
        counts = run_query_counts(wh, "bm25")
    assert counts["num_rows"].tolist() == [20] * 8
    with Warehouse(tmp_path / "twin.duckdb") as twin:  # the same numbers as a DuckDB file
        theirs = twin.evaluate(EXAMPLES / "qrels.txt", run_file, MEASURES).summary
    assert _means(ours) == _means(theirs)

    # a second engine (pyiceberg's own scan) reads the rows the file holds, bit for bit
    scanned = _scan(url, run.id)
    assert len(list(folder.rglob("*.parquet"))) == 1
    expected = _file_rows(run_file)
    assert _tuples(scanned) == _tuples(expected)

    tabs = tmp_path / "bm25.tabs.txt"  # the same rows in other bytes: found stored
    tabs.write_text(run_file.read_text().replace(" ", "\t"))
    changed = tmp_path / "bm25.changed.txt"
    changed.write_text(run_file.read_text().replace(" 3.124 ", " 3.125 ", 1))
    with Warehouse(url) as wh, pytest.warns(RankhouseWarning, match="holds the same rows"):
        [same] = wh.ingest_run(tabs, name="bm25")
    assert (same.id, same.created) == (run.id, False)
    with Warehouse(url) as wh, pytest.raises(ConflictError, match="1 row differs, in 1 query"):
        wh.ingest_run(changed, name="bm25")
    with Warehouse(url) as wh:  # the replaced run's rows go with it
        [replaced] = wh.ingest_run(_rows(1), name="bm25", replace=True)
    assert _scan(url, run.id).empty
    assert _tuples(_scan(url, replaced.id)) == _tuples(_rows(1).sort_values(["query_id", "doc_id"]))
    with Warehouse(url) as wh:
        wh.remove_run("bm25")
    assert _scan(url, replaced.id).empty
    assert len(list(folder.rglob("*.parquet"))) == 2  # until old snapshots expire
    with Warehouse(url) as wh:
        store_of(wh).iceberg.expire(timedelta(0))
    assert list(folder.rglob("*.parquet")) == []


def test_the_choice_is_made_when_the_warehouse_is_created(lake, tmp_path):
    create, url, _ = lake
    with Warehouse(url) as wh:  # created without the parameter: rows in PostgreSQL
        wh.ingest_run(EXAMPLES / "run.bm25.txt", name="bm25")
    with pytest.raises(RankhouseError, match="already keeps run rows in PostgreSQL"):
        Warehouse(create)
    with pytest.raises(RankhouseError, match="names no location"):
        Warehouse(url + "&iceberg=")


def test_another_location_than_the_tables_is_refused(lake, tmp_path):
    create, url, _ = lake
    Warehouse(create).close()
    with pytest.raises(RankhouseError, match="keeps its run rows in Iceberg at file://"):
        Warehouse(f"{url}&iceberg={tmp_path / 'elsewhere'}")


def _rows(seed: int) -> pd.DataFrame:
    return pd.DataFrame(
        [
            (f"q{q}", f"doc{(d * 7 + seed * 13 + q) % 90:03d}", d + 1, 100 - d + seed / 8)
            for q in range(1, 9)
            for d in range(20)
        ],
        columns=["query_id", "doc_id", "rank", "score"],
    )


def _processes():
    """A process context whose children start from a process that imported the stores."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["rankhouse", "pandas", "psycopg", "pyiceberg.catalog.sql"])
    return context


def _writer(url: str, seed: int, barrier, results) -> None:
    try:
        with Warehouse(url) as wh:
            barrier.wait(60)
            [run] = wh.ingest_run(_rows(seed), name=f"w{seed}")
            results.put((seed, run.id, _means(wh.evaluate("qrels", run.id, MEASURES).summary)))
    except BaseException as exc:
        results.put((seed, None, repr(exc)))


@pytest.mark.timeout(300)
def test_concurrent_writers_each_land_in_one_commit(lake, tmp_path):
    create, url, _ = lake
    with Warehouse(create) as wh:
        wh.ingest_qrels(EXAMPLES / "qrels.txt", name="qrels")
    context = _processes()
    barrier, results = context.Barrier(WRITERS), context.Queue()
    writers = [
        context.Process(target=_writer, args=(url, seed, barrier, results))
        for seed in range(WRITERS)
    ]
    for writer in writers:
        writer.start()
    finished = sorted(results.get(timeout=240) for _ in writers)
    for writer in writers:
        writer.join(60)
    assert [(seed, error) for seed, run_id, error in finished if run_id is None] == []
    with Warehouse(tmp_path / "twin.duckdb") as twin:
        for seed, run_id, means in finished:
            summary = twin.evaluate(EXAMPLES / "qrels.txt", _rows(seed), MEASURES).summary
            assert means == _means(summary), seed
            expected = _rows(seed).sort_values(["query_id", "doc_id"], ignore_index=True)
            assert _tuples(_scan(url, run_id)) == _tuples(expected)
    with Warehouse(url) as wh:
        table = store_of(wh).iceberg.table
        appends = [s for s in table.snapshots() if s.summary.operation.value == "append"]
        assert len(appends) == WRITERS  # one commit per run


def _killed_writer(url: str, when: str, ready) -> None:
    """Ingest a run, stopping for the kill before or after its Iceberg commit."""
    from rankhouse.backends.postgresql import iceberg

    append = iceberg.IcebergRows.append

    def stopping(self, rows):
        if when == "after":
            append(self, rows)
        ready.set()
        signal.pause()

    iceberg.IcebergRows.append = stopping
    with Warehouse(url) as wh:
        wh.ingest_run(_rows(0), name="killed")


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_writer_killed_mid_ingest_leaves_no_run(lake, when):
    create, url, folder = lake
    Warehouse(create).close()
    context = _processes()
    ready = context.Event()
    writer = context.Process(target=_killed_writer, args=(url, when, ready))
    writer.start()
    assert ready.wait(120)
    os.kill(writer.pid, signal.SIGKILL)
    writer.join(30)
    with Warehouse(url) as wh:
        assert wh.runs().empty  # no catalogue row: no run to see
        rows = store_of(wh).iceberg
        stored = rows.run_ids()
        assert len(stored) == (when == "after")  # rows that no catalogue row names
        assert rows.orphans([], age=timedelta(hours=1)) == []  # too young: maybe in flight
        orphans = rows.orphans([], age=timedelta(0))
        assert orphans == sorted(stored)
        rows.delete(orphans)
        assert rows.run_ids() == {}
        [run] = wh.ingest_run(_rows(0), name="killed")  # the next writer is not hindered
        assert run.name == "killed" and len(_scan(url, run.id)) == len(_rows(0))


def test_a_missing_data_file_is_one_clear_error(lake, monkeypatch):
    create, url, folder = lake
    monkeypatch.setenv("RANKHOUSE_CACHE", "off")  # the rows must come from the table
    with Warehouse(create) as wh:
        qrels = wh.ingest_qrels(EXAMPLES / "qrels.txt", name="qrels")
        [run] = wh.ingest_run(EXAMPLES / "run.bm25.txt", name="bm25")
    [data] = folder.rglob("*.parquet")
    data.unlink()
    with Warehouse(url) as wh, pytest.raises(RankhouseError) as raised:
        wh.evaluate(qrels.id, run.id, ["AP"])
    assert str(raised.value).startswith(f"cannot read the rows of run {run.id} from the Iceberg")
    assert "Failed to open local file" in str(raised.value)
    assert "Traceback" not in str(raised.value)
