-- Judged@k: the share of the top k documents that have a judgment >= 0.
--
--   Judged@k = (documents in the top min(k, n) with grade >= 0) / min(k, n); 0 if n = 0.
--   No cutoff: k = n. Negative grades ("pooled but unjudged" in trec_eval) and documents
--   absent from the qrels count as unjudged. (ir_measures counts any qrels line as judged.)
--   Not in trec_eval.
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
WHERE r.grade >= 0
GROUP BY r.run_id, r.query_id, c.cutoff
