-- RBP_resid: the RBP residual of the unjudged documents.          trec_eval rbp_resid
--
--   When some retrieved document has no judgment >= 0 (not in the qrels, or judged
--   negative): RBP_resid = w_{n+1} + (1 - p) * sum over those ranks i of w_i, with
--   w_1 = 1, w_{i+1} = w_i * p (repeated multiplication, read from rh_rbp_weights (i, w),
--   which the prepare step builds: measures/rbp_weights.py); otherwise 0 (trec_eval's
--   rule, even though p^n > 0). Summed in rank order. Always 0 under -J. A query the run
--   did not answer is scored on trec_eval's -c dummy ranking (one unjudged document): 1.
--
-- Rows only for queries with an unjudged document retrieved (others are 0).
--
-- Parameters:
--   :p  DOUBLE  persistence

WITH judged AS (
    SELECT run_id, query_id, rank FROM rh_ranking WHERE grade >= 0
),
judged_counts AS (
    SELECT run_id, query_id, count(*) AS n FROM judged GROUP BY run_id, query_id
),
unjudged_queries AS (
    SELECT q.run_id, q.query_id, q.eval_n
    FROM rh_queries AS q
    LEFT JOIN judged_counts AS j ON j.run_id = q.run_id AND j.query_id = q.query_id
    WHERE q.eval_n > coalesce(j.n, 0)
),
ranks AS (
    SELECT run_id, query_id, eval_n, unnest(range(1, eval_n + 1)) AS i
    FROM unjudged_queries
),
unjudged AS (
    SELECT r.run_id, r.query_id, r.eval_n, r.i
    FROM ranks AS r
    ANTI JOIN judged AS j ON j.run_id = r.run_id AND j.query_id = r.query_id AND j.rank = r.i
)
SELECT
    u.run_id,
    u.query_id,
    any_value(last.w)
        + (CAST(1 AS DOUBLE) - CAST(:p AS DOUBLE))
          * list_reduce(list(w.w ORDER BY u.i), lambda acc, x: acc + x) AS value
FROM unjudged AS u
JOIN rh_rbp_weights AS w ON w.i = u.i
JOIN rh_rbp_weights AS last ON last.i = u.eval_n + 1
GROUP BY u.run_id, u.query_id
