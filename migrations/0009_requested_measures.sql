-- 0009: an evaluation remembers whether a command asked for its measure.
--
-- `eval`, `compare`, `regress` and `trec-eval` store the measures their caller named;
-- `report` also stores the 11 points of its precision-recall curves (IPrec@0.0 ...
-- IPrec@1.0), which nobody named. `history` shows by default the labels some command asked
-- for, and the others with --all-measures. An evaluation a report stored is marked FALSE;
-- when a command later asks for that measure and reuses it, it becomes TRUE. Evaluations
-- stored before this migration count as asked for (NULL reads as TRUE): nothing says
-- otherwise.

ALTER TABLE evaluations ADD COLUMN requested BOOLEAN DEFAULT TRUE;
