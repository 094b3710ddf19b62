-- 0011: every stored evaluation records what it was computed from, and the regression gate
-- stores its mode, the interval, effect size and verdict word of each measure, and its
-- order-drift bounds.
--
-- evaluations.input_signature is the md5 (hex) of five lines joined by a line feed:
--   the qrels set's content hash (qrels_sha256),
--   md5 of the query ids evaluated (the per-query rows stored in evaluation_values), sorted
--     byte-wise and joined by line feeds (md5 of '' when there is none),
--   the effective relevance level, the missing-query policy, and the options that change
--   values (the JSON of evaluations.options).
-- src/rankhouse/evaluation/signature.py computes the same text when an evaluation is stored.
-- Every part is stored with each evaluation, so the two UPDATEs below give every evaluation
-- stored before this migration the signature it would have been given. NULL means unknown
-- (a row written by another tool): history draws a boundary on both sides of an unknown
-- signature, and the gate treats it as other inputs (docs/history.md).

ALTER TABLE evaluations ADD COLUMN input_signature VARCHAR;

UPDATE evaluations SET input_signature = md5(
    evaluations.qrels_sha256 || chr(10) || s.queries || chr(10)
    || CAST(evaluations.relevance_level AS VARCHAR) || chr(10)
    || evaluations.missing_queries || chr(10) || evaluations.options
)
FROM (
    SELECT evaluation_id, md5(string_agg(query_id, chr(10) ORDER BY query_id)) AS queries
    FROM evaluation_values
    GROUP BY evaluation_id
) s
WHERE s.evaluation_id = evaluations.id;

UPDATE evaluations SET input_signature = md5(
    qrels_sha256 || chr(10) || md5('') || chr(10) || CAST(relevance_level AS VARCHAR)
    || chr(10) || missing_queries || chr(10) || options
)
WHERE input_signature IS NULL AND id NOT IN (SELECT evaluation_id FROM evaluation_values);

-- The gate's mode: 'non_inferiority' (the default from 0011) or 'significance' (every check
-- stored before), the confidence level of the intervals it shows, and what differed between
-- the run's inputs and the baseline's when --allow-input-change let it compare them anyway.
ALTER TABLE regress_checks ADD COLUMN mode VARCHAR;

ALTER TABLE regress_checks ADD COLUMN level DOUBLE;

ALTER TABLE regress_checks ADD COLUMN input_change VARCHAR;

UPDATE regress_checks SET mode = 'significance';

-- Per measure: the absolute margin (max_drop in the measure's units), the interval of the
-- paired difference at the check's level, the one-sided bound non-inferiority compares with
-- -margin (the lower limit of the (1 - 2 alpha) t interval), Hedges' g_z, and the verdict
-- word (better, worse, equivalent, inconclusive). NULL on checks stored before 0011.
ALTER TABLE regress_verdicts ADD COLUMN margin DOUBLE;

ALTER TABLE regress_verdicts ADD COLUMN delta_low DOUBLE;

ALTER TABLE regress_verdicts ADD COLUMN delta_high DOUBLE;

ALTER TABLE regress_verdicts ADD COLUMN bound DOUBLE;

ALTER TABLE regress_verdicts ADD COLUMN hedges_gz DOUBLE;

ALTER TABLE regress_verdicts ADD COLUMN verdict VARCHAR;

-- One row per order-drift bound of a check (--max-drift rbo@100:0.9): the mean drift of the
-- run from the baseline (drift_evaluations.id drift_id) and whether it stayed at or above
-- the bound.
CREATE TABLE regress_drift (
    check_id  INTEGER NOT NULL,        -- regress_checks.id
    measure   VARCHAR NOT NULL,        -- 'rbo', 'kendall_tau', 'tau_ap' or 'overlap'
    k         INTEGER NOT NULL,        -- depth
    p         DOUBLE NOT NULL,         -- RBO's persistence
    value     DOUBLE,                  -- the mean over the queries (NULL: no query has one)
    bound     DOUBLE NOT NULL,         -- the least mean that passes
    num_q     INTEGER NOT NULL,        -- queries averaged
    drift_id  INTEGER,                 -- drift_evaluations.id (NULL: not stored, read-only)
    passed    BOOLEAN NOT NULL
);

DROP VIEW query_values;

DROP VIEW latest_evaluations;

DROP VIEW regress_results;

-- The newest stored evaluation of each run, qrels set and label, with its input signature.
CREATE VIEW latest_evaluations AS
SELECT e.id AS evaluation_id, e.run_id, r.name AS run_name, r.system_tag,
       r.ingested_at AS run_ingested_at, r.metadata AS run_metadata,
       e.qrels_id, q.name AS qrels_name, e.label AS measure, e.value, e.num_q, e.aggregate,
       e.relevance_level, e.missing_queries, e.options, e.created_at, e.input_signature
FROM (
    SELECT ev.*,
           row_number() OVER (
               PARTITION BY ev.run_id, ev.qrels_id, ev.label
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
       le.relevance_level, le.missing_queries, le.options, le.input_signature
FROM latest_evaluations le
JOIN evaluation_values v ON v.evaluation_id = le.evaluation_id;

-- Every regression-gate verdict with the names of the runs and qrels set involved. A deleted
-- baseline keeps its name (baseline_run_id then names no run; baseline_deleted is true).
CREATE VIEW regress_results AS
SELECT c.id AS check_id, c.created_at, c.run_id, r.name AS run_name, r.system_tag,
       c.baseline_run_id, coalesce(b.name, c.baseline_name) AS baseline_name, c.baseline_spec,
       c.qrels_id, q.name AS qrels_name, c.test, c.correction, c.alpha, c.max_drop, c.relative,
       c.passed, v.measure, v.baseline_value, v.run_value, v.delta, v.num_q, v.improved,
       v.degraded, v.p_value, v.p_corrected, v.status, v.regressed,
       b.id IS NULL AS baseline_deleted, c.mode, c.level, c.input_change, v.margin,
       v.delta_low, v.delta_high, v.bound, v.hedges_gz, v.verdict
FROM regress_checks c
JOIN regress_verdicts v ON v.check_id = c.id
JOIN runs r ON r.id = c.run_id
LEFT JOIN runs b ON b.id = c.baseline_run_id
JOIN qrels_sets q ON q.id = c.qrels_id;
