"""Helpers for the measure tests: store qrels and runs, evaluate, read trec_eval's output."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from rankhouse import Warehouse
from rankhouse.engine import aggregate, compute
from rankhouse.measures import parse_measures

try:  # the real ingest, once it exists
    from rankhouse.ingest import ingest_qrels, ingest_run
except ImportError:  # pragma: no cover - only while the ingest is being written
    ingest_qrels = ingest_run = None


def _atol(text: str) -> int:
    match = re.match(r"\s*([+-]?\d+)", text)
    return int(match[1]) if match else 0


def qrels_frame(lines: list[str]) -> pd.DataFrame:
    rows = [line.split() for line in lines if line.strip() and not line.startswith("#")]
    return pd.DataFrame(
        {
            "query_id": [r[0] for r in rows],
            "doc_id": [r[2] for r in rows],
            "grade": [_atol(r[3]) for r in rows],
        }
    )


def run_frame(lines: list[str]) -> pd.DataFrame:
    rows = [line.split() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return pd.DataFrame(
        {
            "query_id": [r[0] for r in rows],
            "doc_id": [r[2] for r in rows],
            "score": [float(r[4]) for r in rows],
            "system": [r[5] for r in rows],
        }
    )


def store_qrels(wh: Warehouse, source: Path | pd.DataFrame, name: str = "qrels") -> int:
    """Store judgments (a qrels file or a frame query_id, doc_id, grade); the qrels set id."""
    if ingest_qrels is not None:
        return ingest_qrels(wh, source, name=name).id
    frame = (
        source
        if isinstance(source, pd.DataFrame)
        else qrels_frame(Path(source).read_text().splitlines())
    )
    with wh.transaction() as conn:
        qrels_id = conn.exec_driver_sql(
            "INSERT INTO qrels_sets (name, source, content_sha256, parse_options, ingested_at,"
            " num_queries, num_judgments, num_relevant, min_grade, max_grade) VALUES"
            " (?, 'test', '', '{}', now(), ?, ?, ?, ?, ?) RETURNING id",
            (
                name,
                frame.query_id.nunique(),
                len(frame),
                int((frame.grade >= 1).sum()),
                int(frame.grade.min()),
                int(frame.grade.max()),
            ),
        ).scalar_one()
        duck = Warehouse.duckdb_connection(conn)
        duck.register("rh_test_frame", frame.assign(qrels_id=qrels_id))
        duck.execute(
            "INSERT INTO judgments SELECT qrels_id, query_id, doc_id, grade FROM rh_test_frame"
        )
        duck.unregister("rh_test_frame")
    return qrels_id


def store_run(wh: Warehouse, source: Path | pd.DataFrame, name: str = "run") -> int:
    """Store a one-system run (a TREC run file or a frame query_id, doc_id, score); its id."""
    if ingest_run is not None:
        return ingest_run(wh, source, name=name)[0].id
    frame = (
        source
        if isinstance(source, pd.DataFrame)
        else run_frame(Path(source).read_text().splitlines())
    )
    with wh.transaction() as conn:
        run_id = conn.exec_driver_sql(
            "INSERT INTO runs (name, system_tag, source, content_sha256, parse_options,"
            " ingested_at, metadata, order_by, num_queries, num_rows) VALUES"
            " (?, 'tag', 'test', '', '{}', now(), '{}', 'score', ?, ?) RETURNING id",
            (name, frame.query_id.nunique(), len(frame)),
        ).scalar_one()
        duck = Warehouse.duckdb_connection(conn)
        duck.register("rh_test_frame", frame[["query_id", "doc_id", "score"]])
        duck.execute(
            "INSERT INTO run_rows SELECT ?, query_id, doc_id, NULL, score, row_number() OVER"
            " (PARTITION BY query_id ORDER BY score DESC, doc_id DESC) FROM rh_test_frame",
            [run_id],
        )
        duck.unregister("rh_test_frame")
    return run_id


def evaluate(wh: Warehouse, run_id: int, qrels_id: int, names, **options):
    """(per-query frame, aggregate frame) for measure names."""
    measures = parse_measures(names)
    with wh.connect() as conn:
        per_query = compute(conn, [run_id], qrels_id, measures, **options)
    return per_query, aggregate(per_query, measures)


def read_trec_output(path: Path) -> list[tuple[str, str, str]]:
    """(measure, query or 'all', printed value) lines of a trec_eval output file."""
    rows = []
    for line in Path(path).read_text().splitlines():
        name, query, value = line.split("\t")
        rows.append((name.strip(), query, value))
    return rows


def trec_format(value: float) -> str:
    """trec_eval's '%6.4f' of a real value ('  -nan' for NaN)."""
    return "  -nan" if math.isnan(value) else f"{value:6.4f}"
