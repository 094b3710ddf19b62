-- relstring: the judgments of the top documents as a string.        trec_eval relstring_L
--
--   One character per document of the first min(length, n) of the ranking (after -M, -J):
--   the grade 0-9 as a digit, '>' above 9, '.' for a negative grade (pooled, unjudged), '-'
--   for a document not in the qrels. Text, not a number, so it is no measure of the
--   registry: ``rankhouse trec-eval`` prints it per query. Queries of the qrels set the run
--   has no row for get no row here.
--
-- Parameters:
--   :run_id       INTEGER  the stored run
--   :qrels_id     INTEGER  the qrels set
--   :max_rank     INTEGER  trec_eval -M (NULL: all)
--   :judged_only  BOOLEAN  trec_eval -J
--   :length       INTEGER  the number of documents shown

WITH topics AS (
    SELECT DISTINCT query_id FROM judgments WHERE qrels_id = :qrels_id
),
kept AS (
    SELECT rr.query_id, rr.position, j.grade
    FROM run_rows AS rr
    JOIN topics AS t ON t.query_id = rr.query_id
    LEFT JOIN judgments AS j
      ON j.qrels_id = :qrels_id AND j.query_id = rr.query_id AND j.doc_id = rr.doc_id
    WHERE rr.run_id = :run_id
      AND (CAST(:max_rank AS INTEGER) IS NULL OR rr.position <= CAST(:max_rank AS INTEGER))
      AND (NOT CAST(:judged_only AS BOOLEAN) OR j.grade >= 0)
      AND (CAST(:judged_only AS BOOLEAN) OR rr.position <= CAST(:length AS INTEGER))
),
ranked AS (
    SELECT query_id, grade, row_number() OVER (PARTITION BY query_id ORDER BY position) AS rank
    FROM kept
)
SELECT
    query_id,
    string_agg(
        CASE WHEN grade IS NULL THEN '-'
             WHEN grade < 0 THEN '.'
             WHEN grade > 9 THEN '>'
             ELSE CAST(grade AS VARCHAR) END,
        '' ORDER BY rank
    ) AS relstring
FROM ranked
WHERE rank <= CAST(:length AS INTEGER)
GROUP BY query_id
