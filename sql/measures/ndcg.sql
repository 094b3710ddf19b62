-- nDCG and nDCG@k: normalised discounted cumulative gain.   trec_eval ndcg, ndcg_cut_k
--
--   DCG@k  = sum over ranks i <= k with grade > 0 of gain(grade) / log2(i + 1)
--   IDCG@k = the same over the query's judged documents with grade > 0, sorted by grade
--            descending (the ideal ranking over ALL judged documents, not only retrieved)
--   nDCG@k = DCG@k / IDCG@k, 0 when nothing with grade > 0 is retrieved. No cutoff: k = n.
--   gain: dcg = 'log2' (default): gain = grade (Jarvelin & Kekalainen 2002, linear gain,
--   trec_eval); dcg = 'exp-log2': gain = 2^grade - 1 (Burges et al. 2005).
--   Negative grades and documents absent from the qrels gain 0. The relevance level plays
--   no role. Sums in rank order, as trec_eval.
--
-- Rows only for queries with a document of grade > 0 retrieved (within k).
--
-- Fragments:
--   {{gain}}  fragments/gain.sql  the gain of a grade under :dcg
--
-- Parameters:
--   :qrels_id  INTEGER    the qrels set (for the ideal ranking)
--   :dcg       VARCHAR    'log2' or 'exp-log2'
--   :cutoffs   INTEGER[]  the cutoffs k; a NULL element means no cutoff

WITH cutoffs AS (
    SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff
),
gained AS (
    SELECT run_id, query_id, rank, {{gain}} AS gain
    FROM rh_ranking
    WHERE grade > 0
),
dcg AS (
    SELECT g.run_id, g.query_id, c.cutoff,
           list_reduce(list(g.gain / log2(CAST(g.rank + 1 AS DOUBLE)) ORDER BY g.rank),
                       lambda acc, x: acc + x) AS dcg
    FROM gained AS g
    JOIN cutoffs AS c ON c.cutoff IS NULL OR g.rank <= c.cutoff
    GROUP BY g.run_id, g.query_id, c.cutoff
),
ideal AS (
    SELECT query_id,
           list({{gain}} ORDER BY grade DESC) AS gains
    FROM judgments
    WHERE qrels_id = :qrels_id AND grade > 0
      AND query_id IN (SELECT DISTINCT query_id FROM gained)
    GROUP BY query_id
),
idcg AS (
    -- position p of the ideal ranking is the gain's place in the list (1-based)
    SELECT i.query_id, c.cutoff,
           list_reduce(list_transform(CASE WHEN c.cutoff IS NULL THEN i.gains
                                           ELSE i.gains[1:c.cutoff] END,
                                      lambda g, p: g / log2(CAST(p + 1 AS DOUBLE))),
                       lambda acc, x: acc + x) AS idcg
    FROM ideal AS i
    JOIN cutoffs AS c ON c.cutoff IS NULL OR c.cutoff >= 1
)
SELECT d.run_id, d.query_id, d.cutoff AS key, d.dcg / i.idcg AS value
FROM dcg AS d
JOIN idcg AS i ON i.query_id = d.query_id AND i.cutoff IS NOT DISTINCT FROM d.cutoff
