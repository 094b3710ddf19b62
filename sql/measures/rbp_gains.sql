-- RBP_gains: rank-biased precision with trec_eval's gain table.    trec_eval rbp, rbp_p=x
--
--   trec_eval's rbp, with its gains rescaled to [0, 1]; ir_measures' RBP (the grade is the
--   gain) is RBP (rbp.sql).
--
--   RBP_gains = (1 - p) * sum over retrieved i with gain != 0 of gain'(i) * w_i,
--   w_1 = 1, w_{i+1} = w_i * p (repeated multiplication, as trec_eval; not pow), read from
--   rh_rbp_weights (i, w), which the prepare step builds (measures/rbp_weights.py).
--   Gains come from the query's gain table (spec 8.10, built by the prepare step into
--   rh_gain_entries); with lo = min(0, table gains), hi = max(0, table gains), every gain g
--   becomes (g - lo) / (hi - lo) when lo < 0 or hi > 1. With default gains that is
--   grade / max(1, V). -l plays no role. (trec_eval reads uninitialised lo/hi, spec 8.16:
--   this is its value with -m all_trec or -m rbp alone.)
--
-- Rows only for queries with a document of non-zero gain retrieved (others are 0).
--
-- Parameters:
--   :qrels_id  INTEGER  the qrels set
--   :p         DOUBLE   persistence

WITH queries AS (
    SELECT DISTINCT query_id FROM rh_queries
),
topic AS (
    SELECT j.query_id, max(j.grade) AS max_grade
    FROM judgments AS j JOIN queries AS q ON q.query_id = j.query_id
    WHERE j.qrels_id = :qrels_id
    GROUP BY j.query_id
),
entries AS (
    SELECT t.query_id, e.level, e.gain, e.lookup
    FROM topic AS t JOIN rh_gain_entries AS e ON e.max_grade = t.max_grade
),
scale AS (
    SELECT query_id,
           least(CAST(0 AS DOUBLE), min(gain)) AS lo,
           greatest(CAST(0 AS DOUBLE), max(gain)) AS hi
    FROM entries
    GROUP BY query_id
),
gained AS (
    SELECT r.run_id, r.query_id, r.rank,
           CASE WHEN s.lo < CAST(0 AS DOUBLE) OR s.hi > CAST(1 AS DOUBLE)
                THEN (e.gain - s.lo) / (s.hi - s.lo) ELSE e.gain END AS gain
    FROM rh_ranking AS r
    JOIN entries AS e ON e.query_id = r.query_id AND e.level = r.grade AND e.lookup
    JOIN scale AS s ON s.query_id = r.query_id
    -- a zero gain stays zero unless lo < 0 moves it (a judged grade's; a document outside
    -- the table has gain 0 before and after, as trec_eval's get_gain gives it)
    WHERE r.grade >= 0 AND (e.gain <> CAST(0 AS DOUBLE) OR s.lo < CAST(0 AS DOUBLE))
)
SELECT
    g.run_id,
    g.query_id,
    (CAST(1 AS DOUBLE) - CAST(:p AS DOUBLE))
        * list_reduce(list(g.gain * w.w ORDER BY g.rank), lambda acc, x: acc + x) AS value
FROM gained AS g
JOIN rh_rbp_weights AS w ON w.i = g.rank
WHERE g.gain <> CAST(0 AS DOUBLE)
GROUP BY g.run_id, g.query_id
