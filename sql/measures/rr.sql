-- RR and RR@k: reciprocal rank.                       trec_eval recip_rank (RR only)
--
--   RR   = 1 / rank of the first relevant document; 0 if none is retrieved
--   RR@k = the same, 0 when the first relevant document ranks below k
--
-- Rows only for queries with a relevant document retrieved (within k).
--
-- Parameters:
--   :rel      INTEGER    relevance level
--   :cutoffs  INTEGER[]  the cutoffs k; a NULL element means no cutoff (plain RR)

SELECT
    r.run_id,
    r.query_id,
    c.cutoff AS key,
    CAST(1 AS DOUBLE) / CAST(min(r.rank) AS DOUBLE) AS value
FROM rh_relevant AS r
JOIN (SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff) AS c
  ON c.cutoff IS NULL OR r.rank <= c.cutoff
WHERE r.level = :rel AND r.k = 1
GROUP BY r.run_id, r.query_id, c.cutoff
