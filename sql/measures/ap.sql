-- AP and AP@k: (mean) average precision.             trec_eval map, map_cut_k, gm_map
--
--   AP   = (1/R) * sum over relevant retrieved documents of k(i) / i
--   AP@k = (1/R) * the same sum restricted to ranks i <= k
--   R = judged relevant documents (relevant documents never retrieved add 0); 0 if none is
--   retrieved. The sum runs in rank order, divided once at the end, as trec_eval does.
--   GMAP is the same per-query value aggregated by geometric mean.
--
-- Rows only for queries with a relevant document retrieved (others are 0).
--
-- Parameters:
--   :rel      INTEGER    relevance level
--   :cutoffs  INTEGER[]  the cutoffs k; a NULL element means no cutoff (plain AP)

SELECT
    r.run_id,
    r.query_id,
    c.cutoff AS key,
    list_reduce(
        list(CAST(r.k AS DOUBLE) / CAST(r.rank AS DOUBLE) ORDER BY r.rank),
        lambda acc, x: acc + x
    ) / CAST(any_value(s.num_rel) AS DOUBLE) AS value
FROM rh_relevant AS r
JOIN (SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff) AS c
  ON c.cutoff IS NULL OR r.rank <= c.cutoff
JOIN rh_stats AS s ON s.level = r.level AND s.run_id = r.run_id AND s.query_id = r.query_id
WHERE r.level = :rel
GROUP BY r.run_id, r.query_id, c.cutoff
