-- SetF: F measure of the whole retrieved list.                      trec_eval set_F, set_F_x
--
--   P = a / n, Rc = a / R, SetF = ((beta + 1) * P * Rc) / (beta * P + Rc); 0 when a = 0.
--   As in trec_eval, the parameter plays the role of beta SQUARED of F_beta (set_F.4 is F2);
--   it is called beta as in ir_measures' SetF.
--
-- Rows only for queries with a relevant document retrieved (others are 0).
--
-- Parameters:
--   :rel   INTEGER  relevance level
--   :beta  DOUBLE   the weight x of recall

WITH pr AS (
    SELECT run_id, query_id,
           CAST(num_rel_ret AS DOUBLE) / CAST(eval_n AS DOUBLE) AS p,
           CAST(num_rel_ret AS DOUBLE) / CAST(num_rel AS DOUBLE) AS rc
    FROM rh_stats
    WHERE level = :rel AND num_rel_ret > 0
)
SELECT run_id, query_id,
       ((CAST(:beta AS DOUBLE) + CAST(1 AS DOUBLE)) * p * rc) / (CAST(:beta AS DOUBLE) * p + rc)
           AS value
FROM pr
