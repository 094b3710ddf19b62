-- Counts per query: NumQ, NumRet, NumRel, NumRelRet (summed over queries, not averaged).
--
--   NumQ      = 1 for every evaluated query               trec_eval num_q
--   NumRet    = n, documents retrieved (after -M/-J)       trec_eval num_ret
--   NumRel    = R, judged documents with grade >= rel      trec_eval num_rel
--   NumRelRet = a, relevant documents retrieved            trec_eval num_rel_ret
--
-- Returns one row per query and requested count; key = the measure's registry name.
--
-- Parameters:
--   :rel    INTEGER    relevance level (NumRel, NumRelRet)
--   :names  VARCHAR[]  the counts requested, e.g. ['NumRet', 'NumRel']

SELECT
    s.run_id,
    s.query_id,
    m.key,
    CAST(CASE m.key
        WHEN 'NumQ' THEN 1
        WHEN 'NumRet' THEN s.num_ret
        WHEN 'NumRel' THEN s.num_rel
        WHEN 'NumRelRet' THEN s.num_rel_ret
    END AS DOUBLE) AS value
FROM rh_stats AS s
CROSS JOIN (SELECT unnest(CAST(:names AS VARCHAR[])) AS key) AS m
WHERE s.level = :rel
