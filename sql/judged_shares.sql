-- The judged shares an evaluation stores (table evaluation_judged, migration 0020): for
-- each run and query it answered that the qrels judge, and each k of the bind $ks, the share
-- of its top min(k, n) documents that have a qrels line (any grade). The measure Judged@k
-- (measures/judged.sql) makes the same division, so the same doubles; here a query with no
-- judged document in its top k gets its row too (0), as the stored table wants.
--
-- It reads the ranking that rankhouse.engine.compute just built (rh_ranking, rh_queries),
-- without max_rank or judged_only: the run's own ranks (rankhouse.evaluation.computing ranks
-- the run again first when the evaluation's options change them).
--
-- Parameters:
--   $ks  INTEGER[]  the cutoffs k (each > 0)

SELECT q.run_id, q.query_id, c.k,
       CAST(count(r.rank) AS DOUBLE) / CAST(least(c.k, q.num_ret) AS DOUBLE) AS judged
FROM rh_queries AS q
CROSS JOIN (SELECT CAST(unnest($ks) AS INTEGER) AS k) AS c
LEFT JOIN rh_ranking AS r
  ON r.run_id = q.run_id AND r.query_id = q.query_id AND r.rank <= c.k AND r.grade IS NOT NULL
WHERE q.in_run AND c.k > 0
GROUP BY q.run_id, q.query_id, c.k, q.num_ret
