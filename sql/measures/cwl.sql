-- The C/W/L measures of cwl_eval (Azzopardi, Thomas & Moffat, SIGIR 2019), as ir_measures'
-- cwl_eval provider runs it: INST, INSQ, BPM, SDCG, NERR8, NERR9, NERR10, NERR11.
--                                                                  not in trec_eval
--   A user reads rank 1, and goes on from rank i to rank i+1 with probability C(i); the
--   measure is the expected rate of gain, sum_i W(i) g_i, W(i) = P(i) / sum_j P(j),
--   P(i) = prod_{j<i} C(j), over cwl_eval's ranking of exactly 1000 ranks (ranks past the
--   run's end gain 0, ranks past 1000 are dropped), whatever the measure's cutoff.
--   The gain of a document judged g is (clip(max(g, 0), min_rel, max_rel) - min_rel) /
--   (max_rel - min_rel), in [0, 1] (ir_measures reads a negative grade as 0, then clips and
--   scales); a document without a judgment line gains 0. G(i) = g_1 + ... + g_i, summed in
--   rank order as cwl_eval's numpy does (BPM compares it with T).
--     INST(T)      C(i) = ((i + 2T - G(i) - 1) / (i + 2T - G(i)))^2   (Moffat et al. 2015)
--     INSQ(T)      C(i) = ((i + 2T - 1) / (i + 2T))^2                  (Moffat et al. 2012)
--     NERR11(T)    C(i) = ((i + 2T - 1) / (i + 2T))^2 * (1 - g_i)     (Azzopardi et al. 2021)
--     NERR10(p)    C(i) = p * (1 - g_i)
--     NERR8@k      C(i) = 1 - g_i for i < k, else 0
--     NERR9@k      C(i) = i / (i + 1) * (1 - g_i) for i < k, else 0
--     SDCG@k       C(i) = log2(i + 1) / log2(i + 2) for i < k, else 0: sum_{i<=k} g_i / log2(i+1)
--                  over sum_{i<=k} 1 / log2(i+1) (DCG scaled by a full ideal, not nDCG)
--     BPM(T)@k     C(i) = 1 while i < k and G(i) < T, else 0: G(m) / m at the first rank m
--                  where k is reached or the gain reaches T (Zhang et al. 2017, static)
--   The state is folded in rank order: [G, P(i), sum g P, sum P].
--   Ranks are the evaluation's (after -M and -J); -l plays no role.
--
-- Rows only for queries with a document of gain > 0 in the top 1000 (others are 0).
--
-- Parameters:
--   :names    VARCHAR[]  the measures: INST, INSQ, BPM, SDCG, NERR8, NERR9, NERR10, NERR11
--   :T        DOUBLE     total desired gain (INST, INSQ, NERR11, BPM); NULL for the others
--   :p        DOUBLE     persistence (NERR10); NULL for the others
--   :cutoff   INTEGER    the cutoff k (BPM, SDCG, NERR8, NERR9); NULL for the others
--   :min_rel  INTEGER    the grade that gains 0
--   :max_rel  INTEGER    the grade that gains 1 (> min_rel)

WITH gains AS (
    SELECT r.run_id, r.query_id, r.rank,
           CAST(least(greatest(greatest(r.grade, 0), CAST(:min_rel AS INTEGER)),
                      CAST(:max_rel AS INTEGER)) - CAST(:min_rel AS INTEGER) AS DOUBLE)
             / CAST(CAST(:max_rel AS INTEGER) - CAST(:min_rel AS INTEGER) AS DOUBLE) AS gain
    FROM rh_ranking AS r
    WHERE r.rank <= 1000
),
gaining AS (
    SELECT DISTINCT run_id, query_id FROM gains WHERE gain > 0
),
positions AS (
    -- past rank k every measure with a cutoff has P(i) = 0: its ranks stop at k
    SELECT q.run_id, q.query_id, i.i, coalesce(g.gain, CAST(0 AS DOUBLE)) AS gain
    FROM gaining AS q
    CROSS JOIN range(1, least(coalesce(CAST(:cutoff AS INTEGER), 1000), 1000) + 1) AS i(i)
    LEFT JOIN gains AS g
      ON g.run_id = q.run_id AND g.query_id = q.query_id AND g.rank = i.i
),
lists AS (
    SELECT run_id, query_id, list([CAST(i AS DOUBLE), gain] ORDER BY i) AS ranks
    FROM positions
    GROUP BY run_id, query_id
),
folded AS (
    SELECT l.run_id, l.query_id, m.name,
           list_reduce(
               l.ranks,
               -- acc = [G(i-1), P(i), sum g P, sum P]; x = [i, g_i]
               lambda acc, x: [
                   acc[1] + x[2],
                   acc[2] * CASE m.name
                       WHEN 'INST' THEN pow((x[1] + 2 * CAST(:T AS DOUBLE) - (acc[1] + x[2]) - 1)
                                            / (x[1] + 2 * CAST(:T AS DOUBLE) - (acc[1] + x[2])), 2)
                       WHEN 'INSQ' THEN pow((x[1] + 2 * CAST(:T AS DOUBLE) - 1)
                                            / (x[1] + 2 * CAST(:T AS DOUBLE)), 2)
                       WHEN 'NERR11' THEN pow((x[1] + 2 * CAST(:T AS DOUBLE) - 1)
                                              / (x[1] + 2 * CAST(:T AS DOUBLE)), 2) * (1 - x[2])
                       WHEN 'NERR10' THEN CAST(:p AS DOUBLE) * (1 - x[2])
                       WHEN 'NERR8' THEN CASE WHEN x[1] < CAST(:cutoff AS INTEGER)
                                              THEN 1 - x[2] ELSE 0 END
                       WHEN 'NERR9' THEN CASE WHEN x[1] < CAST(:cutoff AS INTEGER)
                                              THEN x[1] / (x[1] + 1) * (1 - x[2]) ELSE 0 END
                       WHEN 'SDCG' THEN CASE WHEN x[1] < CAST(:cutoff AS INTEGER)
                                             THEN ln(x[1] + 1) / ln(x[1] + 2) ELSE 0 END
                       WHEN 'BPM' THEN CASE WHEN x[1] < CAST(:cutoff AS INTEGER)
                                             AND acc[1] + x[2] < CAST(:T AS DOUBLE)
                                            THEN 1 ELSE 0 END
                   END,
                   acc[3] + x[2] * acc[2],
                   acc[4] + acc[2]
               ],
               [CAST(0 AS DOUBLE), CAST(1 AS DOUBLE), CAST(0 AS DOUBLE), CAST(0 AS DOUBLE)]
           ) AS state
    FROM lists AS l
    CROSS JOIN (SELECT unnest(CAST(:names AS VARCHAR[])) AS name) AS m
)
SELECT run_id, query_id, name AS key, state[3] / state[4] AS value
FROM folded
