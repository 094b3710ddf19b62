-- 0018: raters and their individual judgments are stored, and a qrels set built from them
-- records its rule and the judgment sets it read.
--
-- `rankhouse ingest judgments FILE --rater NAME [--kind human|llm] [--meta key=value]` stores
-- one judgment set (a file's judgments, once per content) of one rater; a rater's kind and
-- metadata (model=..., prompt=...) are fixed when the rater is first stored. A rater's
-- judgments are the union of its sets, a pair judged again in a later set taking the later
-- grade. `rankhouse qrels build NAME --from-judgments --rule R` aggregates raters' judgments
-- into a qrels set (or NAME's next version) and writes one qrels_builds row per judgment set
-- it read (docs/judgments.md, Raters and their judgments).

CREATE SEQUENCE rater_ids START 1;

CREATE TABLE raters (
    id          INTEGER PRIMARY KEY DEFAULT nextval('rater_ids'),
    name        VARCHAR NOT NULL,
    kind        VARCHAR,                   -- 'human', 'llm', or NULL: not said
    metadata    VARCHAR NOT NULL,          -- JSON object: the --meta pairs (model=..., prompt=...)
    created_at  TIMESTAMP NOT NULL         -- UTC
);

CREATE SEQUENCE judgment_set_ids START 1;

CREATE TABLE judgment_sets (
    id              INTEGER PRIMARY KEY DEFAULT nextval('judgment_set_ids'),
    rater_id        INTEGER NOT NULL,      -- raters.id
    source          VARCHAR NOT NULL,      -- file path as given, or 'dataframe'
    content_sha256  VARCHAR NOT NULL,      -- sha256 of the decompressed bytes (or canonical frame)
    parse_options   VARCHAR NOT NULL,      -- JSON: format, column mapping (time and rationale too)
    ingested_at     TIMESTAMP NOT NULL,    -- UTC
    num_queries     INTEGER NOT NULL,
    num_judgments   BIGINT NOT NULL
);

CREATE TABLE rater_judgments (
    set_id       INTEGER NOT NULL,         -- judgment_sets.id
    query_id     VARCHAR NOT NULL,
    doc_id       VARCHAR NOT NULL,
    grade        INTEGER NOT NULL,
    judged_time  VARCHAR,                  -- the time column as written (NULL: none)
    rationale    VARCHAR                   -- the rationale column as written (NULL: none)
);

CREATE TABLE qrels_builds (
    qrels_id    INTEGER NOT NULL,          -- qrels_sets.id of the set built
    rule        VARCHAR NOT NULL,          -- majority, mean, max or rater:NAME
    set_id      INTEGER NOT NULL,          -- judgment_sets.id of a set it read
    rater_name  VARCHAR NOT NULL           -- that set's rater
);
