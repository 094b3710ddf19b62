-- relstring from the shared ranking: the same string as relstring.sql, read from the tables
-- sql/ranking.sql built for this run, qrels set and -M/-J (the engine has just evaluated
-- them), so no pass over the run's rows is needed.
--
--   Position p (1 <= p <= min(length, n), n after -M/-J) shows the grade of the judged
--   document ranked p, '.' for a negative grade, '-' when no judged document is at p.
--   Queries the run has no row for get no row here (the caller shows the -c dummy).
--
-- Parameters:
--   :run_id  INTEGER  the stored run (one of the ranking's runs)
--   :length  INTEGER  the number of documents shown

WITH positions AS (
    SELECT query_id, unnest(range(1, least(CAST(:length AS INTEGER), num_ret) + 1)) AS rank
    FROM rh_queries
    WHERE run_id = :run_id AND in_run
)
SELECT
    p.query_id,
    string_agg(
        CASE WHEN r.grade IS NULL THEN '-'
             WHEN r.grade < 0 THEN '.'
             WHEN r.grade > 9 THEN '>'
             ELSE CAST(r.grade AS VARCHAR) END,
        '' ORDER BY p.rank
    ) AS relstring
FROM positions AS p
LEFT JOIN rh_ranking AS r ON r.run_id = :run_id AND r.query_id = p.query_id AND r.rank = p.rank
GROUP BY p.query_id
