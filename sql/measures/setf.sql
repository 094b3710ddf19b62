-- SetF: F measure of the retrieved list (or its top k).             trec_eval set_F, set_F_x
--
--   P = a / n, Rc = a / R, SetF = ((beta + 1) * P * Rc) / (beta * P + Rc); 0 when a = 0.
--   As in trec_eval, the parameter plays the role of beta SQUARED of F_beta (set_F.4 is F2);
--   it is called beta as in ir_measures' SetF.
--   With a cutoff k (SetF@k, ir_measures' grammar; not in trec_eval) the retrieved list is
--   its top k, as set.sql takes it: n = min(k, n), a over ranks <= k, R unchanged.
--
-- Rows only for queries with a relevant document retrieved (others are 0).
--
-- Parameters:
--   :rel     INTEGER  relevance level
--   :beta    DOUBLE   the weight x of recall
--   :cutoff  INTEGER  the rank cutoff k; NULL: the whole retrieved list

WITH top AS (
    SELECT run_id, query_id, count(*) AS a
    FROM rh_relevant
    WHERE level = :rel
      AND (CAST(:cutoff AS INTEGER) IS NULL OR rank <= CAST(:cutoff AS INTEGER))
    GROUP BY run_id, query_id
),
pr AS (
    SELECT s.run_id, s.query_id,
           CAST(t.a AS DOUBLE)
             / CAST(least(s.eval_n, coalesce(CAST(:cutoff AS INTEGER), s.eval_n)) AS DOUBLE) AS p,
           CAST(t.a AS DOUBLE) / CAST(s.num_rel AS DOUBLE) AS rc
    FROM rh_stats AS s
    JOIN top AS t ON t.run_id = s.run_id AND t.query_id = s.query_id
    WHERE s.level = :rel
)
SELECT run_id, query_id,
       ((CAST(:beta AS DOUBLE) + CAST(1 AS DOUBLE)) * p * rc) / (CAST(:beta AS DOUBLE) * p + rc)
           AS value
FROM pr
