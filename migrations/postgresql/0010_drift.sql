-- 0009 (PostgreSQL): order drift between two runs, as ../0009_drift.sql (the views are the
-- same SQL).

CREATE SEQUENCE drift_ids START 1;

CREATE TABLE drift_evaluations (
    id                 INTEGER PRIMARY KEY DEFAULT nextval('drift_ids'),
    run_id             INTEGER NOT NULL,
    baseline_run_id    INTEGER NOT NULL,
    depth              INTEGER NOT NULL,
    persistence        DOUBLE PRECISION NOT NULL,
    num_q              INTEGER NOT NULL,
    rbo                DOUBLE PRECISION,
    kendall_tau        DOUBLE PRECISION,
    tau_ap             DOUBLE PRECISION,
    overlap            DOUBLE PRECISION,
    num_tau            INTEGER NOT NULL,
    rankhouse_version  TEXT NOT NULL,
    created_at         TIMESTAMP NOT NULL
);

CREATE INDEX drift_evaluations_by_runs ON drift_evaluations (run_id, baseline_run_id);

CREATE TABLE drift_values (
    drift_id     INTEGER NOT NULL,
    query_id     TEXT COLLATE "C" NOT NULL,
    rbo          DOUBLE PRECISION NOT NULL,
    kendall_tau  DOUBLE PRECISION,
    tau_ap       DOUBLE PRECISION,
    overlap      DOUBLE PRECISION NOT NULL,
    shared       INTEGER NOT NULL
);

CREATE INDEX drift_values_by_drift ON drift_values (drift_id);

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

CREATE VIEW query_drift AS
SELECT dr.drift_id, dr.run_id, dr.run_name, dr.baseline_run_id, dr.baseline_name, dr.k, dr.p,
       v.query_id, v.rbo, v.kendall_tau, v.tau_ap, v.overlap, v.shared
FROM drift_results dr
JOIN drift_values v ON v.drift_id = dr.drift_id;
