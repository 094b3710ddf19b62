-- DCG and DCG@k: discounted cumulative gain, the numerator of nDCG.       not in trec_eval
--
--   DCG@k = sum over ranks i <= k with grade > 0 of gain(grade) / log2(i + 1)
--   (Jarvelin & Kekalainen 2002). The same gains, discount and ranking as nDCG@k
--   (sql/measures/ndcg.sql), not normalised: a query's DCG grows with its number of
--   relevant documents and their grades. gain: dcg = 'log2' (default): gain = grade (linear
--   gain); dcg = 'exp-log2': gain = 2^grade - 1 (Burges et al. 2005). Negative grades and
--   documents absent from the qrels gain 0; the relevance level plays no role. No cutoff:
--   k = n. Sums in rank order, as nDCG's.
--
-- Rows only for queries with a document of grade > 0 retrieved (within k); others are 0.
--
-- Fragments:
--   {{gain}}  fragments/gain.sql  the gain of a grade under :dcg
--
-- Parameters:
--   :dcg      VARCHAR    'log2' or 'exp-log2'
--   :cutoffs  INTEGER[]  the cutoffs k; a NULL element means no cutoff

WITH cutoffs AS (
    SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS cutoff
),
gained AS (
    SELECT run_id, query_id, rank, {{gain}} AS gain
    FROM rh_ranking
    WHERE grade > 0
)
SELECT g.run_id, g.query_id, c.cutoff AS key,
       list_reduce(list(g.gain / log2(CAST(g.rank + 1 AS DOUBLE)) ORDER BY g.rank),
                   lambda acc, x: acc + x) AS value
FROM gained AS g
JOIN cutoffs AS c ON c.cutoff IS NULL OR g.rank <= c.cutoff
GROUP BY g.run_id, g.query_id, c.cutoff
