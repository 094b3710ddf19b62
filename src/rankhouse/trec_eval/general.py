"""A run the direct path does not take, read by trec_eval's general rules; and what trec_eval
evaluates of files it stops on.

The run goes into the temporary table :data:`RUN_TABLE` (:func:`.run_reader.read_run`), where
its duplicates are found as trec_eval finds them: only within the top ``-M`` documents of the
topics it evaluates. When trec_eval would stop part-way, or the run holds a duplicate (which
a stored run cannot), the values are computed on a copy in a transaction that is rolled back.
"""

from __future__ import annotations

from ..ingest.staging import count_repeated
from .options import TEXT, Options
from .qrels_reader import Qrels
from .run_reader import read_run
from .values import TopicValues, engine_values

RUN_TABLE = "te_run"
QRELS_TABLE = "te_qrels"
#: Ids of the deduplicated copy evaluated in a rolled-back transaction (never stored).
COPY_ID = -1


def read_general(duck, options: Options, run_path: str, topics: list[str], encoding: str = TEXT):
    """Read the run into the temporary table ``te_run`` on ``duck`` (``encoding`` as
    :func:`.run_reader.read_run`); find duplicates.

    Returns:
        (runid, the run's topics, the first fatal duplicate as (topic index, docno) or None;
        ``()`` when the run has duplicates none of which is fatal).
    """
    run = read_run(duck, run_path, RUN_TABLE, encoding)
    run_topics = {q for (q,) in duck.execute(f"SELECT DISTINCT qid FROM {RUN_TABLE}").fetchall()}
    rows = duck.execute(f"SELECT count(*) FROM {RUN_TABLE}").fetchone()[0]
    # a repeated 64-bit hash only sends the run to the exact check below
    pairs = f"SELECT hash(qid, docno) FROM {RUN_TABLE}"
    repeated = count_repeated(duck, pairs, None, rows)
    duplicate = _fatal_duplicate(duck, options, topics) if repeated else None
    return run.runid, run_topics, duplicate


def _fatal_duplicate(duck, options: Options, topics: list[str]):
    """trec_eval's duplicate check: only in the kept top -M of evaluated topics."""
    row = duck.execute(
        f"""
        WITH topics AS (
            SELECT unnest($topics) AS qid, generate_subscripts($topics, 1) - 1 AS tidx
        ), ranked AS (
            SELECT t.tidx, r.docno,
                   row_number() OVER (PARTITION BY r.qid ORDER BY r.score DESC,
                                      r.docno DESC) AS pos
            FROM {RUN_TABLE} AS r JOIN topics AS t ON t.qid = r.qid
        )
        SELECT tidx, min(docno) FROM (
            SELECT tidx, docno FROM ranked WHERE pos <= $max_docs
            GROUP BY tidx, docno HAVING count(*) > 1
        ) GROUP BY tidx ORDER BY tidx LIMIT 1
        """,
        {
            "topics": topics,
            "max_docs": options.max_docs if options.max_docs is not None else 2**62,
        },
    ).fetchall()
    return tuple(row[0]) if row else ()


def values_of_a_copy(duck, options, requests, qrels: Qrels, limit: int) -> TopicValues:
    """Values of the first ``limit`` topics, computed on a copy of the rows in a transaction
    that is rolled back (nothing is stored): a document listed twice keeps its highest score,
    a judgment given twice its first grade (what trec_eval evaluates before it aborts)."""
    if limit == 0:
        return TopicValues(0)
    duck.begin()
    try:
        duck.execute(
            f"""
            INSERT INTO run_rows
            SELECT $id, qid, docno, NULL, score FROM {RUN_TABLE}
            QUALIFY row_number() OVER (PARTITION BY qid, docno ORDER BY score DESC) = 1
            """,
            {"id": COPY_ID},
        )
        qrels.copy_into(duck, "te_qrels_first", first_only=True)
        duck.execute(
            "INSERT INTO judgments SELECT $id, query_id, doc_id, grade FROM te_qrels_first",
            {"id": COPY_ID},
        )
        return engine_values(duck, options, requests, COPY_ID, COPY_ID, qrels.topics, limit)
    finally:
        duck.rollback()
