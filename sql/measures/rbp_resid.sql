-- RBP_resid: the RBP residual of the unjudged documents.          trec_eval rbp_resid
--
--   When some retrieved document has no judgment >= 0 (not in the qrels, or judged
--   negative): RBP_resid = w_{n+1} + (1 - p) * sum over those ranks i of w_i, with
--   w_1 = 1, w_{i+1} = w_i * p (repeated multiplication); otherwise 0 (trec_eval's rule,
--   even though p^n > 0). Summed in rank order. Always 0 under -J. A query the run did not
--   answer is scored on trec_eval's -c dummy ranking (one unjudged document): 1.
--
-- Rows only for queries with an unjudged document retrieved (others are 0).
--
-- Parameters:
--   :p  DOUBLE  persistence

WITH RECURSIVE weights(i, w) AS (
    SELECT 1, CAST(1 AS DOUBLE)
    UNION ALL
    SELECT i + 1, w * CAST(:p AS DOUBLE)
    FROM weights
    WHERE i <= (SELECT coalesce(max(eval_n), 0) FROM rh_queries)
),
table_of_weights AS (
    SELECT list(w ORDER BY i) AS ws FROM weights
),
judged AS (
    SELECT run_id, query_id, list(rank ORDER BY rank) AS ranks
    FROM rh_ranking
    WHERE grade >= 0
    GROUP BY run_id, query_id
),
unjudged AS (
    SELECT q.run_id, q.query_id, q.eval_n,
           list_filter(range(1, q.eval_n + 1),
                       lambda i: NOT list_contains(coalesce(j.ranks, CAST([] AS BIGINT[])), i))
               AS ranks
    FROM rh_queries AS q
    LEFT JOIN judged AS j ON j.run_id = q.run_id AND j.query_id = q.query_id
    WHERE q.eval_n > coalesce(len(j.ranks), 0)
)
SELECT
    u.run_id,
    u.query_id,
    t.ws[u.eval_n + 1]
        + (CAST(1 AS DOUBLE) - CAST(:p AS DOUBLE))
          * list_reduce(list_transform(u.ranks, lambda i: t.ws[i]), lambda acc, x: acc + x)
        AS value
FROM unjudged AS u CROSS JOIN table_of_weights AS t
