-- Accuracy@k: ir_measures' accuracy (its `accuracy` provider, the measure's home): the chance
-- that, of a relevant and a non-relevant document of the top k, the relevant one is ranked
-- first.                                                           not in trec_eval
--
--   Accuracy@k = 1 - sum over relevant documents d of the top k of N(d) / (N * A), where
--   A = the relevant documents (grade >= rel) in the top min(k, n), N = the other documents
--   of the top min(k, n) (judged below rel or not judged), N(d) = those ranked above d
--   (rank(d) - k(d), k(d) the relevant documents at or above d). No cutoff: k = n.
--   N = 0 (the top k holds only relevant documents): 1, a perfect ranking (ir_measures'
--   provider divides by zero). A = 0: no row, so 0 (ir_measures leaves the query out of its
--   mean; here every query counts, as in every measure). Ranks are the evaluation's (after
--   -M and -J).
--
-- Rows only for queries with a relevant document in the top k (others are 0).
--
-- Parameters:
--   :rel      INTEGER    relevance level
--   :cutoffs  INTEGER[]  the cutoffs k; a NULL element means no cutoff

WITH cut AS (
    SELECT r.run_id, r.query_id, c.cutoff,
           least(coalesce(c.cutoff, q.num_ret), q.num_ret) AS depth,
           count(*) AS relevant,
           sum(r.rank - r.k) AS above
    FROM rh_relevant AS r
    JOIN rh_queries AS q ON q.run_id = r.run_id AND q.query_id = r.query_id
    JOIN (SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff) AS c
      ON c.cutoff IS NULL OR r.rank <= c.cutoff
    WHERE r.level = :rel
    GROUP BY r.run_id, r.query_id, c.cutoff, q.num_ret
)
SELECT run_id, query_id, cutoff AS key,
       CASE WHEN depth = relevant THEN CAST(1 AS DOUBLE)
            ELSE 1 - CAST(above AS DOUBLE) / (CAST(depth - relevant AS DOUBLE) * relevant) END
         AS value
FROM cut
