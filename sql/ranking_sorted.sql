-- The ranks of the judged retrieved documents, by sorting every retrieved document.
--
-- Builds rh_ranking (see ranking.sql, which reads it) when most queries of the qrels set have
-- many judgments (TREC's pooled judgments: hundreds a query): each query's documents are
-- sorted as trec_eval sorts them (score descending, then doc_id descending in byte order),
-- and the judged ones keep their position. One sort of the run, and no join before it; on
-- sparse judgments (MS MARCO's one a query) ranking_per_query.sql is cheaper, since it
-- sorts nothing. The engine picks the file (engine.SORTED_FROM_SHARE); both give the same
-- table. Then trec_eval's -M (keep rank <= max_rank) and -J (keep judged documents,
-- renumbered).
--
-- The last step (-M and -J; the window of pooled_upto and judged_upto) is ranking_per_query.sql's
-- too: it is written once, in the fragment below, which reads this file's `positioned`.
--
-- Fragments:
--   {{run_order}}     fragments/run_order.sql     every retrieved document's position
--   {{ranking_tail}}  fragments/ranking_tail.sql  -M, -J, rank, pooled_upto, judged_upto
--
-- Parameters:
--   :run_ids      INTEGER[]  the runs evaluated
--   :qrels_id     INTEGER    the qrels set
--   :max_rank     INTEGER    trec_eval -M: keep the top max_rank documents; NULL keeps all
--   :judged_only  BOOLEAN    trec_eval -J: keep only documents judged >= 0, ranks renumbered

CREATE OR REPLACE TEMP TABLE rh_ranking AS
WITH sorted AS (
    {{run_order}}
),
positioned AS (
    SELECT s.run_id, s.query_id, s.doc_id, s.position, j.grade
    FROM sorted AS s
    JOIN judgments AS j
      ON j.qrels_id = :qrels_id AND j.query_id = s.query_id AND j.doc_id = s.doc_id
)
{{ranking_tail}};
