-- 0008: ERR's default maximum grade is 4 (gdeval's and ir_measures'), no longer the highest
-- grade of the qrels set, which made a query's value depend on the other queries' grades.
--
-- An ERR evaluation stored before this migration without an explicit max_grade was computed
-- with max_grade = the qrels set's highest grade (qrels_sets.max_grade). It is renamed to
-- what it is, `ERR(max_grade=V)@k`, so that `ERR@k` (now max_grade 4) is never served from
-- it; where V is 4, or no grade is positive (every value 0 either way), the name stays. The
-- label (the name with its settings) and the gate verdicts that carry it follow, and the
-- stored parameters say the grade used. (No LIKE: psycopg would read its % as a placeholder.)

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
