"""Ingest qrels and runs from TREC text, CSV/TSV/Parquet/JSON lines files or DataFrames.

Each ingest is one transaction: it lands whole or not at all. The same content ingested again
is recognised by its sha256 and reused instead of stored twice (:mod:`.reuse`). The verbs are
:func:`.storing.ingest_run` and :func:`.storing.ingest_qrels` (what they return:
:class:`.sources.IngestResult`). TREC text has readers of its own (:mod:`.trec`, with the
reference rules in :mod:`.trec_exact`; ``trec-eval`` shares them); every other source is read
into the same stage table (:mod:`.text_tables`, :mod:`.tabular`) and checked by the same SQL
(:mod:`.parse`, :mod:`.staging`).

This package imports none of its modules: ``trec-eval`` takes the readers it needs without the
ingest verbs and the stores they write to.
"""
