-- 0017: a qrels set stored as a new version of a named set records the set it follows.
--
-- `rankhouse ingest qrels FILE --name dl19`, when `dl19` holds other judgments, stores them as
-- the next version, `dl19@2` (then `dl19@3`...), and writes one row here: the new set and the
-- version it follows (the newest version of the name when it was stored). The bare name keeps
-- naming the first version, so that nothing stored or scripted under it changes meaning
-- (docs/judgments.md). `--replace` overwrites as before and writes no row. The name of the set
-- followed is kept, so that the lineage still reads after that set is removed; removing a
-- version deletes its own row (docs/judgments.md, Versions and diffs).

CREATE TABLE qrels_lineage (
    qrels_id      INTEGER NOT NULL,        -- qrels_sets.id of the version (name@N)
    follows_id    INTEGER NOT NULL,        -- qrels_sets.id of the version it follows
    follows_name  VARCHAR NOT NULL,        -- that set's name when this one was stored
    base_name     VARCHAR NOT NULL         -- the name all its versions share (dl19)
);
