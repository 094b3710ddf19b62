-- Every retrieved document of the runs at its trec_eval position: score descending, then
-- doc_id descending in byte order, numbered from 1 in each run's query. Where the order is
-- written: ranking_sorted.sql ranks the runs the measures read by it (ranking_per_query.sql
-- counts the same positions without a sort), pool.sql the runs of a pool.
--
-- Parameters:
--   :run_ids  INTEGER[]  the runs ranked

SELECT run_id, query_id, doc_id,
       row_number() OVER (
           PARTITION BY run_id, query_id ORDER BY score DESC, doc_id DESC
       ) AS position
FROM run_rows
WHERE list_contains(CAST(:run_ids AS INTEGER[]), run_id)
