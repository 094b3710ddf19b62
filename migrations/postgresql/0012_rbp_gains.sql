-- 0012 (PostgreSQL): trec_eval's stored RBP evaluations renamed RBP_gains, as
-- ../0012_rbp_gains.sql (the same SQL).

UPDATE regress_verdicts SET measure = 'RBP_gains' || substr(measure, 4)
WHERE measure = 'RBP' OR substr(measure, 1, 4) IN ('RBP(', 'RBP ');

UPDATE evaluations SET
    measure = 'RBP_gains' || substr(measure, 4),
    label = 'RBP_gains' || substr(label, 4)
WHERE measure = 'RBP' OR substr(measure, 1, 4) = 'RBP(';
