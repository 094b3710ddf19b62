-- 0002 (PostgreSQL): stored evaluations, as ../0002_evaluations.sql.

CREATE SEQUENCE evaluation_ids START 1;

CREATE TABLE evaluations (
    id                 INTEGER PRIMARY KEY DEFAULT nextval('evaluation_ids'),
    run_id             INTEGER NOT NULL,
    qrels_id           INTEGER NOT NULL,
    qrels_sha256       TEXT COLLATE "C" NOT NULL,
    measure            TEXT COLLATE "C" NOT NULL,
    parameters         TEXT NOT NULL,
    relevance_level    INTEGER NOT NULL,
    missing_queries    TEXT NOT NULL,
    options            TEXT COLLATE "C" NOT NULL,
    aggregate          TEXT NOT NULL,
    value              DOUBLE PRECISION,
    num_q              INTEGER NOT NULL,
    rankhouse_version  TEXT NOT NULL,
    created_at         TIMESTAMP NOT NULL
);

CREATE INDEX evaluations_by_run ON evaluations (run_id, qrels_id, measure);

CREATE TABLE evaluation_values (
    evaluation_id  INTEGER NOT NULL,
    query_id       TEXT COLLATE "C" NOT NULL,
    value          DOUBLE PRECISION
);

CREATE INDEX evaluation_values_by_evaluation ON evaluation_values (evaluation_id);
