-- infAP: inferred average precision (Yilmaz & Aslam, CIKM 2006).   trec_eval infAP
--
--   For each relevant retrieved document at rank i (j = i - 1 documents above it):
--     term = 1                                                      if i = 1
--     term = 1/(j+1) + (j/(j+1)) * ((r+z+u)/j) * ((r+eps)/(r+z+2*eps))  otherwise,
--   r = relevant above, z = judged non-relevant above, u = negative-grade ("pooled but
--   unjudged") documents above, eps = 0.00001. Documents absent from the qrels occupy a rank
--   but count nowhere. infAP = sum(term) / R, summed in rank order, in trec_eval's exact
--   order of operations.
--
-- Rows only for queries with a relevant document retrieved (others are 0).
--
-- Parameters:
--   :rel  INTEGER  relevance level

WITH terms AS (
    SELECT
        r.level, r.run_id, r.query_id, r.rank,
        CAST(r.rank - 1 AS DOUBLE) AS fj,
        r.k - 1 AS rel_above,
        r.judged_upto - r.k AS nonrel_above,
        r.pooled_upto - r.judged_upto AS unjudged_above
    FROM rh_relevant AS r
    WHERE r.level = :rel
)
SELECT
    t.run_id,
    t.query_id,
    list_reduce(
        list(
            CASE
                WHEN t.rank = 1 THEN CAST(1 AS DOUBLE)
                ELSE CAST(1 AS DOUBLE) / (t.fj + CAST(1 AS DOUBLE))
                     + (t.fj / (t.fj + CAST(1 AS DOUBLE)))
                       * (CAST(t.rel_above + t.nonrel_above + t.unjudged_above AS DOUBLE) / t.fj)
                       * ((CAST(t.rel_above AS DOUBLE) + CAST(0.00001 AS DOUBLE))
                          / (CAST(t.rel_above + t.nonrel_above AS DOUBLE)
                             + CAST(2 AS DOUBLE) * CAST(0.00001 AS DOUBLE)))
            END
            ORDER BY t.rank
        ),
        lambda acc, x: acc + x
    ) / CAST(any_value(s.num_rel) AS DOUBLE) AS value
FROM terms AS t
JOIN rh_stats AS s ON s.level = t.level AND s.run_id = t.run_id AND s.query_id = t.query_id
GROUP BY t.run_id, t.query_id
