-- Set measures over the whole retrieved list, and the judged non-relevant count.
--                      trec_eval set_P, set_relative_P, set_recall, set_map, num_nonrel_judged_ret
--
--   SetP               = a / n
--   SetRelP            = a / min(n, R)
--   SetR               = a / R
--   SetAP              = (a * a) / (n * R)
--   NumNonRelJudgedRet = retrieved documents judged below the level (0 <= grade < rel)
--   a = relevant retrieved, n = retrieved (trec_eval's n: its -c dummy ranking counts), R =
--   relevant judged. Each ratio is 0 when its denominator is 0.
--
-- Rows for every evaluated query; key = the measure's registry name.
--
-- Parameters:
--   :rel    INTEGER    relevance level
--   :names  VARCHAR[]  the measures requested, e.g. ['SetP', 'SetR']

WITH judged AS (
    SELECT run_id, query_id, count(*) AS judged_ret
    FROM rh_ranking
    WHERE grade >= 0
    GROUP BY run_id, query_id
)
SELECT
    s.run_id,
    s.query_id,
    m.key,
    CASE m.key
        WHEN 'SetP' THEN
            CASE WHEN s.eval_n > 0
                 THEN CAST(s.num_rel_ret AS DOUBLE) / CAST(s.eval_n AS DOUBLE)
                 ELSE CAST(0 AS DOUBLE) END
        WHEN 'SetRelP' THEN
            CASE WHEN least(s.eval_n, s.num_rel) > 0
                 THEN CAST(s.num_rel_ret AS DOUBLE) / CAST(least(s.eval_n, s.num_rel) AS DOUBLE)
                 ELSE CAST(0 AS DOUBLE) END
        WHEN 'SetR' THEN
            CASE WHEN s.num_rel > 0
                 THEN CAST(s.num_rel_ret AS DOUBLE) / CAST(s.num_rel AS DOUBLE)
                 ELSE CAST(0 AS DOUBLE) END
        WHEN 'SetAP' THEN
            CASE WHEN s.eval_n > 0 AND s.num_rel > 0
                 THEN CAST(CAST(s.num_rel_ret AS BIGINT) * s.num_rel_ret AS DOUBLE)
                      / CAST(CAST(s.eval_n AS BIGINT) * s.num_rel AS DOUBLE)
                 ELSE CAST(0 AS DOUBLE) END
        WHEN 'NumNonRelJudgedRet' THEN
            CAST(coalesce(j.judged_ret, 0) - s.num_rel_ret AS DOUBLE)
    END AS value
FROM rh_stats AS s
CROSS JOIN (SELECT unnest(CAST(:names AS VARCHAR[])) AS key) AS m
LEFT JOIN judged AS j ON j.run_id = s.run_id AND j.query_id = s.query_id
WHERE s.level = :rel
