-- ERR@k: expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009).
--
--   ERR@k = sum over ranks i <= k of (1/i) * R_i * prod over ranks j < i of (1 - R_j),
--   R_i = (2^g_i - 1) / 2^max_grade, g_i = the grade capped at max_grade (0 for negative
--   grades and documents absent from the qrels), max_grade = the :max_grade parameter
--   (default 4, as gdeval and ir_measures: a query's value never depends on other queries'
--   grades). A grade above max_grade counts as max_grade (a perfect document; uncapped, R_i
--   would exceed 1). No cutoff: k = n. Not in trec_eval. Documents with R_j = 0 leave the
--   product unchanged, so only documents with grade > 0 are visited, in rank order.
--
-- Rows only for queries with a document of grade > 0 retrieved (within k).
--
-- Parameters:
--   :max_grade  INTEGER    grade of a perfect document (>= 1)
--   :cutoffs    INTEGER[]  the cutoffs k; a NULL element means no cutoff

WITH stops AS (
    SELECT r.run_id, r.query_id, r.rank,
           (pow(CAST(2 AS DOUBLE), CAST(least(r.grade, CAST(:max_grade AS INTEGER)) AS DOUBLE))
              - CAST(1 AS DOUBLE))
             / pow(CAST(2 AS DOUBLE), CAST(CAST(:max_grade AS INTEGER) AS DOUBLE)) AS p
    FROM rh_ranking AS r
    WHERE r.grade > 0
)
SELECT
    s.run_id,
    s.query_id,
    c.cutoff AS key,
    -- fold in rank order: state = [err, probability of reaching this rank]
    list_reduce(
        list([s.p / CAST(s.rank AS DOUBLE), s.p] ORDER BY s.rank),
        lambda acc, x: [acc[1] + (CAST(1 AS DOUBLE) - acc[2]) * x[1],
                        acc[2] + (CAST(1 AS DOUBLE) - acc[2]) * x[2]]
    )[1] AS value
FROM stops AS s
JOIN (SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff) AS c
  ON c.cutoff IS NULL OR s.rank <= c.cutoff
GROUP BY s.run_id, s.query_id, c.cutoff
