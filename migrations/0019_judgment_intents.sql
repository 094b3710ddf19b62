-- 0019: a qrels set ingested with intents keeps each judgment of each intent (subtopic).
--
-- `rankhouse ingest qrels FILE --intents` reads TREC diversity qrels (`qid intent docid
-- grade`, the second field the intent, not trec_eval's ignored iteration) and stores them
-- twice: `judgments` holds each document once with its highest grade over the intents (what
-- the ordinary measures read: a document relevant to any intent is relevant to the query,
-- ndeval's rule for its non-intent-aware MAP), and this table holds every line, which the
-- diversity measures read (sql/measures/diversity.sql; docs/measures.md, Diversity). A qrels
-- set without rows here has no intents. Removing the set removes its rows.

CREATE TABLE judgment_intents (
    qrels_id  INTEGER NOT NULL,            -- qrels_sets.id
    query_id  VARCHAR NOT NULL,
    intent    VARCHAR NOT NULL,            -- the intent (subtopic) as written: '1', 'a'
    doc_id    VARCHAR NOT NULL,
    grade     INTEGER NOT NULL             -- the raw grade of the document for this intent
);
