-- The depth-k pool of some runs, what a qrels set already judges left out, in the order to
-- judge it, and the budget's cut (rankhouse pool; rankhouse.judgments.pools).
--
-- Each run is ranked as the shared ranking ranks it (score descending, then doc_id
-- descending in byte order, trec_eval's rule: the fragment below, which ranking_sorted.sql
-- includes too). A query's pool is the
-- union of every run's top :depth documents (trectools' "topX" pool). For each pooled
-- document:
--   best_rank  its best rank in any run (within the depth);
--   num_runs   how many runs have it within the depth (run_ids: which);
--   rrf        its reciprocal-rank fusion over the runs' whole rankings (Cormack, Clarke and
--              Buettcher, SIGIR 2009): the sum over the runs that retrieved it of
--              1 / (:rrf_k + rank), ranks from 1; a run that did not retrieve it adds nothing.
-- The documents judged for the query in :qrels_id (any grade, negative ones too) are left
-- out; the others get priority 1, 2, ... within their query:
--   order 'depth': best_rank, then num_runs descending, then doc_id (byte order);
--   order 'rrf':   rrf descending (rounded to 12 decimals, so that sums of the same terms
--                  added in another order tie), then as 'depth'.
-- Then the budget: a query keeps its first :budget_per_query; of those, :budget in total are
-- taken by priority across queries (every query's first, then every query's second, ...;
-- within one priority as the order says, then by query_id), so that a total budget is spread
-- over the queries instead of spent on the first ones.
--
-- Fragments:
--   {{run_order}}  fragments/run_order.sql  every retrieved document's position
--
-- Table built (temporary, per connection):
--   rh_pool (query_id, doc_id, best_rank, num_runs, run_ids, rrf, judged, priority, selected)
--           every pooled document; priority NULL and selected false for a judged one.
--
-- Parameters:
--   :run_ids           INTEGER[]  the runs pooled (rows in run_rows)
--   :qrels_id          INTEGER    the judgments left out; NULL leaves nothing out
--   :depth             INTEGER    each run's top depth documents are pooled (>= 1)
--   :rrf_k             DOUBLE     RRF's constant k (60 in the paper)
--   :by_rrf            BOOLEAN    order by rrf first ('rrf'), else by best_rank ('depth')
--   :budget_per_query  BIGINT     at most this many documents a query; NULL: no limit
--   :budget            BIGINT     at most this many documents in all; NULL: no limit

CREATE OR REPLACE TEMP TABLE rh_pool AS
WITH ranked AS (
    SELECT run_id, query_id, doc_id, position AS rank FROM ({{run_order}})
),
pooled AS (
    SELECT query_id, doc_id,
           min(rank) FILTER (WHERE rank <= :depth) AS best_rank,
           count(*) FILTER (WHERE rank <= :depth) AS num_runs,
           list(run_id ORDER BY run_id) FILTER (WHERE rank <= :depth) AS run_ids,
           sum(1.0 / (CAST(:rrf_k AS DOUBLE) + rank)) AS rrf
    FROM ranked
    GROUP BY query_id, doc_id
    HAVING count(*) FILTER (WHERE rank <= :depth) > 0
),
judged AS (
    SELECT DISTINCT query_id, doc_id FROM judgments WHERE qrels_id = :qrels_id
),
marked AS (
    SELECT p.*, j.doc_id IS NOT NULL AS judged,
           CASE WHEN CAST(:by_rrf AS BOOLEAN) THEN -round(p.rrf, 12) ELSE 0 END AS first_key
    FROM pooled AS p
    LEFT JOIN judged AS j ON j.query_id = p.query_id AND j.doc_id = p.doc_id
),
ordered AS (
    SELECT *,
           row_number() OVER (
               PARTITION BY query_id ORDER BY first_key, best_rank, num_runs DESC, doc_id
           ) AS priority
    FROM marked
    WHERE NOT judged
),
kept AS (
    SELECT query_id, doc_id,
           row_number() OVER (
               ORDER BY priority, first_key, best_rank, num_runs DESC, query_id, doc_id
           ) AS taken
    FROM ordered
    WHERE priority <= coalesce(CAST(:budget_per_query AS BIGINT), priority)
)
SELECT m.query_id, m.doc_id, m.best_rank, m.num_runs, m.run_ids, m.rrf, m.judged,
       o.priority,
       coalesce(k.taken <= coalesce(CAST(:budget AS BIGINT), k.taken), false) AS selected
FROM marked AS m
LEFT JOIN ordered AS o ON o.query_id = m.query_id AND o.doc_id = m.doc_id
LEFT JOIN kept AS k ON k.query_id = m.query_id AND k.doc_id = m.doc_id;
