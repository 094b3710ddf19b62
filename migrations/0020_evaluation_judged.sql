-- 0020: each evaluation computed from now on keeps, per query, the judged share of the run's
-- top k for its measure's cutoff.
--
-- One row per evaluation and query the run answered that the qrels set judges: the share of
-- the run's top min(k, n) documents that have a qrels line (any grade), k the cutoff of the
-- evaluation's measure (10 for a measure without one: nDCG@10 and AP keep k = 10, P@5 k = 5).
-- It is the measure Judged@k on the run as it was ingested (in trec_eval's order, without -M
-- or -J, whatever options the evaluation used), written in the transaction that stores the
-- evaluation and its values, and deleted with them. The holes check of regress, compare and
-- eval (rankhouse.judgments.holes) reads a run's mean from here and computes it only for
-- evaluations stored before this schema, which have no rows (docs/judgments.md).

CREATE TABLE evaluation_judged (
    evaluation_id  INTEGER NOT NULL,       -- evaluations.id
    query_id       VARCHAR NOT NULL,
    k              INTEGER NOT NULL,       -- the cutoff: the measure's own, 10 without one
    judged         DOUBLE NOT NULL         -- judged documents in the top min(k, n), over min(k, n)
);
