-- IPrecAvg: mean interpolated precision over recall points.           trec_eval 11pt_avg
--
--   For the points p_1..p_T in the given order, c_t = round(p_t * R) (half away from zero),
--   a = relevant retrieved, iprec(c) = max over j >= c of j / rank of the j-th relevant
--   retrieved document, best = the same max over all j (a / n = 0 when a = 0, NaN when the
--   ranking is empty). trec_eval assigns the values by a walk that assumes ascending points
--   (spec 8.5); its exact result, computed here in closed form, is:
--     * the last points with c_t > a (scanning t = T, T-1, ...) get 0;
--     * then, going down t, a point with 1 <= c_t <= min(a, c of the later points) gets
--       iprec(c_t); from the first point that breaks this rule on, every point gets best.
--   IPrecAvg = sum of the T values (in order) / T. Ascending points give the mean of IPrec.
--
-- Rows for every evaluated query (NaN cannot be left to the default).
--
-- Parameters:
--   :rel     INTEGER  relevance level
--   :points  VARCHAR  the recall points, separated by ';' (e.g. '0.0;0.5;1.0')

WITH parsed AS (
    SELECT list_transform(string_split(CAST(:points AS VARCHAR), ';'),
                          lambda x: CAST(x AS DOUBLE)) AS ps
),
points AS (
    SELECT t.i AS t, parsed.ps[t.i] AS p, len(parsed.ps) AS num_points
    FROM parsed CROSS JOIN range(1, len(parsed.ps) + 1) AS t(i)
),
wanted AS (
    SELECT s.run_id, s.query_id, s.num_rel_ret AS a, s.eval_n, pt.t, pt.num_points,
           round(pt.p * CAST(s.num_rel AS DOUBLE)) AS c
    FROM rh_stats AS s CROSS JOIN points AS pt
    WHERE s.level = :rel
),
skipped AS (
    SELECT *,
           bool_and(c > CAST(a AS DOUBLE)) OVER (
               PARTITION BY run_id, query_id ORDER BY t DESC ROWS UNBOUNDED PRECEDING
           ) AS skip
    FROM wanted
),
bounded AS (
    SELECT *,
           least(CAST(a AS DOUBLE), min(CASE WHEN skip THEN NULL ELSE c END) OVER (
               PARTITION BY run_id, query_id ORDER BY t DESC
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
           )) AS bound
    FROM skipped
),
walked AS (
    SELECT *,
           bool_or(NOT skip AND (c < CAST(1 AS DOUBLE) OR c > bound)) OVER (
               PARTITION BY run_id, query_id ORDER BY t DESC ROWS UNBOUNDED PRECEDING
           ) AS broken
    FROM bounded
),
precisions AS (
    SELECT run_id, query_id, k, CAST(k AS DOUBLE) / CAST(rank AS DOUBLE) AS precision
    FROM rh_relevant
    WHERE level = :rel
),
best AS (
    SELECT run_id, query_id, max(precision) AS best FROM precisions GROUP BY run_id, query_id
),
iprec AS (
    SELECT w.run_id, w.query_id, w.t, max(p.precision) AS value
    FROM walked AS w
    JOIN precisions AS p
      ON p.run_id = w.run_id AND p.query_id = w.query_id AND CAST(p.k AS DOUBLE) >= w.c
    WHERE NOT w.skip AND NOT w.broken
    GROUP BY w.run_id, w.query_id, w.t
),
valued AS (
    SELECT w.run_id, w.query_id, w.t, w.num_points,
           CASE
               WHEN w.skip THEN CAST(0 AS DOUBLE)
               WHEN NOT w.broken THEN i.value
               WHEN w.a > 0 THEN b.best
               WHEN w.eval_n = 0 THEN CAST('NaN' AS DOUBLE)
               ELSE CAST(0 AS DOUBLE)
           END AS value
    FROM walked AS w
    LEFT JOIN iprec AS i ON i.run_id = w.run_id AND i.query_id = w.query_id AND i.t = w.t
    LEFT JOIN best AS b ON b.run_id = w.run_id AND b.query_id = w.query_id
)
SELECT
    run_id,
    query_id,
    list_reduce(list(value ORDER BY t), lambda acc, x: acc + x, CAST(0 AS DOUBLE))
        / CAST(any_value(num_points) AS DOUBLE) AS value
FROM valued
GROUP BY run_id, query_id
