"""Ingest qrels and runs from TREC text, CSV/TSV/Parquet/JSON lines files or DataFrames.

Each ingest is one transaction: it lands whole or not at all. The same content ingested again
is recognised by its sha256 and reused instead of stored twice. TREC text has readers of its
own (:mod:`rankhouse.ingest.trec`); every other source is read into the same stage table and
checked by the same SQL (:mod:`rankhouse.ingest.parse`).
"""

from .qrels import ingest_qrels
from .result import IngestResult
from .runs import ingest_run

__all__ = ["IngestResult", "ingest_qrels", "ingest_run"]
