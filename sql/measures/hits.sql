-- Hits@k: the number of relevant documents in the top k, as ranx (the measure's home tool)
-- computes its hits@k.
--
--   Hits@k = K(k), relevant documents (grade >= rel) in the top min(k, n); no cutoff: all
--   retrieved (a, trec_eval's num_rel_ret, per query). Averaged over the queries, as ranx
--   reports it (ir_measures' NumRet(rel=1), the same count per query, sums it). Not in
--   trec_eval.
--
-- Rows only for queries with a relevant document in the top k (others are 0).
--
-- Parameters:
--   :rel      INTEGER    relevance level
--   :cutoffs  INTEGER[]  the cutoffs k; a NULL element means no cutoff

SELECT
    r.run_id,
    r.query_id,
    c.cutoff AS key,
    CAST(count(*) AS DOUBLE) AS value
FROM rh_relevant AS r
JOIN (SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff) AS c
  ON c.cutoff IS NULL OR r.rank <= c.cutoff
WHERE r.level = :rel
GROUP BY r.run_id, r.query_id, c.cutoff
