-- 0008 (PostgreSQL): ERR's stored evaluations renamed to the maximum grade they were
-- computed with, as ../0007_err_max_grade.sql (the same SQL).

UPDATE regress_verdicts SET measure = (
    SELECT 'ERR(max_grade=' || CAST(q.max_grade AS VARCHAR) || ')' || substr(e.label, 4)
    FROM evaluations e JOIN qrels_sets q ON q.id = e.qrels_id
    WHERE e.id = regress_verdicts.run_evaluation_id
)
WHERE run_evaluation_id IN (
    SELECT e.id FROM evaluations e JOIN qrels_sets q ON q.id = e.qrels_id
    WHERE (e.measure = 'ERR' OR substr(e.measure, 1, 4) = 'ERR@')
      AND q.max_grade >= 1 AND q.max_grade <> 4
);

UPDATE evaluations SET
    measure = 'ERR(max_grade=' || CAST(
        (SELECT q.max_grade FROM qrels_sets q WHERE q.id = evaluations.qrels_id) AS VARCHAR
    ) || ')' || substr(measure, 4),
    label = 'ERR(max_grade=' || CAST(
        (SELECT q.max_grade FROM qrels_sets q WHERE q.id = evaluations.qrels_id) AS VARCHAR
    ) || ')' || substr(label, 4),
    parameters = replace(parameters, '"max_grade": null', '"max_grade": ' || CAST(
        (SELECT q.max_grade FROM qrels_sets q WHERE q.id = evaluations.qrels_id) AS VARCHAR
    ))
WHERE (measure = 'ERR' OR substr(measure, 1, 4) = 'ERR@')
  AND qrels_id IN (SELECT id FROM qrels_sets WHERE max_grade >= 1 AND max_grade <> 4);

UPDATE evaluations SET parameters = replace(parameters, '"max_grade": null', '"max_grade": 4')
WHERE (measure = 'ERR' OR substr(measure, 1, 4) = 'ERR@');
