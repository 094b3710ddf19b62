"""The local cache of a server warehouse's run rows and judgments
(rankhouse.backends.postgresql.workspace)."""

from __future__ import annotations

import os

import duckdb
import psycopg
import pytest
from conftest import EXAMPLES

from rankhouse import Warehouse
from rankhouse.backends.postgresql.workspace import RowCache

MEASURES = ["AP", "nDCG@10", "P@5"]


@pytest.fixture
def cache_folder(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("RANKHOUSE_CACHE", str(folder))
    return folder


def _means(url: str, **options) -> dict:
    with Warehouse(url) as wh:
        result = wh.evaluate("qrels", ["bm25"], MEASURES, **options)
        return result.summary.iloc[0][MEASURES].to_dict()


def _server_rows_gone(url: str) -> None:
    """Delete the run's rows on the server behind rankhouse's back: only a copy can give
    the evaluation its rows now."""
    with psycopg.connect(url) as conn:
        conn.execute("DELETE FROM run_rows")


def test_ingest_keeps_the_rows_and_evaluation_reads_them(postgres_url, cache_folder, tmp_path):
    with Warehouse(postgres_url) as wh:
        wh.ingest_qrels(EXAMPLES / "qrels.txt")
        wh.ingest_run(EXAMPLES / "run.bm25.txt")
    assert len(list(cache_folder.glob("*.parquet"))) == 2  # the run's rows, the judgments
    with Warehouse(tmp_path / "w.duckdb") as wh:
        wh.ingest_qrels(EXAMPLES / "qrels.txt")
        wh.ingest_run(EXAMPLES / "run.bm25.txt")
    on_file = _means(str(tmp_path / "w.duckdb"))
    _server_rows_gone(postgres_url)
    assert _means(postgres_url) == on_file  # from the cache, the same numbers


def test_an_evaluation_that_fetched_keeps_the_rows(postgres_url, cache_folder, monkeypatch):
    monkeypatch.setenv("RANKHOUSE_CACHE", "off")
    with Warehouse(postgres_url) as wh:
        wh.ingest_qrels(EXAMPLES / "qrels.txt")
        wh.ingest_run(EXAMPLES / "run.bm25.txt")
    fetched = _means(postgres_url)
    assert not cache_folder.exists()
    monkeypatch.setenv("RANKHOUSE_CACHE", str(cache_folder))
    assert _means(postgres_url, recompute=True) == fetched  # fetched, then kept
    assert len(list(cache_folder.glob("*.parquet"))) == 2
    _server_rows_gone(postgres_url)
    assert _means(postgres_url, recompute=True) == fetched


def test_a_damaged_file_is_fetched_again(postgres_url, cache_folder):
    with Warehouse(postgres_url) as wh:
        wh.ingest_qrels(EXAMPLES / "qrels.txt")
        wh.ingest_run(EXAMPLES / "run.bm25.txt")
    for path in cache_folder.glob("*.parquet"):
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    means = _means(postgres_url)
    assert means["AP"] == pytest.approx(0.1326, abs=5e-5)  # the README's example value
    _server_rows_gone(postgres_url)
    assert _means(postgres_url, recompute=True) == means  # the files were written again


def test_a_removed_and_ingested_again_run_is_a_new_entry(postgres_url, cache_folder):
    with Warehouse(postgres_url) as wh:
        wh.ingest_run(EXAMPLES / "run.bm25.txt")
        first = set(cache_folder.glob("*.parquet"))
        wh.remove_run("bm25")
        wh.ingest_run(EXAMPLES / "run.bm25.txt")
    assert len(set(cache_folder.glob("*.parquet")) - first) == 1


def test_the_folder_keeps_to_its_size(tmp_path):
    cache = RowCache(tmp_path, max_bytes=10_000)
    duck = duckdb.connect()
    for n in range(6):
        cache.store(duck, f"SELECT range AS x FROM range({n * 1000}, {n * 1000 + 2000})", (n,))
        os.utime(cache.path((n,)), (n, n))  # stored one after the other
    kept = sorted(cache.path((n,)).exists() for n in range(6))
    assert kept.count(True) < 6 and sum(p.stat().st_size for p in tmp_path.iterdir()) <= 10_000
    assert cache.path((5,)).exists() and not cache.path((0,)).exists()  # the newest stays


def test_off_writes_nothing(postgres_url, tmp_path, monkeypatch):
    monkeypatch.setenv("RANKHOUSE_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with Warehouse(postgres_url) as wh:
        wh.ingest_run(EXAMPLES / "run.bm25.txt")
    assert not (tmp_path / "xdg").exists()
    assert RowCache.from_environment() is None
