-- 0018 (PostgreSQL): raters and their individual judgments, and what a qrels set built from
-- them read, as ../0018_raters.sql. UNIQUE constraints stop two writers from storing one rater
-- or one judgment set twice; the roles' default privileges cover the new tables.

CREATE SEQUENCE rater_ids START 1;

CREATE TABLE raters (
    id          INTEGER PRIMARY KEY DEFAULT nextval('rater_ids'),
    name        TEXT COLLATE "C" NOT NULL UNIQUE,
    kind        TEXT,
    metadata    TEXT NOT NULL,
    created_at  TIMESTAMP NOT NULL
);

CREATE SEQUENCE judgment_set_ids START 1;

CREATE TABLE judgment_sets (
    id              INTEGER PRIMARY KEY DEFAULT nextval('judgment_set_ids'),
    rater_id        INTEGER NOT NULL,
    source          TEXT NOT NULL,
    content_sha256  TEXT COLLATE "C" NOT NULL,
    parse_options   TEXT COLLATE "C" NOT NULL,
    ingested_at     TIMESTAMP NOT NULL,
    num_queries     INTEGER NOT NULL,
    num_judgments   BIGINT NOT NULL,
    UNIQUE (content_sha256, parse_options)
);

CREATE TABLE rater_judgments (
    set_id       INTEGER NOT NULL,
    query_id     TEXT COLLATE "C" NOT NULL,
    doc_id       TEXT COLLATE "C" NOT NULL,
    grade        INTEGER NOT NULL,
    judged_time  TEXT,
    rationale    TEXT
);

CREATE INDEX rater_judgments_by_set ON rater_judgments (set_id);

CREATE TABLE qrels_builds (
    qrels_id    INTEGER NOT NULL,
    rule        TEXT NOT NULL,
    set_id      INTEGER NOT NULL,
    rater_name  TEXT NOT NULL
);
