-- RBP_resid: the RBP residual of the unjudged documents.          trec_eval rbp_resid
--
--   When some retrieved document has no judgment >= 0 (not in the qrels, or judged
--   negative): RBP_resid = w_{n+1} + (1 - p) * sum over those ranks i of w_i, with
--   w_1 = 1, w_{i+1} = w_i * p (repeated multiplication, read from rh_rbp_weights (i, w),
--   which the prepare step builds: measures/rbp_weights.py); otherwise 0 (trec_eval's
--   rule, even though p^n > 0). Summed in rank order. Always 0 under -J. A query the run
--   did not answer is scored on trec_eval's -c dummy ranking (one unjudged document): 1.
--
-- Rows only for queries with an unjudged document retrieved (others are 0). One list_reduce
-- walks the weights w_1..w_n in rank order, adding the weight of an unjudged rank and an
-- exact 0 for a judged one (no row per rank, one pass).
--
-- Parameters:
--   :p  DOUBLE  persistence

WITH judged AS (
    SELECT run_id, query_id, list(rank) AS ranks
    FROM rh_ranking
    WHERE grade >= 0
    GROUP BY run_id, query_id
),
weights AS (
    SELECT list(w ORDER BY i) AS w FROM rh_rbp_weights
)
SELECT
    q.run_id,
    q.query_id,
    weights.w[q.eval_n + 1]
        + (CAST(1 AS DOUBLE) - CAST(:p AS DOUBLE))
          * list_reduce(
                weights.w[1:q.eval_n],
                -- x = w_i; no judged ranks (NULL) adds every weight
                lambda acc, x, i: acc + CASE WHEN list_contains(j.ranks, i)
                                             THEN CAST(0 AS DOUBLE) ELSE x END,
                CAST(0 AS DOUBLE)) AS value
FROM rh_queries AS q
LEFT JOIN judged AS j ON j.run_id = q.run_id AND j.query_id = q.query_id
CROSS JOIN weights
WHERE q.eval_n > coalesce(len(j.ranks), 0)
