-- P@k: precision at rank k.                                      trec_eval P_k
--
--   P@k = K(k) / k, K(k) = relevant documents in the top k.
--   The denominator is k even when fewer than k documents are retrieved.
--
-- Rows only for queries with a relevant document in the top k (others are 0).
--
-- Parameters:
--   :rel      INTEGER    relevance level
--   :cutoffs  INTEGER[]  the cutoffs k (each >= 1)

SELECT
    r.run_id,
    r.query_id,
    c.cutoff AS key,
    CAST(count(*) AS DOUBLE) / CAST(c.cutoff AS DOUBLE) AS value
FROM rh_relevant AS r
JOIN (SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff) AS c ON r.rank <= c.cutoff
WHERE r.level = :rel
GROUP BY r.run_id, r.query_id, c.cutoff
