-- 0005: run rows no longer store their evaluation rank; evaluations rank the documents they
-- need (sql/ranking.sql), which made ingest about twice as fast on large runs.
-- The view run_ranking gives every row its evaluation rank for SQL users.
--
-- doc_id is stored uncompressed: DuckDB's dictionary+FSST analysis of mostly distinct
-- document ids cost more than half of the time of writing a run, for a file about a third
-- larger. `USING COMPRESSION` is DuckDB syntax (the one non-portable line of the schema).

CREATE TABLE run_rows_0005 (
    run_id    INTEGER NOT NULL,            -- runs.id
    query_id  VARCHAR NOT NULL,
    doc_id    VARCHAR NOT NULL USING COMPRESSION uncompressed,
    rank      INTEGER,                     -- rank column as given (NULL when absent)
    score     DOUBLE NOT NULL              -- as given, or -rank for runs ingested with order 'rank'
);

INSERT INTO run_rows_0005 SELECT run_id, query_id, doc_id, rank, score FROM run_rows;

DROP TABLE run_rows;

ALTER TABLE run_rows_0005 RENAME TO run_rows;

-- position: trec_eval's ranking, score descending, then doc_id descending in byte order.
CREATE VIEW run_ranking AS
SELECT
    run_id, query_id, doc_id, rank, score,
    row_number() OVER (PARTITION BY run_id, query_id ORDER BY score DESC, doc_id DESC) AS position
FROM run_rows;
