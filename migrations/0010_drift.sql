-- 0010: order drift between two runs, stored like evaluations: one row per (run, baseline,
-- depth k, persistence p) with the means, and one row per query with its values. Drift
-- depends on the two rankings alone (no qrels): the queries are those either run ranks; a
-- query one run lacks has RBO 0 and overlap 0, and no tau. Measures (docs/compare.md):
-- rbo = extrapolated rank-biased overlap of the top k at persistence p (Webber, Moffat &
-- Zobel 2010, eq. 32); kendall_tau and tau_ap = Kendall's tau and Yilmaz et al.'s tau_AP of
-- the documents both top-k lists hold (NULL below two); overlap = |shared| / k.

CREATE SEQUENCE drift_ids START 1;

CREATE TABLE drift_evaluations (
    id                 INTEGER PRIMARY KEY DEFAULT nextval('drift_ids'),
    run_id             INTEGER NOT NULL,   -- runs.id of the run
    baseline_run_id    INTEGER NOT NULL,   -- runs.id of the run it drifted from
    depth              INTEGER NOT NULL,   -- k: the top k of each ranking
    persistence        DOUBLE NOT NULL,    -- p: RBO's persistence
    num_q              INTEGER NOT NULL,   -- queries compared (either run ranks them)
    rbo                DOUBLE,             -- means over the num_q queries
    kendall_tau        DOUBLE,             -- means over the num_tau queries
    tau_ap             DOUBLE,
    overlap            DOUBLE,
    num_tau            INTEGER NOT NULL,   -- queries whose top k lists share two documents
    rankhouse_version  VARCHAR NOT NULL,
    created_at         TIMESTAMP NOT NULL  -- UTC
);

CREATE TABLE drift_values (
    drift_id     INTEGER NOT NULL,         -- drift_evaluations.id
    query_id     VARCHAR NOT NULL,
    rbo          DOUBLE NOT NULL,
    kendall_tau  DOUBLE,                   -- NULL: fewer than two shared documents
    tau_ap       DOUBLE,
    overlap      DOUBLE NOT NULL,
    shared       INTEGER NOT NULL          -- documents both top k lists hold
);

-- The newest drift of each run from each baseline at each k and p, with the runs' names.
CREATE VIEW drift_results AS
SELECT d.id AS drift_id, d.run_id, r.name AS run_name, r.system_tag,
       d.baseline_run_id, b.name AS baseline_name, d.depth AS k, d.persistence AS p,
       d.num_q, d.rbo, d.kendall_tau, d.tau_ap, d.overlap, d.num_tau, d.created_at
FROM (
    SELECT de.*,
           row_number() OVER (
               PARTITION BY de.run_id, de.baseline_run_id, de.depth, de.persistence
               ORDER BY de.created_at DESC, de.id DESC
           ) AS recency
    FROM drift_evaluations de
) d
JOIN runs r ON r.id = d.run_id
JOIN runs b ON b.id = d.baseline_run_id
WHERE d.recency = 1;

-- Per-query drift of the newest drifts.
CREATE VIEW query_drift AS
SELECT dr.drift_id, dr.run_id, dr.run_name, dr.baseline_run_id, dr.baseline_name, dr.k, dr.p,
       v.query_id, v.rbo, v.kendall_tau, v.tau_ap, v.overlap, v.shared
FROM drift_results dr
JOIN drift_values v ON v.drift_id = dr.drift_id;
