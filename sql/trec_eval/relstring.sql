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
--   :judged_only  BOOLEAN  trec_eval -J
--   :length       INTEGER  the number of documents shown
--   :depth        INTEGER  how deep each ranking is read: min(length, -M), or -M under -J
--                          (the judged ones among the top -M); NULL under -J without -M

WITH topics AS (
    SELECT DISTINCT query_id FROM judgments WHERE qrels_id = :qrels_id
),
-- The top `depth` of each query without sorting the run: the depth-th highest score of a
-- query bounds the candidates (ties with it included), and only those are ranked. DuckDB's
-- max(x, n) takes n < 1,000,000: deeper, every row of the query is a candidate.
thresholds AS (
    SELECT rr.query_id,
           CASE WHEN CAST(:depth AS INTEGER) >= 1000000 THEN CAST('-inf' AS DOUBLE)
                ELSE list_min(max(rr.score, least(greatest(coalesce(CAST(:depth AS INTEGER), 1),
                                                            1), 999999))) END AS lowest
    FROM run_rows AS rr
    JOIN topics AS t ON t.query_id = rr.query_id
    WHERE rr.run_id = :run_id AND CAST(:depth AS INTEGER) > 0
    GROUP BY rr.query_id
),
top AS (
    SELECT query_id, doc_id, position
    FROM (
        SELECT rr.query_id, rr.doc_id,
               row_number() OVER (PARTITION BY rr.query_id ORDER BY rr.score DESC, rr.doc_id DESC)
                   AS position
        FROM run_rows AS rr
        JOIN thresholds AS th ON th.query_id = rr.query_id
        WHERE rr.run_id = :run_id AND rr.score >= th.lowest
    )
    WHERE position <= CAST(:depth AS INTEGER)
),
all_judged AS (
    SELECT rr.query_id, rr.doc_id,
           row_number() OVER (PARTITION BY rr.query_id ORDER BY rr.score DESC, rr.doc_id DESC)
               AS position
    FROM run_rows AS rr
    JOIN judgments AS j
      ON j.qrels_id = :qrels_id AND j.query_id = rr.query_id AND j.doc_id = rr.doc_id
    WHERE rr.run_id = :run_id AND CAST(:depth AS INTEGER) IS NULL AND j.grade >= 0
),
kept AS (
    SELECT d.query_id, d.position, j.grade
    FROM (SELECT * FROM top UNION ALL SELECT * FROM all_judged) AS d
    LEFT JOIN judgments AS j
      ON j.qrels_id = :qrels_id AND j.query_id = d.query_id AND j.doc_id = d.doc_id
    WHERE NOT CAST(:judged_only AS BOOLEAN) OR j.grade >= 0
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
