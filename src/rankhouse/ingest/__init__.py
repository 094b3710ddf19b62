"""Ingest qrels and runs from TREC text, CSV/TSV/Parquet/JSON lines files or DataFrames.

Each ingest is one transaction: it lands whole or not at all. The same content ingested again
is recognised by its sha256 and reused instead of stored twice.
"""

from .api import IngestResult, ingest_qrels, ingest_run

__all__ = ["IngestResult", "ingest_qrels", "ingest_run"]
