"""Helpers for the measure tests: store qrels and runs, evaluate, read trec_eval's output."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from rankhouse import Warehouse
from rankhouse.engine import aggregate, compute
from rankhouse.ingest import ingest_qrels, ingest_run
from rankhouse.measures import parse_measures


def store_qrels(wh: Warehouse, source: Path | pd.DataFrame, name: str = "qrels") -> int:
    """Store judgments (a qrels file or a frame query_id, doc_id, grade); the qrels set id."""
    return ingest_qrels(wh, source, name=name).id


def store_run(wh: Warehouse, source: Path | pd.DataFrame, name: str = "run") -> int:
    """Store a one-system run (a TREC run file or a frame query_id, doc_id, score); its id."""
    return ingest_run(wh, source, name=name)[0].id


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
