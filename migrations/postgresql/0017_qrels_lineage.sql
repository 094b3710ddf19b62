-- 0017 (PostgreSQL): a qrels set stored as a new version of a named set records the set it
-- follows, as ../0017_qrels_lineage.sql. The primary key stops two writers from recording one
-- version twice.

CREATE TABLE qrels_lineage (
    qrels_id      INTEGER PRIMARY KEY,
    follows_id    INTEGER NOT NULL,
    follows_name  TEXT NOT NULL,
    base_name     TEXT NOT NULL
);
