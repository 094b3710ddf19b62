"""Ingest qrels and runs from TREC text, CSV/TSV/Parquet/JSON lines files or DataFrames.

Each ingest is one transaction: it lands whole or not at all. The same content ingested again
is recognised by its sha256 and reused instead of stored twice.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .api import IngestResult, ingest_qrels, ingest_run

__all__ = ["IngestResult", "ingest_qrels", "ingest_run"]


def __getattr__(name: str):
    # imported on first use: trec-eval's readers take modules of this package without the
    # DataFrame and Parquet machinery (pandas, pyarrow) that api.py brings
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'rankhouse.ingest' has no attribute {name!r}")
