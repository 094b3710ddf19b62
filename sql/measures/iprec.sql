-- IPrec@r: interpolated precision at recall r.          trec_eval iprec_at_recall_r (v10)
--
--   c = round(r * R) (half away from zero, as C lround), a = relevant retrieved:
--     c > a        : 0
--     1 <= c <= a  : max over j >= c of j / rank of the j-th relevant retrieved document
--     c <= 0       : the same max over all j when a >= 1; else a / n = 0, and NaN when the
--                    ranking is empty (n = 0: -M0, or -J with nothing judged retrieved)
--   (trec_eval 9 used c = trunc(r * R + 0.9).)
--
-- One row for every evaluated query (NaN cannot be left to the default).
--
-- Parameters:
--   :rel      INTEGER   relevance level
--   :recalls  DOUBLE[]  the recall points r

WITH points AS (
    SELECT unnest(CAST(:recalls AS DOUBLE[])) AS recall
),
wanted AS (
    SELECT s.run_id, s.query_id, s.num_rel_ret, s.eval_n, p.recall,
           round(p.recall * CAST(s.num_rel AS DOUBLE)) AS c
    FROM rh_stats AS s CROSS JOIN points AS p
    WHERE s.level = :rel
),
best AS (
    SELECT w.run_id, w.query_id, w.recall,
           max(CAST(r.k AS DOUBLE) / CAST(r.rank AS DOUBLE)) AS value
    FROM wanted AS w
    JOIN rh_relevant AS r
      ON r.level = :rel AND r.run_id = w.run_id AND r.query_id = w.query_id
     AND CAST(r.k AS DOUBLE) >= w.c
    WHERE w.c <= CAST(w.num_rel_ret AS DOUBLE)
    GROUP BY w.run_id, w.query_id, w.recall
)
SELECT
    w.run_id,
    w.query_id,
    w.recall AS key,
    CASE
        WHEN w.c > CAST(w.num_rel_ret AS DOUBLE) THEN CAST(0 AS DOUBLE)
        WHEN w.num_rel_ret > 0 THEN b.value
        WHEN w.eval_n = 0 THEN CAST('NaN' AS DOUBLE)
        ELSE CAST(0 AS DOUBLE)
    END AS value
FROM wanted AS w
LEFT JOIN best AS b ON b.run_id = w.run_id AND b.query_id = w.query_id AND b.recall = w.recall
