"""TREC text as ``rankhouse ingest`` reads it: qrels (``qid iter docid rel``) and runs
(``qid Q0 docid rank score tag``), by one set of rules (docs/ingest.md, "Reading rules").

The readers, by role, fastest first; each takes the files the one before gives up:

* :mod:`.direct`: a run file of regular lines with one tag, straight into ``run_rows`` in one
  parallel pass, no stage (:mod:`rankhouse.ingest.direct_run` stores it);
* :mod:`.sql_stage`: DuckDB's CSV reader into the stage table: fixed columns when every line
  is fields joined by one separator, else each line split in SQL;
* :mod:`.exact`: the reference, line by line in Python; it reads the files DuckDB's reader
  would take otherwise than the rules (a byte order mark, a carriage return, a ``\\x01``
  byte), and its rules define what every other reader must read;
* :mod:`.locate`: after the bulk checks found a bad row, rescans the file with the reference
  rules to name the first bad line and field.

A fast reader that gives up says why with a :class:`.regular.Fallback`, never by an error's
text, and the caller picks the next reader from it: after the direct reader stopped at a line,
the stage's fixed columns (a run of several tags reads well there); after a file showed
whitespace other than its separator, the SQL split. :mod:`.regular` holds what the fast readers
share: the first line's separator, the fixed columns, the odd bytes. Duplicates and ties are
counted by :mod:`rankhouse.ingest.repeats`. tests/test_ingest_paths_agree.py holds every
reader to the same rows or the same error, word for word.

``trec-eval`` reads with trec_eval's own rules instead (:mod:`rankhouse.trec_eval.qrels_reader`,
:mod:`rankhouse.trec_eval.run_reader`), and takes the direct reader for regular runs.
"""
