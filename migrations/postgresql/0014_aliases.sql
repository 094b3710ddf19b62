-- 0014 (PostgreSQL): another name of a stored run or qrels set, as ../0014_aliases.sql.
-- Names compare byte-wise (COLLATE "C") and a UNIQUE constraint stops two writers from
-- storing one alias twice.

CREATE TABLE run_aliases (
    name        TEXT COLLATE "C" NOT NULL UNIQUE,
    run_id      INTEGER NOT NULL,
    created_at  TIMESTAMP NOT NULL
);

CREATE INDEX run_aliases_by_run ON run_aliases (run_id);

CREATE TABLE qrels_aliases (
    name        TEXT COLLATE "C" NOT NULL UNIQUE,
    qrels_id    INTEGER NOT NULL,
    created_at  TIMESTAMP NOT NULL
);

CREATE INDEX qrels_aliases_by_qrels ON qrels_aliases (qrels_id);
