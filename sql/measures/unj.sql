-- Unj@k: share of the top k without a judgment >= 0.                     trec_eval unj_k
--
--   Unj@k = #{i <= min(k, n) : document i not in the qrels, or judged negative} / k
--   (the denominator is k even when fewer are retrieved). Always 0 under -J. A query the
--   run did not answer is 0 (trec_eval overwrites the value of its -c dummy ranking).
--
-- Rows only for queries with such a document in the top k (others are 0).
--
-- Parameters:
--   :cutoffs  INTEGER[]  the cutoffs k (each >= 1)

WITH cutoffs AS (
    SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff
),
judged AS (
    SELECT r.run_id, r.query_id, c.cutoff, count(*) AS n
    FROM rh_ranking AS r
    JOIN cutoffs AS c ON r.rank <= c.cutoff
    WHERE r.grade >= 0
    GROUP BY r.run_id, r.query_id, c.cutoff
)
SELECT
    q.run_id,
    q.query_id,
    c.cutoff AS key,
    CAST(least(c.cutoff, q.num_ret) - coalesce(j.n, 0) AS DOUBLE) / CAST(c.cutoff AS DOUBLE)
        AS value
FROM rh_queries AS q
CROSS JOIN cutoffs AS c
LEFT JOIN judged AS j
  ON j.run_id = q.run_id AND j.query_id = q.query_id AND j.cutoff = c.cutoff
WHERE least(c.cutoff, q.num_ret) > coalesce(j.n, 0)
