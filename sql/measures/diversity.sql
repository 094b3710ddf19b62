-- Diversity: intent-aware measures over a qrels set with intents, as ndeval computes them.
--                                    not in trec_eval; ndeval's names in brackets
--
-- A document d is relevant to intent s when its grade for s is >= rel (judgment_intents,
-- migration 0018); S = the query's intents with a relevant document (ndeval ignores an intent
-- no document is relevant to), R_s = the documents relevant to s. At rank i of the run, c_s(i)
-- = the ranks above i relevant to s, and the gain
--   G(i) = sum over the intents s of d_i of (1 - alpha)^c_s(i)   (0 for a document of no intent)
--
--   alpha_nDCG@k [alpha-nDCG@k] = sum_{i<=k} G(i)/log2(i+1) / the same sum over the ideal
--       ranking: ndeval's greedy one, each rank the document of the highest gain given those
--       above it, a tie to the greatest document id (byte order); 0 when the run's sum is 0
--   alpha_DCG@k [alpha-DCG@k] = sum_{i<=k} G(i)/log2(i+1) / sum_{i<=k} S (1 - alpha)^(i-1)
--       / log2(i+1), ndeval's collection-independent ("ideal ideal") normalisation
--   ERR_IA@k [ERR-IA@k] = sum_{i<=k} G(i)/i / sum_{i<=k} S (1 - alpha)^(i-1)/i, the same
--       normalisation, alpha 0.5. At k = 1 ndeval divides neither (its normalisation starts at
--       rank 2): ERR_IA@1 = alpha_DCG@1 = G(1), up to S
--   nERR_IA@k [nERR-IA@k] = sum_{i<=k} G(i)/i / the same sum over the greedy ideal ranking
--   NRBP [NRBP]  = (1 - (1 - alpha) beta) / S * sum over all ranks i of G(i) beta^(i-1)
--   nNRBP [nNRBP] = NRBP / the NRBP of the greedy ideal ranking of every document relevant to
--       an intent (ndeval's whole ideal list, not cut); 0 when the run's NRBP is 0
--   StRecall@k [strec@k] = the intents with a relevant document in the top k / S
--   P_IA@k [P-IA@k] = sum_{i<=k} (intents d_i is relevant to) / (k S)
--   AP_IA [MAP-IA] = 1/S sum over intents s of 1/R_s sum over ranks i relevant to s of
--       (c_s(i) + 1) / i
--
-- Every value is 0 for a query with S = 0. Ranks are the evaluation's (trec_eval's order,
-- ndeval's -traditional; after -M and -J). Reference: ndeval 4.5 (TREC Web track), as
-- ir_measures' pyndeval provider runs it (docs/measures.md, Diversity, for how they differ).
--
-- Rows only for queries with a relevant document retrieved; key = the measure's name. The
-- recursive query runs only when alpha_nDCG, nERR_IA or nNRBP is asked (k steps, each ranking
-- the query's relevant documents not chosen yet; for nNRBP, with no k, until none is left).
--
-- Parameters:
--   :qrels_id  INTEGER    the qrels set (its rows in judgment_intents)
--   :rel       INTEGER    relevance level: a grade >= rel is relevant to its intent
--   :names     VARCHAR[]  the measures requested, e.g. ['ERR_IA', 'StRecall']
--   :cutoff    INTEGER    the rank cutoff k (NULL for NRBP, nNRBP and AP_IA)
--   :alpha     DOUBLE     redundancy intolerance (ndeval's 0.5 for ERR_IA, P_IA, StRecall)
--   :beta      DOUBLE     patience of NRBP and nNRBP (ndeval's 0.5; the others ignore it)

WITH RECURSIVE
relevant AS (
    SELECT query_id, intent, doc_id
    FROM judgment_intents
    WHERE qrels_id = CAST(:qrels_id AS INTEGER) AND grade >= CAST(:rel AS INTEGER)
),
numbered AS (
    -- each intent with a relevant document, numbered 1..S within its query; R_s
    SELECT query_id, intent, count(*) AS r,
           row_number() OVER (PARTITION BY query_id ORDER BY intent) AS i,
           count(*) OVER (PARTITION BY query_id) AS s
    FROM relevant
    GROUP BY query_id, intent
),
hits AS (
    -- each retrieved document and intent it is relevant to; c = c_s(rank)
    SELECT k.run_id, k.query_id, k.rank, n.r, n.s,
           row_number() OVER (PARTITION BY k.run_id, k.query_id, j.intent ORDER BY k.rank)
             - 1 AS c
    FROM rh_ranking AS k
    JOIN relevant AS j ON j.query_id = k.query_id AND j.doc_id = k.doc_id
    JOIN numbered AS n ON n.query_id = j.query_id AND n.intent = j.intent
),
ranks AS (
    SELECT run_id, query_id, rank, any_value(s) AS s,
           sum(pow(1 - CAST(:alpha AS DOUBLE), c)) AS g,
           count(*) AS intents,
           count(*) FILTER (WHERE c = 0) AS new,
           sum((c + 1) / (CAST(rank AS DOUBLE) * r)) AS precisions
    FROM hits
    GROUP BY run_id, query_id, rank
),
docs AS (
    -- the ideal ranking's candidates: the documents relevant to an intent, with theirs
    SELECT j.query_id, j.doc_id, list(n.i) AS its
    FROM relevant AS j
    JOIN numbered AS n ON n.query_id = j.query_id AND n.intent = j.intent
    WHERE list_has_any(CAST(:names AS VARCHAR[]), ['alpha_nDCG', 'nERR_IA', 'nNRBP'])
    GROUP BY j.query_id, j.doc_id
),
ideal(query_id, step, chosen, counts, g) AS (
    -- ndeval's greedy ideal, to rank k (no k: every relevant document): each step adds the document of the highest gain
    -- given the documents chosen (counts[s] of them relevant to intent s), a tie to the
    -- greatest document id; the gains summed smallest first, so that equal gains are equal
    SELECT query_id, 0, CAST([] AS VARCHAR[]), list_transform(range(any_value(s)), lambda x: 0),
           CAST(0 AS DOUBLE)
    FROM numbered
    WHERE list_has_any(CAST(:names AS VARCHAR[]), ['alpha_nDCG', 'nERR_IA', 'nNRBP'])
    GROUP BY query_id
    UNION ALL
    SELECT query_id, step + 1, list_append(chosen, doc_id),
           list_transform(range(1, len(counts) + 1),
                          lambda x: counts[x] + CAST(list_contains(its, x) AS INTEGER)),
           gain
    FROM (
        -- (named gain, not g: the window would read ideal's own g)
        SELECT i.query_id, i.step, i.chosen, i.counts, d.doc_id, d.its,
               list_sum(list_sort(list_transform(
                   d.its, lambda x: pow(1 - CAST(:alpha AS DOUBLE), i.counts[x])))) AS gain
        FROM ideal AS i
        JOIN docs AS d ON d.query_id = i.query_id
        WHERE coalesce(i.step < CAST(:cutoff AS INTEGER), TRUE)
          AND NOT list_contains(i.chosen, d.doc_id)
        QUALIFY row_number() OVER (PARTITION BY i.query_id ORDER BY gain DESC, d.doc_id DESC) = 1
    )
),
ideal_sums AS (
    SELECT query_id, sum(g / log2(step + 1)) AS dcg, sum(g / step) AS err,
           sum(g * pow(CAST(:beta AS DOUBLE), step - 1)) AS nrbp
    FROM ideal
    WHERE step > 0
    GROUP BY query_id
),
top AS (
    SELECT run_id, query_id, any_value(s) AS s,
           sum(g / log2(rank + 1)) AS dcg,
           sum(g / rank) AS err,
           sum(intents) AS intents,
           sum(new) AS new
    FROM ranks
    WHERE rank <= CAST(:cutoff AS INTEGER)
    GROUP BY run_id, query_id
),
whole AS (
    SELECT run_id, query_id, any_value(s) AS s,
           sum(g * pow(CAST(:beta AS DOUBLE), rank - 1)) AS nrbp,
           sum(precisions) AS ap
    FROM ranks
    GROUP BY run_id, query_id
),
ideal_ideal AS (
    -- ndeval's "ideal ideal" over S: sum_{i<=k} (1 - alpha)^(i-1) times 1/log2(i+1) (DCG) or
    -- 1/i (ERR); NULL (not divided) at k = 1
    SELECT CASE WHEN CAST(:cutoff AS INTEGER) = 1 THEN NULL
                ELSE sum(pow(1 - CAST(:alpha AS DOUBLE), i - 1) / log2(i + 1)) END AS dcg,
           CASE WHEN CAST(:cutoff AS INTEGER) = 1 THEN NULL
                ELSE sum(pow(1 - CAST(:alpha AS DOUBLE), i - 1) / i) END AS err
    FROM range(1, coalesce(CAST(:cutoff AS INTEGER), 0) + 1) AS t(i)
)
SELECT t.run_id, t.query_id, 'alpha_nDCG' AS key, t.dcg / d.dcg AS value
FROM top AS t
JOIN ideal_sums AS d ON d.query_id = t.query_id
WHERE list_contains(CAST(:names AS VARCHAR[]), 'alpha_nDCG') AND t.dcg > 0
UNION ALL
SELECT t.run_id, t.query_id, 'nERR_IA', t.err / d.err
FROM top AS t
JOIN ideal_sums AS d ON d.query_id = t.query_id
WHERE list_contains(CAST(:names AS VARCHAR[]), 'nERR_IA') AND t.err > 0
UNION ALL
SELECT t.run_id, t.query_id, 'alpha_DCG', t.dcg / coalesce(t.s * e.dcg, 1)
FROM top AS t, ideal_ideal AS e
WHERE list_contains(CAST(:names AS VARCHAR[]), 'alpha_DCG')
UNION ALL
SELECT t.run_id, t.query_id, 'ERR_IA', t.err / coalesce(t.s * e.err, 1)
FROM top AS t, ideal_ideal AS e
WHERE list_contains(CAST(:names AS VARCHAR[]), 'ERR_IA')
UNION ALL
SELECT run_id, query_id, 'StRecall', CAST(new AS DOUBLE) / s
FROM top
WHERE list_contains(CAST(:names AS VARCHAR[]), 'StRecall')
UNION ALL
SELECT run_id, query_id, 'P_IA', CAST(intents AS DOUBLE) / (CAST(:cutoff AS INTEGER) * s)
FROM top
WHERE list_contains(CAST(:names AS VARCHAR[]), 'P_IA')
UNION ALL
SELECT run_id, query_id, 'NRBP',
       (1 - (1 - CAST(:alpha AS DOUBLE)) * CAST(:beta AS DOUBLE)) / s * nrbp
FROM whole
WHERE list_contains(CAST(:names AS VARCHAR[]), 'NRBP')
UNION ALL
SELECT w.run_id, w.query_id, 'nNRBP', w.nrbp / d.nrbp
FROM whole AS w
JOIN ideal_sums AS d ON d.query_id = w.query_id
WHERE list_contains(CAST(:names AS VARCHAR[]), 'nNRBP') AND w.nrbp > 0
UNION ALL
SELECT run_id, query_id, 'AP_IA', ap / s
FROM whole
WHERE list_contains(CAST(:names AS VARCHAR[]), 'AP_IA')
