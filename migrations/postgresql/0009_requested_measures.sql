-- 0009 (PostgreSQL): an evaluation remembers whether a command asked for its measure, as
-- ../0009_requested_measures.sql (the same SQL).

ALTER TABLE evaluations ADD COLUMN requested BOOLEAN DEFAULT TRUE;
