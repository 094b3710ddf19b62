-- Measures over trec_eval's gain table: nDCG_gains, nDCG_rel, Rndcg, G.
--                                                trec_eval ndcg (with gains), ndcg_rel, Rndcg, G
--
--   The gain table (spec 8.10) is built per query by the family's prepare step into
--   rh_gain_entries (one sorted table per highest grade V): default gain = grade, pairs
--   level=gain override, counts = judged documents of the level (any -l ignored).
--   gain(d) = the table's gain for d's grade (0 for grades < 0 and unjudged documents).
--   Ideal sequence g*_1..g*_m: from the highest entry down, each entry's gain `count` times,
--   stopping at the first counted entry with gain <= 0 (stop = that gain, else 0).
--   DCG(i) = sum over t <= i, gain != 0 of gain / log2(t + 1); IDCG(p) likewise over g*.
--     nDCG_gains = DCG(n) / IDCG(m), 0 if IDCG(m) = 0
--     nDCG_rel   = S / m if S > 0 else 0, S = sum over retrieved d with gain > 0 of
--                  DCG(i_d) / IDCG(min(i_d, m)), plus (m - s) * DCG(n) / IDCG(m)
--                  (s = number of such documents; the term is negative when s > m, and
--                  x / 0 is IEEE's: a NaN S gives 0, as trec_eval's `sum > 0.0` is false)
--     Rndcg      = 0 if R = 0; else the mean of DCG(min(p-1, n)) / IDCG(p-1) over p in 2..m+1
--                  where g*_p != g*_{p-1} (g*_{m+1} = stop) and IDCG(p-1) > 0, plus
--                  DCG(n) / IDCG(m) if n > m + 1 and IDCG(m) > 0; NaN without any point
--     G          = (sum over retrieved i with gain != 0 of gain / log2(2 + C_i - S_i)) /
--                  sum(g*), S_i = gains in the top i, C_i = sum over t <= i of max(g*_t, 1)
--                  (g*_t = 0 past m); 0 if sum(g*) = 0
--   All sums in rank order (exact prefix sums built with list_reduce).
--
-- Rows for every evaluated query; key = the measure's registry name.
--
-- Parameters:
--   :qrels_id  INTEGER    the qrels set
--   :rel       INTEGER    relevance level (only Rndcg's "R = 0 gives 0")
--   :names     VARCHAR[]  the measures requested

WITH queries AS (
    SELECT DISTINCT query_id FROM rh_queries
),
topic AS (
    SELECT j.query_id, max(j.grade) AS max_grade
    FROM judgments AS j JOIN queries AS q ON q.query_id = j.query_id
    WHERE j.qrels_id = :qrels_id
    GROUP BY j.query_id
),
counts AS (
    SELECT j.query_id, j.grade AS level, count(*) AS cnt
    FROM judgments AS j JOIN queries AS q ON q.query_id = j.query_id
    WHERE j.qrels_id = :qrels_id AND j.grade >= 0
    GROUP BY j.query_id, j.grade
),
entries AS (
    SELECT t.query_id, e.position, e.level, e.gain, e.lookup,
           CASE WHEN e.counted THEN coalesce(c.cnt, 0) ELSE 0 END AS cnt
    FROM topic AS t
    JOIN rh_gain_entries AS e ON e.max_grade = t.max_grade
    LEFT JOIN counts AS c ON c.query_id = t.query_id AND c.level = e.level
),
walk AS (
    SELECT query_id,
           arg_max(gain, position) AS top_gain,
           max(position) FILTER (WHERE cnt > 0 AND gain <= CAST(0 AS DOUBLE)) AS cut,
           arg_max(gain, position) FILTER (WHERE cnt > 0 AND gain <= CAST(0 AS DOUBLE))
               AS cut_gain
    FROM entries
    GROUP BY query_id
),
ideal AS (
    SELECT w.query_id,
           CASE WHEN w.top_gain <= CAST(0 AS DOUBLE) THEN w.top_gain
                ELSE coalesce(w.cut_gain, CAST(0 AS DOUBLE)) END AS stop,
           coalesce(flatten(list(list_resize([e.gain], e.cnt, e.gain) ORDER BY e.position DESC)
                            FILTER (WHERE e.cnt > 0 AND w.top_gain > CAST(0 AS DOUBLE)
                                    AND e.position > coalesce(w.cut, -1))),
                    CAST([] AS DOUBLE[])) AS gains
    FROM walk AS w JOIN entries AS e ON e.query_id = w.query_id
    GROUP BY w.query_id, w.top_gain, w.cut, w.cut_gain
),
ideal_sums AS (
    SELECT query_id, stop, gains, len(gains) AS m,
           list_reduce(list_transform(gains, lambda g, t: g / log2(CAST(t + 1 AS DOUBLE))),
                       lambda acc, x: list_append(acc, acc[-1] + x),
                       [CAST(0 AS DOUBLE)]) AS idcg,
           list_reduce(gains, lambda acc, x: acc + x, CAST(0 AS DOUBLE)) AS total,
           list_reduce(list_transform(gains, lambda g: greatest(g, CAST(1 AS DOUBLE))),
                       lambda acc, x: list_append(acc, acc[-1] + x),
                       [CAST(0 AS DOUBLE)]) AS costs
    FROM ideal
),
gained AS (
    SELECT r.run_id, r.query_id,
           list(r.rank ORDER BY r.rank) AS ranks,
           list(e.gain ORDER BY r.rank) AS gains
    FROM rh_ranking AS r
    JOIN entries AS e ON e.query_id = r.query_id AND e.level = r.grade AND e.lookup
    WHERE r.grade >= 0 AND e.gain <> CAST(0 AS DOUBLE)
    GROUP BY r.run_id, r.query_id
),
curves AS (
    SELECT run_id, query_id, ranks, gains,
           list_reduce(list_transform(gains,
                                      lambda g, j: g / log2(CAST(ranks[j] + 1 AS DOUBLE))),
                       lambda acc, x: list_append(acc, acc[-1] + x),
                       [CAST(0 AS DOUBLE)]) AS dcg,
           list_reduce(gains, lambda acc, x: list_append(acc, acc[-1] + x),
                       [CAST(0 AS DOUBLE)]) AS cumulative
    FROM gained
),
joined AS (
    SELECT s.run_id, s.query_id, s.eval_n AS n, s.num_rel,
           coalesce(c.ranks, CAST([] AS INTEGER[])) AS ranks,
           coalesce(c.gains, CAST([] AS DOUBLE[])) AS gains,
           coalesce(c.dcg, [CAST(0 AS DOUBLE)]) AS dcg,
           coalesce(c.cumulative, [CAST(0 AS DOUBLE)]) AS cumulative,
           i.m, i.stop, list_append(i.gains, i.stop) AS ideal_stop, i.idcg, i.total, i.costs
    FROM rh_stats AS s
    JOIN ideal_sums AS i ON i.query_id = s.query_id
    LEFT JOIN curves AS c ON c.run_id = s.run_id AND c.query_id = s.query_id
    WHERE s.level = :rel
),
measured AS (
    SELECT run_id, query_id,
        -- nDCG_gains
        CASE WHEN idcg[m + 1] > CAST(0 AS DOUBLE) THEN dcg[-1] / idcg[m + 1]
             ELSE CAST(0 AS DOUBLE) END AS ndcg,
        -- nDCG_rel
        list_reduce(
            list_transform(list_filter(range(1, len(gains) + 1), lambda j: gains[j] > 0),
                           lambda j: dcg[j + 1] / idcg[least(ranks[j], m) + 1]),
            lambda acc, x: acc + x, CAST(0 AS DOUBLE)) AS rel_sum,
        len(list_filter(gains, lambda g: g > 0)) AS s,
        -- Rndcg points
        list_transform(
            list_filter(range(2, m + 2),
                        lambda p: ideal_stop[p] <> ideal_stop[p - 1]
                                  AND idcg[p] > CAST(0 AS DOUBLE)),
            lambda p: dcg[len(list_filter(ranks, lambda r: r <= least(p - 1, n))) + 1]
                      / idcg[p]) AS points,
        -- G
        list_reduce(
            list_transform(range(1, len(gains) + 1),
                           lambda j: gains[j] / log2(
                               CAST(2 AS DOUBLE)
                               + (costs[least(ranks[j], m) + 1]
                                  + CAST(greatest(ranks[j] - m, 0) AS DOUBLE))
                               - cumulative[j + 1])),
            lambda acc, x: acc + x, CAST(0 AS DOUBLE)) AS g_sum,
        m, n, num_rel, dcg[-1] AS dcg_n, idcg[m + 1] AS idcg_m, total
    FROM joined
),
finished AS (
    -- nDCG_rel's last term is added whatever its sign, as trec_eval does: s > m when a gain
    -- table's quirky sort ends the ideal walk early (gains less than 1 apart compare equal),
    -- and with IDCG(m) = 0 its x / 0 is IEEE's (inf - inf is NaN, which is not > 0)
    SELECT *, rel_sum + (CAST(m - s AS DOUBLE) * dcg_n) / idcg_m AS rel_total,
           n > m + 1 AND idcg_m > CAST(0 AS DOUBLE) AS tail
    FROM measured
)
SELECT
    run_id,
    query_id,
    k.key,
    CASE k.key
        WHEN 'nDCG_gains' THEN ndcg
        WHEN 'nDCG_rel' THEN
            CASE WHEN NOT isnan(rel_total) AND rel_total > CAST(0 AS DOUBLE)
                 THEN rel_total / CAST(m AS DOUBLE)
                 ELSE CAST(0 AS DOUBLE) END
        WHEN 'Rndcg' THEN
            CASE
                WHEN num_rel = 0 THEN CAST(0 AS DOUBLE)
                WHEN len(points) + CASE WHEN tail THEN 1 ELSE 0 END = 0
                    THEN CAST('NaN' AS DOUBLE)
                ELSE list_reduce(
                         CASE WHEN tail THEN list_append(points, dcg_n / idcg_m) ELSE points END,
                         lambda acc, x: acc + x, CAST(0 AS DOUBLE))
                     / CAST(len(points) + CASE WHEN tail THEN 1 ELSE 0 END AS DOUBLE)
            END
        WHEN 'G' THEN
            CASE WHEN total = CAST(0 AS DOUBLE) THEN CAST(0 AS DOUBLE) ELSE g_sum / total END
    END AS value
FROM finished
CROSS JOIN (SELECT unnest(CAST(:names AS VARCHAR[])) AS key) AS k
