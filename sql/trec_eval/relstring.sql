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
-- how deep the ranking is read: the first `length` documents (-M first), or under -J the
-- top max_rank before the unjudged ones go (NULL: every judged document)
depth AS (
    SELECT CASE
        WHEN CAST(:judged_only AS BOOLEAN) THEN CAST(:max_rank AS INTEGER)
        ELSE least(CAST(:length AS INTEGER), coalesce(CAST(:max_rank AS INTEGER), CAST(:length AS INTEGER)))
    END AS n
),
-- the top n of each query without sorting the run: max_by keeps the n largest
-- (score, doc_id) pairs, in descending order, which is trec_eval's ranking
top AS (
    SELECT query_id, unnest(docs) AS doc_id, generate_subscripts(docs, 1) AS position
    FROM (
        SELECT rr.query_id, max_by(rr.doc_id, (rr.score, rr.doc_id), (SELECT n FROM depth)) AS docs
        FROM run_rows AS rr
        JOIN topics AS t ON t.query_id = rr.query_id
        WHERE rr.run_id = :run_id AND (SELECT n FROM depth) > 0
        GROUP BY rr.query_id
    )
),
all_judged AS (
    SELECT rr.query_id, rr.doc_id,
           row_number() OVER (PARTITION BY rr.query_id ORDER BY rr.score DESC, rr.doc_id DESC)
               AS position
    FROM run_rows AS rr
    JOIN judgments AS j
      ON j.qrels_id = :qrels_id AND j.query_id = rr.query_id AND j.doc_id = rr.doc_id
    WHERE rr.run_id = :run_id AND (SELECT n FROM depth) IS NULL AND j.grade >= 0
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
