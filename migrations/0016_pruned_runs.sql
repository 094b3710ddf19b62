-- 0016: a run whose rows were pruned is marked in the catalogue: when, how many rows it had, the
-- hash of those rows and where they were archived.
--
-- `rankhouse runs prune` deletes a run's rows (run_rows) and nothing else: its catalogue row,
-- evaluations, per-query values, gate checks, order drift and input signatures stay. One row
-- here per pruned run; `rankhouse runs restore` puts the rows back and deletes it, `runs rm`
-- deletes it with the run (docs/retention.md).
--
-- rows_sha256 is the sha256 of the rows as they were (rankhouse.catalog.retention.rows_sha256:
-- sorted by query and document, each column's bytes in turn), which the archive is checked
-- against on the way back; the run's content_sha256 (of its source file, shared by the runs of
-- one file's tags) names the archive file.

CREATE TABLE pruned_runs (
    run_id       INTEGER NOT NULL,         -- runs.id
    pruned_at    TIMESTAMP NOT NULL,       -- UTC
    num_rows     BIGINT NOT NULL,          -- the rows deleted (runs.num_rows keeps saying it too)
    rows_sha256  VARCHAR NOT NULL,         -- sha256 of the deleted rows (see above)
    archive      VARCHAR                   -- the Parquet file they were written to, NULL: none
);
