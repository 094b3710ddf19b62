"""``trec-eval`` with a warehouse: the files stored as a qrels set and a run, every value with
them.

A run file stored before is recognised by its hash and not read again (:mod:`.store`); a new
regular one goes to the warehouse by the direct path, else through the general reader's table.
The values are evaluated through the warehouse (:func:`rankhouse.evaluation.evaluate`), so a
repeated request reuses them. A store that computes elsewhere (a server) is evaluated in its
local staging warehouse, whose contents are then published.
"""

from __future__ import annotations

from ..backends import open_backend, resolve_target
from ..evaluation import evaluate as evaluate_stored
from ..ingest.reuse import publish_all
from . import store, unstored
from .aborts import first_failure
from .command import run
from .general import QRELS_TABLE, RUN_TABLE, read_general, values_of_a_copy
from .input_files import NotText, results_file, results_sha256
from .options import BYTES
from .output import finish
from .qrels_reader import read_qrels
from .store import read_and_store
from .values import (
    TopicValues,
    all_line_measures,
    checked_line_measures,
    engine_options,
    topic_values,
)


def main(argv, out=None, err=None, *, db: str) -> int:
    """trec_eval on ``argv``, storing in the warehouse ``db``; the exit code."""
    return run(argv, out, err, lambda options, out: evaluate(options, options.requests(), out, db))


def evaluate(options, requests, out, db: str) -> int:
    """Evaluate the files of ``options`` through the warehouse ``db`` and print; the exit
    code.

    Raises:
        TrecEvalExit: trec_eval's fatal errors.
    """
    checked_line_measures(options, requests)  # a command that fails changes nothing
    # a store that computes elsewhere (a server): evaluated in its local staging warehouse,
    # then what that stored is published
    target = open_backend(resolve_target(db), hold=True)  # a file held for the whole run
    try:
        with target.staging() as wh:
            return _evaluate_in(options, requests, out, target, wh)
    except NotText:
        pass  # a file that is not UTF-8, found before anything was stored
    finally:
        target.close()
    # ids that are bytes, not text, cannot be stored (a stored id is text, as every reader
    # of the warehouse reads it): evaluated as trec_eval reads them, nothing kept
    return unstored.evaluate_read_as(options, requests, out, BYTES)


def _evaluate_in(options, requests, out, target, wh) -> int:
    with wh.connect() as conn:
        duck = conn.duck
    qrels = read_qrels(duck, options.qrels, QRELS_TABLE)
    topics = qrels.topics
    qrels_sha = store.content_hash(options.qrels)
    with results_file(options.results) as run_path:
        whitespace: set[int] = set()
        run_sha = results_sha256(run_path, whitespace)
        with wh.connect() as conn:
            stored = store.stored_run(conn, run_sha)
        direct = None
        if stored is not None:
            runid, run_topics, duplicate = (
                stored["system_tag"],
                _stored_topics(wh, stored),
                None,
            )
        else:
            direct = read_and_store(
                wh,
                run_path,
                run_sha,
                frozenset(whitespace),
                lambda found: first_failure(options, requests, qrels, found, None) is None,
            )
            if direct is not None:
                runid, run_topics, duplicate = direct.runid, direct.topics, None
            else:
                runid, run_topics, duplicate = read_general(duck, options, run_path, topics)
        failure = first_failure(options, requests, qrels, run_topics, duplicate)
        limit = failure.index if failure else len(topics)
        if failure is not None or (stored is None and duplicate is not None):
            if stored is not None:  # the run was not read: take its stored rows
                _load_stored_run(duck, stored["id"])
            per_topic = values_of_a_copy(duck, options, requests, qrels, limit)
        else:
            if stored is not None:
                run_id = stored["id"]
            elif direct is not None:
                run_id = direct.run_id
            else:
                run_id = _store_run(wh, run_path, run_sha, runid)
            qrels_id = _store_qrels(wh, options.qrels, qrels_sha)
            per_topic = stored_values(wh, options, requests, run_id, qrels_id, topics, limit)
            publish_all(target, wh)
    return finish(options, requests, qrels, topics, run_topics, per_topic, runid, failure, out)


def _stored_topics(wh, stored: dict) -> set[str]:
    with wh.connect() as conn:
        rows = conn.execute(
            "SELECT DISTINCT query_id FROM run_rows WHERE run_id = :run_id",
            {"run_id": stored["id"]},
        ).scalars()
        return set(rows)


def _load_stored_run(duck, run_id: int) -> None:
    duck.execute(
        f"CREATE OR REPLACE TEMP TABLE {RUN_TABLE} AS SELECT query_id AS qid, "
        "doc_id AS docno, score FROM run_rows WHERE run_id = ?",
        [run_id],
    )


def _store_run(wh, run_path: str, sha: str, runid: str) -> int:
    with wh.transaction() as conn:
        run_id = store.store_run(conn, conn.duck, RUN_TABLE, run_path, sha, runid)
    with wh.connect() as conn:
        conn.duck.execute(f"DROP TABLE IF EXISTS {RUN_TABLE}")
    return run_id


def _store_qrels(wh, path: str, sha: str) -> int:
    with wh.transaction() as conn:
        return store.store_qrels(conn, conn.duck, QRELS_TABLE, path, sha)


def stored_values(wh, options, requests, run_id, qrels_id, topics, limit) -> TopicValues:
    """The printed lines' values, evaluated through the warehouse (stored, or reused)."""
    lines = all_line_measures(options, requests)
    by_query: dict[str, dict[str, float]] = {}
    if lines and limit:
        result = evaluate_stored(
            wh,
            qrels_id,
            [run_id],
            [m.name for m in dict.fromkeys(m for _, m in lines)],  # canonical names
            relevance_level=options.level,
            missing_queries="zero",
            options=engine_options(options),
            with_query_counts=False,
            allow_no_overlap=True,  # trec_eval's own rules apply
        )
        found = result.per_query_values
        for measure, query, value in zip(found.measure, found.query, found.value, strict=True):
            by_query.setdefault(measure, {})[query] = value
    with wh.connect() as conn:
        duck = conn.duck
    return topic_values(duck, options, requests, lines, by_query, run_id, qrels_id, topics, limit)
