-- Bpref: binary preference (Buckley & Voorhees 2004).            trec_eval bpref
--
--   Bpref = (1/R) * sum over relevant retrieved i of
--           1                                     if no judged non-relevant document ranks above i
--           1 - min(nr(i), R) / min(N, R)         otherwise,
--   nr(i) = judged non-relevant documents (0 <= grade < rel) ranked above i,
--   N = judged non-relevant documents of the query (retrieved or not). Unjudged documents
--   (absent from the qrels or with a negative grade) are ignored. Summed in rank order.
--
-- Rows only for queries with a relevant document retrieved (others are 0).
--
-- Parameters:
--   :rel  INTEGER  relevance level

SELECT
    r.run_id,
    r.query_id,
    list_reduce(
        list(
            CASE
                WHEN r.judged_upto - r.k = 0 THEN CAST(1 AS DOUBLE)
                ELSE CAST(1 AS DOUBLE)
                     - CAST(least(r.judged_upto - r.k, s.num_rel) AS DOUBLE)
                       / CAST(least(s.num_nonrel, s.num_rel) AS DOUBLE)
            END
            ORDER BY r.rank
        ),
        lambda acc, x: acc + x
    ) / CAST(any_value(s.num_rel) AS DOUBLE) AS value
FROM rh_relevant AS r
JOIN rh_stats AS s ON s.level = r.level AND s.run_id = r.run_id AND s.query_id = r.query_id
WHERE r.level = :rel
GROUP BY r.run_id, r.query_id
