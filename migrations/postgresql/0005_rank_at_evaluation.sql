-- 0005 (PostgreSQL): run rows no longer store their evaluation rank, as
-- ../0005_rank_at_evaluation.sql (without DuckDB's compression clause).

ALTER TABLE run_rows DROP COLUMN position;

-- position: trec_eval's ranking, score descending, then doc_id descending in byte order.
CREATE VIEW run_ranking AS
SELECT
    run_id, query_id, doc_id, rank, score,
    row_number() OVER (PARTITION BY run_id, query_id ORDER BY score DESC, doc_id DESC) AS position
FROM run_rows;
