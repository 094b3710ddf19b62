-- 0014: another name of a stored run or qrels set (an alias).
--
-- `rankhouse ingest run FILE --name X` of content already stored under another name stores
-- nothing new: X becomes another name of the stored run (`run_aliases`), and every command
-- that takes a run's name takes X for it. Qrels sets likewise (`qrels_aliases`). The run's
-- own name, rows and evaluations stay as they were: its evaluations are shared.
--
-- A name is a run's name or an alias of one, never both (rankhouse checks it in the ingest's
-- transaction, as for names: DuckDB's UNIQUE indexes reject a delete-then-insert of one key in
-- a transaction). `runs rm ALIAS` removes the alias alone; removing a run removes its aliases.

CREATE TABLE run_aliases (
    name        VARCHAR NOT NULL,          -- never a runs.name
    run_id      INTEGER NOT NULL,          -- runs.id of the run it names
    created_at  TIMESTAMP NOT NULL         -- UTC
);

CREATE TABLE qrels_aliases (
    name        VARCHAR NOT NULL,          -- never a qrels_sets.name
    qrels_id    INTEGER NOT NULL,          -- qrels_sets.id of the qrels set it names
    created_at  TIMESTAMP NOT NULL         -- UTC
);
