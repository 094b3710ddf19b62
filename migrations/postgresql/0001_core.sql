-- 0001 (PostgreSQL): qrels sets and their judgments, runs and their rows.
-- The same tables as ../0001_core.sql. Differences, all about sharing one server:
-- ids and names compare byte-wise (COLLATE "C": trec_eval breaks ties by strcmp of doc ids),
-- run metadata is JSONB, and UNIQUE constraints stop two writers from storing the same name
-- or the same content twice (PostgreSQL, unlike DuckDB, accepts a delete-then-insert of one
-- key inside a transaction, which `--replace` needs).

CREATE SEQUENCE qrels_set_ids START 1;

CREATE TABLE qrels_sets (
    id              INTEGER PRIMARY KEY DEFAULT nextval('qrels_set_ids'),
    name            TEXT COLLATE "C" NOT NULL UNIQUE,
    source          TEXT NOT NULL,
    content_sha256  TEXT COLLATE "C" NOT NULL,
    parse_options   TEXT COLLATE "C" NOT NULL,
    ingested_at     TIMESTAMP NOT NULL,
    num_queries     INTEGER NOT NULL,
    num_judgments   BIGINT NOT NULL,
    num_relevant    BIGINT NOT NULL,
    min_grade       INTEGER,
    max_grade       INTEGER,
    UNIQUE (content_sha256, parse_options)
);

CREATE TABLE judgments (
    qrels_id  INTEGER NOT NULL,
    query_id  TEXT COLLATE "C" NOT NULL,
    doc_id    TEXT COLLATE "C" NOT NULL,
    grade     INTEGER NOT NULL
);

CREATE INDEX judgments_by_qrels ON judgments (qrels_id);

CREATE SEQUENCE run_ids START 1;

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY DEFAULT nextval('run_ids'),
    name            TEXT COLLATE "C" NOT NULL UNIQUE,
    system_tag      TEXT COLLATE "C" NOT NULL,
    source          TEXT NOT NULL,
    content_sha256  TEXT COLLATE "C" NOT NULL,
    parse_options   TEXT COLLATE "C" NOT NULL,
    ingested_at     TIMESTAMP NOT NULL,
    metadata        JSONB NOT NULL,
    order_by        TEXT NOT NULL,
    num_queries     INTEGER NOT NULL,
    num_rows        BIGINT NOT NULL,
    UNIQUE (content_sha256, parse_options, system_tag)
);

CREATE TABLE run_rows (
    run_id    INTEGER NOT NULL,
    query_id  TEXT COLLATE "C" NOT NULL,
    doc_id    TEXT COLLATE "C" NOT NULL,
    rank      INTEGER,
    score     DOUBLE PRECISION NOT NULL,
    position  INTEGER NOT NULL
);

CREATE INDEX run_rows_by_run ON run_rows (run_id);
