-- The gain of a judged grade: nDCG's, DCG's and CG's `dcg` parameter, written once.
--
--   dcg = 'log2' (default): gain = grade (linear gain, Jarvelin & Kekalainen 2002; trec_eval's)
--   dcg = 'exp-log2':       gain = 2^grade - 1 (Burges et al. 2005)
--
-- An expression over the column `grade` of the rows it is inlined in (`{{gain}} AS gain`),
-- which hold grades > 0: the files that include it leave out the others, which gain 0.
--
-- Parameters:
--   :dcg  VARCHAR  'log2' or 'exp-log2'

CASE WHEN CAST(:dcg AS VARCHAR) = 'exp-log2'
     THEN pow(CAST(2 AS DOUBLE), CAST(grade AS DOUBLE)) - CAST(1 AS DOUBLE)
     ELSE CAST(grade AS DOUBLE) END
