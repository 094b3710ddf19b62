-- RelP@k: precision at k relative to the best possible.          trec_eval relative_P_k
--
--   RelP@k = K(k) / min(k, R), K(k) = relevant documents in the top k; 0 when R = 0.
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
    CAST(count(*) AS DOUBLE) / CAST(least(c.cutoff, any_value(s.num_rel)) AS DOUBLE) AS value
FROM rh_relevant AS r
JOIN (SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff) AS c ON r.rank <= c.cutoff
JOIN rh_stats AS s ON s.level = r.level AND s.run_id = r.run_id AND s.query_id = r.query_id
WHERE r.level = :rel
GROUP BY r.run_id, r.query_id, c.cutoff
