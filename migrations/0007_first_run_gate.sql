-- 0007: the regression gate remembers that it passed the first run of a series.
--
-- `rankhouse regress RUN --baseline previous --allow-missing-baseline` on the first run of a
-- system has nothing to compare with and passes. It now stores that check (passed, no
-- verdicts) with baseline_run_id NULL, so that `history` shows the run's gate as
-- "first run" instead of leaving it empty. A check whose baseline was deleted keeps the
-- deleted run's id (0006): NULL means only "there was no baseline".

ALTER TABLE regress_checks ALTER COLUMN baseline_run_id DROP NOT NULL;
