-- 0003 (PostgreSQL): the regression gate's verdicts and the analysts' views, as
-- ../0003_history.sql (the views are the same SQL).

CREATE SEQUENCE regress_check_ids START 1;

-- One row per `rankhouse regress` invocation.
CREATE TABLE regress_checks (
    id                INTEGER PRIMARY KEY DEFAULT nextval('regress_check_ids'),
    run_id            INTEGER NOT NULL,    -- runs.id of the run under test
    baseline_run_id   INTEGER NOT NULL,    -- runs.id of the baseline it was compared with
    baseline_spec     TEXT NOT NULL,    -- the baseline as given: a run name or 'previous'
    qrels_id          INTEGER NOT NULL,    -- qrels_sets.id
    test              TEXT NOT NULL,    -- 't', 'wilcoxon', 'randomization' or 'bootstrap'
    correction        TEXT NOT NULL,    -- 'none', 'bonferroni', 'holm' or 'bh'
    alpha             DOUBLE PRECISION NOT NULL,
    max_drop          DOUBLE PRECISION NOT NULL,
    relative          BOOLEAN NOT NULL,    -- max_drop is a fraction of the baseline's mean
    options           TEXT NOT NULL,    -- JSON: permutations, seed, relevance level, ...
    passed            BOOLEAN NOT NULL,    -- no measure regressed
    created_at        TIMESTAMP NOT NULL   -- UTC
);

-- One row per measure of a regress check.
CREATE TABLE regress_verdicts (
    check_id                INTEGER NOT NULL,   -- regress_checks.id
    measure                 TEXT NOT NULL,   -- canonical name
    baseline_value          DOUBLE PRECISION,             -- the baseline's stored aggregate (mean)
    run_value               DOUBLE PRECISION,             -- the run's stored aggregate (mean)
    delta                   DOUBLE PRECISION,             -- run_value - baseline_value
    num_q                   INTEGER NOT NULL,   -- queries paired by query id
    improved                INTEGER NOT NULL,   -- queries where the run is better
    degraded                INTEGER NOT NULL,   -- queries where the run is worse
    p_value                 DOUBLE PRECISION,
    p_corrected             DOUBLE PRECISION,
    status                  TEXT NOT NULL,   -- regressed, within_tolerance, not_significant, improved, unchanged
    regressed               BOOLEAN NOT NULL,
    run_evaluation_id       INTEGER,            -- evaluations.id of the run's values
    baseline_evaluation_id  INTEGER             -- evaluations.id of the baseline's values
);

-- Runs with their catalogue fields.
CREATE VIEW run_catalog AS
SELECT r.id AS run_id, r.name AS run_name, r.system_tag, r.ingested_at, r.source,
       r.content_sha256, r.metadata, r.order_by, r.num_queries, r.num_rows
FROM runs r;

-- Qrels sets with their catalogue fields.
CREATE VIEW qrels_catalog AS
SELECT q.id AS qrels_id, q.name AS qrels_name, q.ingested_at, q.source, q.content_sha256,
       q.num_queries, q.num_judgments, q.num_relevant, q.min_grade, q.max_grade
FROM qrels_sets q;

-- The newest stored evaluation for each run, qrels set, measure and option set.
CREATE VIEW latest_evaluations AS
SELECT e.id AS evaluation_id, e.run_id, r.name AS run_name, r.system_tag,
       r.ingested_at AS run_ingested_at, r.metadata AS run_metadata,
       e.qrels_id, q.name AS qrels_name, e.measure, e.value, e.num_q, e.aggregate,
       e.relevance_level, e.missing_queries, e.options, e.created_at
FROM (
    SELECT ev.*,
           row_number() OVER (
               PARTITION BY ev.run_id, ev.qrels_id, ev.measure, ev.relevance_level,
                            ev.missing_queries, ev.options
               ORDER BY ev.created_at DESC, ev.id DESC
           ) AS recency
    FROM evaluations ev
) e
JOIN runs r ON r.id = e.run_id
JOIN qrels_sets q ON q.id = e.qrels_id
WHERE e.recency = 1;

-- Per-query values of the latest evaluations, with the run's name, system, metadata and time.
CREATE VIEW query_values AS
SELECT le.evaluation_id, le.run_id, le.run_name, le.system_tag, le.run_ingested_at,
       le.run_metadata, le.qrels_id, le.qrels_name, le.measure, v.query_id, v.value,
       le.relevance_level, le.missing_queries, le.options
FROM latest_evaluations le
JOIN evaluation_values v ON v.evaluation_id = le.evaluation_id;

-- Every regression-gate verdict with the names of the runs and qrels set involved.
CREATE VIEW regress_results AS
SELECT c.id AS check_id, c.created_at, c.run_id, r.name AS run_name, r.system_tag,
       c.baseline_run_id, b.name AS baseline_name, c.baseline_spec, c.qrels_id,
       q.name AS qrels_name, c.test, c.correction, c.alpha, c.max_drop, c.relative,
       c.passed, v.measure, v.baseline_value, v.run_value, v.delta, v.num_q, v.improved,
       v.degraded, v.p_value, v.p_corrected, v.status, v.regressed
FROM regress_checks c
JOIN regress_verdicts v ON v.check_id = c.id
JOIN runs r ON r.id = c.run_id
JOIN runs b ON b.id = c.baseline_run_id
JOIN qrels_sets q ON q.id = c.qrels_id;
