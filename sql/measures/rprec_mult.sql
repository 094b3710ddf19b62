-- RprecMult@x: precision at rank x * R.                          trec_eval Rprec_mult_x
--
--   c = trunc(x * R + 0.9) computed in doubles (not rounding: 0.7 * 3 + 0.9 gives 2);
--   RprecMult@x = K(c) / c when c >= 1, else 0. K(c) = relevant documents in the top c.
--
-- Rows only for queries with a relevant document in the top c (others are 0).
--
-- Parameters:
--   :rel        INTEGER   relevance level
--   :multiples  DOUBLE[]  the multiples x of R

WITH cuts AS (
    SELECT s.run_id, s.query_id, m.multiple,
           trunc(m.multiple * CAST(s.num_rel AS DOUBLE) + CAST(0.9 AS DOUBLE)) AS c
    FROM rh_stats AS s
    CROSS JOIN (SELECT unnest(CAST(:multiples AS DOUBLE[])) AS multiple) AS m
    WHERE s.level = :rel
)
SELECT
    c.run_id,
    c.query_id,
    c.multiple AS key,
    CAST(count(*) AS DOUBLE) / c.c AS value
FROM cuts AS c
JOIN rh_relevant AS r
  ON r.level = :rel AND r.run_id = c.run_id AND r.query_id = c.query_id
 AND CAST(r.rank AS DOUBLE) <= c.c
WHERE c.c >= CAST(1 AS DOUBLE)
GROUP BY c.run_id, c.query_id, c.multiple, c.c
