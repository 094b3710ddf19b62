-- 0006 (PostgreSQL): labels and kept baseline names, as ../0006_labels.sql (the same SQL,
-- PostgreSQL's types).

ALTER TABLE evaluations ADD COLUMN label TEXT COLLATE "C";

UPDATE evaluations SET label = (
    CASE
        WHEN relevance_level = 1
             OR strpos(split_part(measure, '@', 1), '(rel=') > 0
             OR strpos(split_part(measure, '@', 1), ',rel=') > 0
             OR split_part(split_part(measure, '@', 1), '(', 1) NOT IN (
                 'NumRel', 'NumRelRet', 'P', 'R', 'Success', 'AP', 'GMAP', 'RR', 'Rprec',
                 'Bpref', 'IPrec', 'infAP', 'GMBpref', 'SetP', 'SetRelP', 'SetR', 'SetAP',
                 'NumNonRelJudgedRet', 'SetF', 'Utility', 'RelP', 'RprecMult', 'binG',
                 'IPrecAvg', 'Rndcg')
            THEN measure
        WHEN strpos(split_part(measure, '@', 1), '(') > 0
            THEN substr(split_part(measure, '@', 1), 1, length(split_part(measure, '@', 1)) - 1)
                 || ',rel=' || CAST(relevance_level AS TEXT) || ')'
                 || substr(measure, length(split_part(measure, '@', 1)) + 1)
        ELSE split_part(measure, '@', 1) || '(rel=' || CAST(relevance_level AS TEXT) || ')'
             || substr(measure, length(split_part(measure, '@', 1)) + 1)
    END
) || (
    CASE
        WHEN missing_queries = 'zero'
             AND coalesce(CAST(options AS JSON) ->> 'judged_only', 'false') = 'false'
             AND CAST(options AS JSON) ->> 'max_rank' IS NULL
            THEN ''
        ELSE ' [' || substr(
            CASE WHEN missing_queries = 'zero' THEN '' ELSE ', missing_queries=' || missing_queries END
            || CASE WHEN coalesce(CAST(options AS JSON) ->> 'judged_only', 'false') = 'false' THEN ''
                    ELSE ', judged_only=' || (CAST(options AS JSON) ->> 'judged_only') END
            || CASE WHEN CAST(options AS JSON) ->> 'max_rank' IS NULL THEN ''
                    ELSE ', max_rank=' || (CAST(options AS JSON) ->> 'max_rank') END,
            3) || ']'
    END
);

-- A verdict is about a labelled value too.
UPDATE regress_verdicts SET measure = (
    SELECT e.label FROM evaluations e WHERE e.id = regress_verdicts.run_evaluation_id
)
WHERE run_evaluation_id IN (SELECT id FROM evaluations);

-- The baseline's name as it was when the check ran: a deleted baseline's checks keep it.
ALTER TABLE regress_checks ADD COLUMN baseline_name TEXT;

UPDATE regress_checks SET baseline_name = (
    SELECT r.name FROM runs r WHERE r.id = regress_checks.baseline_run_id
);

-- Before 0006, deleting a run left its own checks behind; they belong to it.
DELETE FROM regress_verdicts WHERE check_id IN (
    SELECT id FROM regress_checks WHERE run_id NOT IN (SELECT id FROM runs)
       OR qrels_id NOT IN (SELECT id FROM qrels_sets)
);

DELETE FROM regress_checks
WHERE run_id NOT IN (SELECT id FROM runs) OR qrels_id NOT IN (SELECT id FROM qrels_sets);

DROP VIEW query_values;

DROP VIEW latest_evaluations;

DROP VIEW regress_results;

-- The newest stored evaluation of each run, qrels set and label. `measure` is the label.
CREATE VIEW latest_evaluations AS
SELECT e.id AS evaluation_id, e.run_id, r.name AS run_name, r.system_tag,
       r.ingested_at AS run_ingested_at, r.metadata AS run_metadata,
       e.qrels_id, q.name AS qrels_name, e.label AS measure, e.value, e.num_q, e.aggregate,
       e.relevance_level, e.missing_queries, e.options, e.created_at
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
       le.relevance_level, le.missing_queries, le.options
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
       b.id IS NULL AS baseline_deleted
FROM regress_checks c
JOIN regress_verdicts v ON v.check_id = c.id
JOIN runs r ON r.id = c.run_id
LEFT JOIN runs b ON b.id = c.baseline_run_id
JOIN qrels_sets q ON q.id = c.qrels_id;
