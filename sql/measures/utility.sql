-- Utility: a linear utility of the retrieved set.                trec_eval utility, utility_p
--
--   Utility = rel_ret * a + nonrel_ret * (n - a) + rel_nonret * (R - a)
--             + nonrel_nonret * (docs + a - n - R)
--   a = relevant retrieved, n = retrieved (trec_eval's n: its -c dummy ranking of one
--   unjudged document counts 1), R = relevant judged, docs = collection size (trec_eval -N).
--
-- Rows for every evaluated query (the value is rarely 0).
--
-- Parameters:
--   :rel            INTEGER  relevance level
--   :rel_ret        DOUBLE   gain of a relevant retrieved document
--   :nonrel_ret     DOUBLE   gain of a non-relevant retrieved document
--   :rel_nonret     DOUBLE   gain of a relevant document not retrieved
--   :nonrel_nonret  DOUBLE   gain of a non-relevant document not retrieved
--   :docs           BIGINT   number of documents in the collection

SELECT
    run_id,
    query_id,
    CAST(:rel_ret AS DOUBLE) * CAST(num_rel_ret AS DOUBLE)
        + CAST(:nonrel_ret AS DOUBLE) * CAST(eval_n - num_rel_ret AS DOUBLE)
        + CAST(:rel_nonret AS DOUBLE) * CAST(num_rel - num_rel_ret AS DOUBLE)
        + CAST(:nonrel_nonret AS DOUBLE)
          * CAST(CAST(:docs AS BIGINT) + num_rel_ret - eval_n - num_rel AS DOUBLE) AS value
FROM rh_stats
WHERE level = :rel
