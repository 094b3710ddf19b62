-- 0004: the number of tied-score pairs of each run, counted once at ingest (evaluations
-- report it; counting it over a large run at every evaluation cost a second).
-- NULL for runs stored before this migration: evaluations then count it themselves.

ALTER TABLE runs ADD COLUMN tied_pairs BIGINT;
