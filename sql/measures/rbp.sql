-- RBP: rank-biased precision as ir_measures computes it.          not in trec_eval
--
--   Graded (no rel; ir_measures' trectools provider):
--     RBP@k = sum over the top k documents i with grade g_i > 0 of g_i * w(i), where w(i) is
--     the mean of (1 - p) * p^(j-1) over the ranks j of i's tie group (the documents of the
--     top k with i's score). Without a tie, w(i) = (1 - p) * p^(i-1).
--   Binary (rel given; ir_measures' cwl_eval provider):
--     RBP(rel=r) = (1 - p) / (1 - p^1000) * sum over ranks i <= min(k, 1000) with
--     max(g_i, 0) >= r of p^(i-1). cwl_eval scores the top 1000 ranks with weights that sum
--     to 1 over them (1/1000 each when p = 1); ties are not averaged.
--   trec_eval's rbp (gains divided by the query's highest grade) is RBP_gains (rbp_gains.sql).
--   Ranks are the evaluation's (after -M and -J): a tie group is made of the documents kept.
--   -l plays no role.
--
-- Rows only for queries with a gaining document in the top k (others are 0).
--
-- Parameters:
--   :cutoffs  INTEGER[]  the cutoffs k; a NULL element means no cutoff
--   :p        DOUBLE     persistence
--   :rel      INTEGER    binary: the lowest grade that gains 1; NULL: graded

WITH gaining AS (
    SELECT r.run_id, r.query_id, r.doc_id, r.rank,
           CASE WHEN CAST(:rel AS INTEGER) IS NULL THEN CAST(r.grade AS DOUBLE)
                ELSE CAST(1 AS DOUBLE) END AS gain
    FROM rh_ranking AS r
    WHERE CASE WHEN CAST(:rel AS INTEGER) IS NULL THEN r.grade > 0
               -- cwl_eval reads a negative grade as 0, so RBP(rel=0) counts it
               ELSE greatest(r.grade, 0) >= CAST(:rel AS INTEGER) AND r.rank <= 1000 END
),
scored AS (
    -- graded: each gaining document's score
    SELECT g.run_id, g.query_id, g.doc_id, g.rank, rr.score
    FROM gaining AS g
    JOIN run_rows AS rr
      ON rr.run_id = g.run_id AND rr.query_id = g.query_id AND rr.doc_id = g.doc_id
    WHERE CAST(:rel AS INTEGER) IS NULL
),
spans AS (
    -- a tie group's first and last rank: trec_eval's order puts the documents of one score
    -- together, by doc_id descending. The group is the documents the evaluation keeps (-M
    -- is applied below; under -J the judged ones, those rh_ranking holds).
    SELECT s.run_id, s.query_id, s.doc_id,
           s.rank - count(*) FILTER (WHERE t.doc_id > s.doc_id) AS first,
           s.rank + count(*) FILTER (WHERE t.doc_id < s.doc_id) AS last
    FROM scored AS s
    JOIN run_rows AS t
      ON t.run_id = s.run_id AND t.query_id = s.query_id AND t.score = s.score
    WHERE NOT (SELECT judged_only FROM rh_request)
       OR EXISTS (SELECT 1 FROM rh_ranking AS r
                  WHERE r.run_id = t.run_id AND r.query_id = t.query_id
                    AND r.doc_id = t.doc_id)
    GROUP BY s.run_id, s.query_id, s.doc_id, s.rank
),
cut AS (
    SELECT g.run_id, g.query_id, c.cutoff, g.rank, g.gain, s.first,
           least(s.last, coalesce(c.cutoff, s.last),
                 coalesce((SELECT max_rank FROM rh_request), s.last)) AS last
    FROM gaining AS g
    JOIN (SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff) AS c
      ON c.cutoff IS NULL OR g.rank <= c.cutoff
    LEFT JOIN spans AS s
      ON s.run_id = g.run_id AND s.query_id = g.query_id AND s.doc_id = g.doc_id
),
weighted AS (
    SELECT run_id, query_id, cutoff, rank,
           gain * CASE
               WHEN CAST(:rel AS INTEGER) IS NOT NULL AND CAST(:p AS DOUBLE) = 1
                   THEN CAST(1 AS DOUBLE) / 1000
               WHEN CAST(:rel AS INTEGER) IS NOT NULL
                   THEN (1 - CAST(:p AS DOUBLE)) * pow(CAST(:p AS DOUBLE), rank - 1)
                        / (1 - pow(CAST(:p AS DOUBLE), 1000))
               WHEN first = last
                   THEN (1 - CAST(:p AS DOUBLE)) * pow(CAST(:p AS DOUBLE), rank - 1)
               -- the mean of (1 - p) p^(j-1) over j = first..last
               ELSE (pow(CAST(:p AS DOUBLE), first - 1) - pow(CAST(:p AS DOUBLE), last))
                    / (last - first + 1)
           END AS value
    FROM cut
)
SELECT run_id, query_id, cutoff AS key,
       list_reduce(list(value ORDER BY rank), lambda acc, x: acc + x) AS value
FROM weighted
GROUP BY run_id, query_id, cutoff
