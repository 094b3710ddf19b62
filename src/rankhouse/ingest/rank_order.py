"""A run whose rank column disagrees with its scores: rankhouse (as trec_eval) ranks by score.

trec_eval orders a topic's documents by score (then document id) and ignores the rank
column; so does ``order='score'``. A run whose ranks say otherwise (re-scored, or ranks
written by another stage) is then evaluated in an order its author may not expect, so a new
run is checked once, after its ingest, and a :class:`~rankhouse.errors.RankhouseWarning`
names the first disagreement found and the way to rank by the given ranks instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Protocol

from ..backends.base import Connection
from ..errors import Message, Option, RankhouseWarning

SAMPLE_ROWS = 50_000
"""Rows of a run checked (any subset proves a disagreement; this keeps big runs cheap)."""

_FIRST_DISAGREEMENT = f"""
    SELECT query_id, prev_doc, prev_rank, prev_score, doc_id, rank, score
    FROM (
        SELECT query_id, doc_id, rank, score,
               lag(doc_id) OVER w AS prev_doc, lag(rank) OVER w AS prev_rank,
               lag(score) OVER w AS prev_score
        FROM (
            SELECT query_id, doc_id, rank, score FROM run_rows
            WHERE run_id = :run_id AND rank IS NOT NULL LIMIT {SAMPLE_ROWS}
        ) AS sample
        WINDOW w AS (PARTITION BY query_id ORDER BY rank, doc_id)
    ) AS pairs
    WHERE rank > prev_rank AND score > prev_score
    ORDER BY query_id, rank
    LIMIT 1
    """


class StoredRun(Protocol):
    """A run as an ingest or a load reports it: its id and name."""

    id: int
    name: str


def warn_if_ranks_disagree(conn: Connection, results: Sequence[StoredRun]) -> None:
    """Warn (RankhouseWarning) for each run whose ranks put a lower score above a higher one.

    ``conn`` is a connection to the database holding the runs' rows (the warehouse's, or a
    bare engine database's); ``results`` name the runs (``id``, ``name``).
    """
    for result in results:
        row = conn.execute(_FIRST_DISAGREEMENT, {"run_id": result.id}).first()
        if row is None:
            continue
        warnings.warn(
            RankhouseWarning(
                Message(
                    f"run {result.name!r}: its ranks disagree with its scores (query "
                    f"{row.query_id!r}: rank {row.prev_rank} is {row.prev_doc!r} with score "
                    f"{row.prev_score!r}, rank {row.rank} is {row.doc_id!r} with the higher score "
                    f"{row.score!r}); rankhouse ranks by score, as trec_eval does, and ignores "
                    "ranks: pass ",
                    Option("order", "rank"),
                    " to take the given ranks as the ranking",
                )
            ),
            stacklevel=2,
        )
