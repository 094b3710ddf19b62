-- 0001: qrels sets and their judgments, runs and their rows.
-- Portable SQL only (DuckDB and PostgreSQL): sequences, VARCHAR for JSON text, no DuckDB types.
-- Uniqueness of names and of content is enforced by rankhouse inside the ingest transaction
-- (DuckDB's UNIQUE indexes reject a delete-then-insert of the same key in one transaction,
-- which `--replace` needs).

CREATE SEQUENCE qrels_set_ids START 1;

CREATE TABLE qrels_sets (
    id              INTEGER PRIMARY KEY DEFAULT nextval('qrels_set_ids'),
    name            VARCHAR NOT NULL,
    source          VARCHAR NOT NULL,      -- file path as given, or 'dataframe'
    content_sha256  VARCHAR NOT NULL,      -- sha256 of the decompressed bytes (or canonical frame)
    parse_options   VARCHAR NOT NULL,      -- JSON: format, column mapping
    ingested_at     TIMESTAMP NOT NULL,    -- UTC
    num_queries     INTEGER NOT NULL,
    num_judgments   BIGINT NOT NULL,
    num_relevant    BIGINT NOT NULL,       -- judgments with grade >= 1
    min_grade       INTEGER,
    max_grade       INTEGER
);

CREATE TABLE judgments (
    qrels_id  INTEGER NOT NULL,            -- qrels_sets.id
    query_id  VARCHAR NOT NULL,            -- always text: '10' and '010' differ
    doc_id    VARCHAR NOT NULL,
    grade     INTEGER NOT NULL             -- raw grade; negative = pooled but unjudged
);

CREATE SEQUENCE run_ids START 1;

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY DEFAULT nextval('run_ids'),
    name            VARCHAR NOT NULL,
    system_tag      VARCHAR NOT NULL,      -- the run tag (TREC field 6) or the system column
    source          VARCHAR NOT NULL,
    content_sha256  VARCHAR NOT NULL,      -- sha256 of the whole source (shared by its tags)
    parse_options   VARCHAR NOT NULL,      -- JSON: format, column mapping, order
    ingested_at     TIMESTAMP NOT NULL,    -- UTC
    metadata        VARCHAR NOT NULL,      -- JSON object: --meta pairs, source, hash, derived scores
    order_by        VARCHAR NOT NULL,      -- 'score' or 'rank' (scores derived from ranks)
    num_queries     INTEGER NOT NULL,
    num_rows        BIGINT NOT NULL
);

CREATE TABLE run_rows (
    run_id    INTEGER NOT NULL,            -- runs.id
    query_id  VARCHAR NOT NULL,
    doc_id    VARCHAR NOT NULL,
    rank      INTEGER,                     -- rank column as given (NULL when absent)
    score     DOUBLE NOT NULL,             -- as given, or -rank for runs ingested with order 'rank'
    position  INTEGER NOT NULL             -- evaluation rank: score desc, then doc_id desc (byte order)
);
