-- Rprec: precision at rank R.                                    trec_eval Rprec
--
--   Rprec = K(min(n, R)) / R; 0 when min(n, R) = 0 (the denominator stays R when n < R).
--
-- Rows only for queries with a relevant document in the top R.
--
-- Parameters:
--   :rel  INTEGER  relevance level

SELECT
    r.run_id,
    r.query_id,
    CAST(count(*) AS DOUBLE) / CAST(any_value(s.num_rel) AS DOUBLE) AS value
FROM rh_relevant AS r
JOIN rh_stats AS s ON s.level = r.level AND s.run_id = r.run_id AND s.query_id = r.query_id
WHERE r.level = :rel AND r.rank <= least(s.num_ret, s.num_rel)
GROUP BY r.run_id, r.query_id
