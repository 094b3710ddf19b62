-- 0016 (PostgreSQL): a run whose rows were pruned is marked in the catalogue, as
-- ../0016_pruned_runs.sql. The primary key stops two writers from marking one run twice.

CREATE TABLE pruned_runs (
    run_id       INTEGER PRIMARY KEY,
    pruned_at    TIMESTAMP NOT NULL,
    num_rows     BIGINT NOT NULL,
    rows_sha256  TEXT NOT NULL,
    archive      TEXT
);
