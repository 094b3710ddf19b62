-- The one shared ranking: every measure file reads the temporary tables built here.
--
-- The engine first builds rh_ranking, the ranks of the retrieved documents that have a
-- judgment line (the others only occupy ranks), with one of two files that give the same
-- table: ranking_sorted.sql sorts every query's documents (most queries judged deeply, as
-- TREC's pools are), ranking_per_query.sql ranks a query with few judged documents by
-- counting the documents above each one (MS MARCO's one judgment a query), without a sort.
-- Both apply trec_eval's -M (keep rank <= max_rank) and -J (keep judged documents,
-- renumbered). This file then computes the cutoff-independent statistics.
--
-- Tables built (temporary, per connection; replaced at each request; on a database that is the
-- engine's alone they are built as ordinary tables, so that a second connection reads them):
--   rh_ranking  (run_id, query_id, doc_id, rank, grade, pooled_upto, judged_upto), built
--               before this file: the retrieved documents that have a judgment line (any
--               grade, negatives too). rank = evaluation rank (after -M/-J); pooled_upto =
--               judged lines at or above (negative grades included); judged_upto = grades
--               >= 0 at or above.
--   rh_request  (run_ids, qrels_id, max_rank, judged_only, skip_missing): what they rank
--   rh_queries  (run_id, query_id, num_ret, eval_n, in_run)
--               one row per run and evaluated query: every query of the qrels set (only those
--               the run answered when :skip_missing). num_ret = n; in_run = the run has lines
--               for the query; eval_n = the n trec_eval's formulas see (its -c dummy ranking
--               of one unjudged document for a query the run did not answer, 0 under -J/-M0).
--   rh_stats    (level, run_id, query_id, num_ret, eval_n, in_run, num_rel, num_nonrel,
--               num_rel_ret), one row per relevance level and rh_queries row:
--               num_rel = R (grade >= level), num_nonrel = judged below the level (0 <= grade
--               < level, retrieved or not), num_rel_ret = relevant retrieved.
--   rh_relevant (level, run_id, query_id, rank, k, grade, pooled_upto, judged_upto)
--               the relevant retrieved documents at each level; k = k(rank), the number of
--               relevant documents at or above (so k / rank is the precision there).
--
-- Parameters:
--   :run_ids       INTEGER[]  the runs evaluated
--   :qrels_id      INTEGER    the qrels set
--   :max_rank      INTEGER    trec_eval -M: keep the top max_rank documents; NULL keeps all
--   :judged_only   BOOLEAN    trec_eval -J: keep only documents judged >= 0, ranks renumbered
--   :skip_missing  BOOLEAN    evaluate only queries the run answered (else all qrels queries)
--   :levels        INTEGER[]  the relevance levels the request needs (each >= 0)

CREATE OR REPLACE TEMP TABLE rh_request AS
SELECT CAST(:run_ids AS INTEGER[]) AS run_ids, CAST(:qrels_id AS INTEGER) AS qrels_id,
       CAST(:max_rank AS INTEGER) AS max_rank, CAST(:judged_only AS BOOLEAN) AS judged_only,
       CAST(:skip_missing AS BOOLEAN) AS skip_missing;

CREATE OR REPLACE TEMP TABLE rh_queries AS
WITH qrels_queries AS (
    SELECT DISTINCT query_id FROM judgments WHERE qrels_id = :qrels_id
),
runs AS (
    SELECT unnest(CAST(:run_ids AS INTEGER[])) AS run_id
),
answered AS (
    SELECT run_id, query_id, count(*) AS n
    FROM run_rows
    WHERE list_contains(CAST(:run_ids AS INTEGER[]), run_id)
    GROUP BY run_id, query_id
),
judged AS (
    SELECT run_id, query_id, count(*) AS n FROM rh_ranking WHERE grade >= 0 GROUP BY ALL
)
SELECT
    runs.run_id,
    q.query_id,
    CASE
        WHEN answered.n IS NULL THEN 0
        WHEN CAST(:judged_only AS BOOLEAN) THEN coalesce(judged.n, 0)
        ELSE least(answered.n, coalesce(CAST(:max_rank AS INTEGER), answered.n))
    END AS num_ret,
    CASE
        WHEN answered.n IS NOT NULL THEN num_ret
        WHEN CAST(:judged_only AS BOOLEAN) OR CAST(:max_rank AS INTEGER) = 0 THEN 0
        ELSE 1
    END AS eval_n,
    answered.n IS NOT NULL AS in_run
FROM runs
CROSS JOIN qrels_queries AS q
LEFT JOIN answered ON answered.run_id = runs.run_id AND answered.query_id = q.query_id
LEFT JOIN judged ON judged.run_id = runs.run_id AND judged.query_id = q.query_id
WHERE answered.n IS NOT NULL OR NOT CAST(:skip_missing AS BOOLEAN);

CREATE OR REPLACE TEMP TABLE rh_relevant AS
SELECT
    l.level, r.run_id, r.query_id, r.rank, r.grade, r.pooled_upto, r.judged_upto,
    row_number() OVER (PARTITION BY l.level, r.run_id, r.query_id ORDER BY r.rank) AS k
FROM rh_ranking AS r
JOIN (SELECT unnest(CAST(:levels AS INTEGER[])) AS level) AS l ON r.grade >= l.level;

CREATE OR REPLACE TEMP TABLE rh_stats AS
WITH levels AS (
    SELECT unnest(CAST(:levels AS INTEGER[])) AS level
),
judged AS (
    SELECT l.level, j.query_id,
           count(*) FILTER (WHERE j.grade >= l.level) AS num_rel,
           count(*) FILTER (WHERE j.grade >= 0 AND j.grade < l.level) AS num_nonrel
    FROM judgments AS j CROSS JOIN levels AS l
    WHERE j.qrels_id = :qrels_id
    GROUP BY l.level, j.query_id
),
retrieved AS (
    SELECT level, run_id, query_id, count(*) AS num_rel_ret FROM rh_relevant GROUP BY ALL
)
SELECT
    l.level, q.run_id, q.query_id, q.num_ret, q.eval_n, q.in_run,
    coalesce(judged.num_rel, 0) AS num_rel,
    coalesce(judged.num_nonrel, 0) AS num_nonrel,
    coalesce(retrieved.num_rel_ret, 0) AS num_rel_ret
FROM rh_queries AS q
CROSS JOIN levels AS l
LEFT JOIN judged ON judged.level = l.level AND judged.query_id = q.query_id
LEFT JOIN retrieved
  ON retrieved.level = l.level AND retrieved.run_id = q.run_id AND retrieved.query_id = q.query_id;
