-- Success@k: 1 if a relevant document is in the top k, else 0.   trec_eval success_k
--
-- Rows only for queries with a relevant document in the top k (others are 0).
--
-- Parameters:
--   :rel      INTEGER    relevance level
--   :cutoffs  INTEGER[]  the cutoffs k (each >= 1)

SELECT DISTINCT
    r.run_id,
    r.query_id,
    c.cutoff AS key,
    CAST(1 AS DOUBLE) AS value
FROM rh_relevant AS r
JOIN (SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff) AS c ON r.rank <= c.cutoff
WHERE r.level = :rel
