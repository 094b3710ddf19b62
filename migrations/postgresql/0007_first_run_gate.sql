-- 0007 (PostgreSQL): a first run's passed gate is stored with baseline_run_id NULL, as
-- ../0007_first_run_gate.sql.

ALTER TABLE regress_checks ALTER COLUMN baseline_run_id DROP NOT NULL;
