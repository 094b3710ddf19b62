-- Compat: compatibility with an ideal ranking (Clarke, Vtyurina & Smucker, TOIS 2021), as
-- ir_measures' compat provider (the measure's home in ir_measures) computes it.
--                                                                  not in trec_eval
--   The ideal I: the query's documents judged > 0, by grade descending (a graded ideal from
--   the qrels; the qrels' own scale, not the relevance level). The run's ranking R: every
--   retrieved document, n of them. With D = max(n, |I|) and O(i) = the documents in both
--   the top i of R and the top i of I:
--     RBO(R, I) = sum_{i=1..D} p^(i-1) O(i) / i  /  sum_{i=1..D} p^(i-1)
--     Compat = RBO(R, I) / RBO(I, I) (normalize, the default: RBO(I, I) has O(i) =
--              min(i, |I|)), or RBO(R, I) (normalize=False).
--   A document of both counts in O(i) from i = max(its rank, its ideal position) on.
--   Documents of one grade take the ideal positions in the order the run ranks them, those it
--   did not retrieve after (the provider: by the run's score, an unretrieved document scoring
--   0). Ranks are the evaluation's (after -M and -J); -l plays no role.
--
-- Rows only for queries the run answered with a document judged > 0 (others are 0).
--
-- Parameters:
--   :p          DOUBLE   persistence in [0, 1]
--   :normalize  BOOLEAN  divide by the ideal ranking's own RBO

WITH ideal AS (
    SELECT q.run_id, q.query_id, r.rank, q.num_ret,
           row_number() OVER (PARTITION BY q.run_id, q.query_id
                              ORDER BY j.grade DESC, r.rank ASC NULLS LAST, j.doc_id)
             AS position,
           count(*) OVER (PARTITION BY q.run_id, q.query_id) AS ideal_n
    FROM rh_queries AS q
    JOIN judgments AS j
      ON j.qrels_id = (SELECT qrels_id FROM rh_request) AND j.query_id = q.query_id
     AND j.grade > 0
    LEFT JOIN rh_ranking AS r
      ON r.run_id = q.run_id AND r.query_id = q.query_id AND r.doc_id = j.doc_id
    WHERE q.in_run
),
meets AS (
    -- where each document of both enters the overlap
    SELECT run_id, query_id, greatest(rank, position) AS i, count(*) AS entering
    FROM ideal
    WHERE rank IS NOT NULL
    GROUP BY run_id, query_id, greatest(rank, position)
),
depths AS (
    SELECT DISTINCT run_id, query_id, ideal_n, greatest(num_ret, ideal_n) AS depth
    FROM ideal
    WHERE (run_id, query_id) IN (SELECT run_id, query_id FROM meets)
),
positions AS (
    SELECT d.run_id, d.query_id, d.ideal_n, i.i,
           pow(CAST(:p AS DOUBLE), i.i - 1) AS weight,
           sum(coalesce(m.entering, 0)) OVER (PARTITION BY d.run_id, d.query_id ORDER BY i.i
                                              ROWS UNBOUNDED PRECEDING) AS overlap
    FROM depths AS d
    CROSS JOIN LATERAL range(1, d.depth + 1) AS i(i)
    LEFT JOIN meets AS m ON m.run_id = d.run_id AND m.query_id = d.query_id AND m.i = i.i
)
SELECT run_id, query_id,
       sum(weight * overlap / i)
         / CASE WHEN CAST(:normalize AS BOOLEAN) THEN sum(weight * least(i, ideal_n) / i)
                ELSE sum(weight) END AS value
FROM positions
GROUP BY run_id, query_id
