-- 0020 (PostgreSQL): each evaluation computed from now on keeps, per query, the judged share of
-- the run's top k for its measure's cutoff, as ../0020_evaluation_judged.sql; query ids
-- compare byte-wise, as in evaluation_values.

CREATE TABLE evaluation_judged (
    evaluation_id  INTEGER NOT NULL,
    query_id       TEXT COLLATE "C" NOT NULL,
    k              INTEGER NOT NULL,
    judged         DOUBLE PRECISION NOT NULL
);

CREATE INDEX evaluation_judged_by_evaluation ON evaluation_judged (evaluation_id);
