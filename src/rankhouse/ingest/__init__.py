"""Ingest qrels and runs from TREC text, CSV/TSV/Parquet/JSON lines files or DataFrames.

Each ingest is one transaction: it lands whole or not at all. The same content ingested again
is recognised by its sha256 and reused instead of stored twice. The verbs are
:func:`.qrels.ingest_qrels` and :func:`.runs.ingest_run` (what they return:
:class:`.result.IngestResult`). TREC text has readers of its own (:mod:`rankhouse.ingest.trec`,
which ``trec-eval`` shares); every other source is read into the same stage table and checked
by the same SQL (:mod:`rankhouse.ingest.parse`).

This package imports none of its modules: ``trec-eval`` takes the readers it needs without the
ingest verbs and the stores they write to.
"""
