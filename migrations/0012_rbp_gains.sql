-- 0012: `RBP` is ir_measures' RBP (the grade is the gain, tied documents share their
-- weights); trec_eval's rbp, gains divided by the query's highest grade, is `RBP_gains`.
--
-- An evaluation stored before this migration as `RBP` or `RBP(...)` was trec_eval's rbp: it
-- is renamed to what it is, `RBP_gains...`, with its label and the gate verdicts that carry
-- it, so that `RBP` is never served from it. Its parameters (p, gains) are RBP_gains' own.
-- (No LIKE: psycopg would read its % as a placeholder.)

UPDATE regress_verdicts SET measure = 'RBP_gains' || substr(measure, 4)
WHERE measure = 'RBP' OR substr(measure, 1, 4) IN ('RBP(', 'RBP ');

UPDATE evaluations SET
    measure = 'RBP_gains' || substr(measure, 4),
    label = 'RBP_gains' || substr(label, 4)
WHERE measure = 'RBP' OR substr(measure, 1, 4) = 'RBP(';
