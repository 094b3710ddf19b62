-- binG: binary gain discounted by the non-relevant documents above.      trec_eval binG
--
--   binG = (1/R) * sum over relevant retrieved i of 1 / log2(2 + (i - k(i)))
--   i - k(i) = documents above i that are not relevant (unjudged ones included). Summed in
--   rank order, divided once; 0 when nothing relevant is retrieved.
--
-- Rows only for queries with a relevant document retrieved (others are 0).
--
-- Parameters:
--   :rel  INTEGER  relevance level

SELECT
    r.run_id,
    r.query_id,
    list_reduce(
        list(CAST(1 AS DOUBLE) / log2(CAST(2 + (r.rank - r.k) AS DOUBLE)) ORDER BY r.rank),
        lambda acc, x: acc + x
    ) / CAST(any_value(s.num_rel) AS DOUBLE) AS value
FROM rh_relevant AS r
JOIN rh_stats AS s ON s.level = r.level AND s.run_id = r.run_id AND s.query_id = r.query_id
WHERE r.level = :rel
GROUP BY r.run_id, r.query_id
