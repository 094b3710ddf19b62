-- 0004 (PostgreSQL): tied-score pairs counted at ingest, as ../0004_run_ties.sql.

ALTER TABLE runs ADD COLUMN tied_pairs BIGINT;
