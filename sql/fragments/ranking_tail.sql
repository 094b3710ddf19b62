-- The last step of rh_ranking, shared by ranking_sorted.sql and ranking_per_query.sql.
--
-- The end of the statement that builds rh_ranking (see ranking.sql): it reads the query
-- `positioned (run_id, query_id, doc_id, position, grade)` that the including file defines
-- before it, the retrieved documents that have a judgment line at their trec_eval position
-- (score descending, then doc_id descending, in the whole ranking). It applies trec_eval's -M
-- (keep position <= max_rank) and -J (keep grades >= 0, ranks renumbered), then numbers the
-- documents kept: rank, pooled_upto (judgment lines at or above) and judged_upto (grades
-- >= 0 at or above). Inlined rather than a table of its own, since a table between the
-- positions and this step costs 2.4 ms of DL19's 17.
--
-- Parameters:
--   :max_rank     INTEGER  trec_eval -M: keep the top max_rank documents; NULL keeps all
--   :judged_only  BOOLEAN  trec_eval -J: keep only documents judged >= 0, ranks renumbered

SELECT
    run_id, query_id, doc_id, grade,
    CASE WHEN CAST(:judged_only AS BOOLEAN) THEN row_number() OVER w ELSE position END AS rank,
    row_number() OVER w AS pooled_upto,
    count(*) FILTER (WHERE grade >= 0) OVER w AS judged_upto
FROM positioned
WHERE (CAST(:max_rank AS INTEGER) IS NULL OR position <= CAST(:max_rank AS INTEGER))
  AND (NOT CAST(:judged_only AS BOOLEAN) OR grade >= 0)
WINDOW w AS (PARTITION BY run_id, query_id ORDER BY position ROWS UNBOUNDED PRECEDING)
