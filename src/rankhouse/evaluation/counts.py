"""How the queries of a run and of a qrels set met (:class:`~rankhouse.results.QueryCounts`)."""

from __future__ import annotations

from ..results import QueryCounts

QUERY_COUNTS_SQL = """
    WITH run_q AS (SELECT DISTINCT query_id FROM run_rows WHERE run_id = :run_id),
         qrels_q AS (SELECT DISTINCT query_id FROM judgments WHERE qrels_id = :qrels_id)
    SELECT
        (SELECT count(*) FROM qrels_q) AS qrels_queries,
        (SELECT count(*) FROM qrels_q WHERE query_id NOT IN (SELECT query_id FROM run_q))
            AS missing_from_run,
        (SELECT count(*) FROM run_q WHERE query_id NOT IN (SELECT query_id FROM qrels_q))
            AS ignored
    """


_COUNT_TIES = """
    SELECT coalesce(sum(n - 1), 0) FROM (
        SELECT count(*) AS n FROM run_rows WHERE run_id = :run_id GROUP BY query_id, score
    ) AS score_groups
    """


def query_counts(
    store, run_id: int, qrels_id: int, missing_queries: str, *, will_compute: bool = False
) -> QueryCounts:
    """How the run's queries and the qrels set's queries met (see :class:`QueryCounts`) in
    ``store``; ``will_compute``: the rows are about to be evaluated (a server's are counted
    where the engine will read them)."""
    with store.rows_connection([run_id], qrels_id, load=will_compute) as conn:
        found = conn.execute(QUERY_COUNTS_SQL, {"run_id": run_id, "qrels_id": qrels_id}).one()
    with store.connect() as conn:
        tied_pairs = conn.execute(
            "SELECT tied_pairs FROM runs WHERE id = :run_id", {"run_id": run_id}
        ).scalar()
        if tied_pairs is None:  # a run stored before migration 0004, or by trec-eval
            tied_pairs = conn.execute(_COUNT_TIES, {"run_id": run_id}).scalar_one()
    return counts_of(tuple(found), tied_pairs, missing_queries)


def counts_of(found: tuple, tied_pairs: int, missing_queries: str) -> QueryCounts:
    """The counts from a row of :data:`QUERY_COUNTS_SQL` and the run's tied pairs."""
    qrels_queries, missing_from_run, ignored = found
    evaluated = qrels_queries - (missing_from_run if missing_queries == "skip" else 0)
    return QueryCounts(
        evaluated=int(evaluated),
        missing_from_run=int(missing_from_run),
        ignored=int(ignored),
        tied_pairs=int(tied_pairs),
    )
