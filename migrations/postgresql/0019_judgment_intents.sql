-- 0019 (PostgreSQL): a qrels set ingested with intents keeps each judgment of each intent
-- (subtopic), as ../0019_judgment_intents.sql; ids compare byte-wise, as in judgments.

CREATE TABLE judgment_intents (
    qrels_id  INTEGER NOT NULL,
    query_id  TEXT COLLATE "C" NOT NULL,
    intent    TEXT COLLATE "C" NOT NULL,
    doc_id    TEXT COLLATE "C" NOT NULL,
    grade     INTEGER NOT NULL
);

CREATE INDEX judgment_intents_by_qrels ON judgment_intents (qrels_id);
