-- Judged@k: the share of the top k documents that have a line in the qrels, as ir_measures
-- (the measure's home tool) computes it.
--
--   Judged@k = (documents in the top min(k, n) with a qrels line) / min(k, n); 0 if n = 0.
--   No cutoff: k = n. Any grade counts, negative ones too ("pooled but unjudged" to
--   trec_eval's infAP); documents absent from the qrels are unjudged. Not in trec_eval.
--
-- Rows only for queries with a judged document in the top k (others are 0).
--
-- Parameters:
--   :cutoffs  INTEGER[]  the cutoffs k; a NULL element means no cutoff

SELECT
    r.run_id,
    r.query_id,
    c.cutoff AS key,
    CAST(count(*) AS DOUBLE)
      / CAST(least(coalesce(c.cutoff, any_value(q.num_ret)), any_value(q.num_ret)) AS DOUBLE)
      AS value
FROM rh_ranking AS r
JOIN (SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff) AS c
  ON c.cutoff IS NULL OR r.rank <= c.cutoff
JOIN rh_queries AS q ON q.run_id = r.run_id AND q.query_id = r.query_id
WHERE r.grade IS NOT NULL
GROUP BY r.run_id, r.query_id, c.cutoff
