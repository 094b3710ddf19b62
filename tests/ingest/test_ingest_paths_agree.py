"""The TREC reading paths agree: the same generated files, read by the direct path (regular run
files straight into run_rows), the SQL stage and the exact line-by-line reader, give the same
stored rows or the same error message, word for word."""

from __future__ import annotations

import os

import pytest
from trec_cases import generate

from rankhouse import Warehouse
from rankhouse.errors import RankhouseError
from rankhouse.ingest import storing, trec

CASES = max(150, int(os.environ.get("RANKHOUSE_GENERATED_CASES", "1000")) // 7)


def _force(monkeypatch, path: str) -> None:
    if path in ("stage", "exact"):
        monkeypatch.setattr(storing, "eligible", lambda src, mapping: None)
        monkeypatch.setattr(trec, "first_line_separator", lambda source: None)
    if path == "exact":
        monkeypatch.setattr(trec, "starts_with_bom", lambda source: True)


def _outcome(wh, path, kind: str, order: str):
    name = path.stem
    try:
        if kind == "qrels":
            result = wh.ingest_qrels(path, name=name)
            table, key = "judgments", "qrels_id"
            ids = [result.id]
            columns = "query_id, doc_id, grade"
        else:
            results = wh.ingest_run(path, name=name, order=order)
            table, key = "run_rows", "run_id"
            ids = [r.id for r in results]
            columns = "query_id, doc_id, rank, score"
    except RankhouseError as exc:
        return "error", str(exc)
    with wh.connect() as conn:
        duck = wh.duckdb_connection(conn)
        rows = duck.execute(
            f"SELECT {columns} FROM {table} WHERE {key} IN (SELECT unnest(?)) ORDER BY ALL", [ids]
        ).fetchall()
    return "stored", rows


@pytest.mark.slow
@pytest.mark.parametrize("path", ["stage", "exact"])
def test_every_path_reads_generated_files_alike(tmp_path, monkeypatch, path):
    files = []
    for seed in range(CASES):
        kind, order, data = generate(10_000 + seed)
        file = tmp_path / f"case{seed}.txt"
        file.write_bytes(data)
        files.append((file, kind, order))
    # one warehouse per path: every file differs, so none is found already stored
    with Warehouse(":memory:") as wh:
        expected = [_outcome(wh, file, kind, order) for file, kind, order in files]
    _force(monkeypatch, path)
    differences = []
    with Warehouse(":memory:") as wh:
        for (file, kind, order), want in zip(files, expected, strict=True):
            got = _outcome(wh, file, kind, order)
            if got != want:
                differences.append((file.name, want, got))
    assert not differences, differences[:5]
