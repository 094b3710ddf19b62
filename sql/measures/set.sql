-- Set measures over the retrieved list (or its top k), and the judged non-relevant count.
--                      trec_eval set_P, set_relative_P, set_recall, set_map, num_nonrel_judged_ret
--
--   SetP               = a / n
--   SetRelP            = a / min(n, R)
--   SetR               = a / R
--   SetAP              = (a * a) / (n * R)
--   NumNonRelJudgedRet = retrieved documents judged below the level (0 <= grade < rel)
--   a = relevant retrieved, n = retrieved (trec_eval's n: its -c dummy ranking counts), R =
--   relevant judged. Each ratio is 0 when its denominator is 0.
--   With a cutoff k (SetP@k, ir_measures' grammar; not in trec_eval) the retrieved list is
--   its top k: n = min(k, n) and a, the judged counts, over ranks <= k, as trec_eval -M k
--   computes set_P; R stays all the relevant judged. A run with fewer than k documents keeps
--   n = its length (unlike P@k, whose denominator is k).
--
-- Rows for every evaluated query; key = the measure's registry name.
--
-- Parameters:
--   :rel     INTEGER    relevance level
--   :cutoff  INTEGER    the rank cutoff k; NULL: the whole retrieved list
--   :names   VARCHAR[]  the measures requested, e.g. ['SetP', 'SetR']

WITH top AS (
    SELECT run_id, query_id,
           count(*) FILTER (WHERE grade >= :rel) AS a,
           count(*) FILTER (WHERE grade >= 0) AS judged_ret
    FROM rh_ranking
    WHERE CAST(:cutoff AS INTEGER) IS NULL OR rank <= CAST(:cutoff AS INTEGER)
    GROUP BY run_id, query_id
),
s AS (
    SELECT st.run_id, st.query_id, st.num_rel,
           least(st.eval_n, coalesce(CAST(:cutoff AS INTEGER), st.eval_n)) AS eval_n,
           coalesce(t.a, 0) AS num_rel_ret,
           coalesce(t.judged_ret, 0) AS judged_ret
    FROM rh_stats AS st
    LEFT JOIN top AS t ON t.run_id = st.run_id AND t.query_id = st.query_id
    WHERE st.level = :rel
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
            CAST(s.judged_ret - s.num_rel_ret AS DOUBLE)
    END AS value
FROM s
CROSS JOIN (SELECT unnest(CAST(:names AS VARCHAR[])) AS key) AS m
