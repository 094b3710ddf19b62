-- 0002: stored evaluations. One row per (run, qrels set, measure, options) with the aggregate,
-- and one row per query with its value.

CREATE SEQUENCE evaluation_ids START 1;

CREATE TABLE evaluations (
    id                 INTEGER PRIMARY KEY DEFAULT nextval('evaluation_ids'),
    run_id             INTEGER NOT NULL,   -- runs.id
    qrels_id           INTEGER NOT NULL,   -- qrels_sets.id
    qrels_sha256       VARCHAR NOT NULL,   -- qrels_sets.content_sha256 at evaluation time
    measure            VARCHAR NOT NULL,   -- canonical name, e.g. 'nDCG@10', 'AP(rel=2)'
    parameters         VARCHAR NOT NULL,   -- JSON: the measure's parameters, defaults filled in
    relevance_level    INTEGER NOT NULL,   -- effective level for this measure
    missing_queries    VARCHAR NOT NULL,   -- 'zero' or 'skip'
    options            VARCHAR NOT NULL,   -- JSON: any other option that changes values (e.g. -M, -J)
    aggregate          VARCHAR NOT NULL,   -- 'mean', 'sum' or 'gmean'
    value              DOUBLE,             -- the aggregate over num_q queries
    num_q              INTEGER NOT NULL,
    rankhouse_version  VARCHAR NOT NULL,
    created_at         TIMESTAMP NOT NULL  -- UTC
);

CREATE TABLE evaluation_values (
    evaluation_id  INTEGER NOT NULL,       -- evaluations.id
    query_id       VARCHAR NOT NULL,
    value          DOUBLE                  -- NaN where trec_eval prints -nan
);
