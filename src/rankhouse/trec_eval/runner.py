"""``rankhouse trec-eval``: trec_eval 10's behaviour from command line to printed lines, and
the files and values stored in a warehouse.

The qrels and the run are read with trec_eval's rules (:mod:`.files`; a regular run straight
into DuckDB by the direct path, :func:`.unstored.insert_direct`), and evaluated either without
a warehouse, as trec_eval does (:mod:`.unstored`), or stored in one as a normal qrels set and
run, and evaluated through :func:`rankhouse.evaluation.evaluate` (so every value is stored like
any evaluation, and a repeated request reuses it). The values (:mod:`.values`) are printed
exactly as trec_eval prints them, including its aborts (exit codes of spec section 11) and its
``-c`` output quirks (spec 5).

With a warehouse, a run file stored before is recognised by its hash and not read again
(:func:`stored_run`); a new regular one goes to the warehouse by the direct path
(:func:`read_and_store`), else through the general reader's table. A store that computes
elsewhere (a server) is evaluated in its local staging warehouse, whose contents are then
published. When trec_eval would abort, or the run holds a document twice for a query (which a
stored run cannot), the numbers are computed on a copy that is rolled back, and nothing is
stored (:func:`.unstored.values_of_a_copy`).

The run read by the general reader is already in a DuckDB temporary table on the warehouse's
connection, so it goes to ``run_rows`` with one ``INSERT ... SELECT``: no copy through Python.
Catalogue rows and content deduplication are the catalogue's (:mod:`rankhouse.catalog.writes`);
the parse options say ``"format": "trec_eval"`` because trec_eval's rules (C ``atof`` scores,
one run per file named by the last tag, ...) differ from ``rankhouse ingest``'s, so the same
file ingested both ways gives two stored runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..backends import Opening, open_backend, resolve_target
from ..catalog.lookup import TREC_EVAL_COPY
from ..catalog.writes import (
    first_dict,
    free_name,
    insert_qrels_set,
    insert_run,
    same_qrels,
    utc_now,
)
from ..evaluation import evaluate as evaluate_stored
from ..ingest import staging
from ..ingest.files import file_sha256
from ..ingest.reuse import publish_all
from . import unstored
from .files import NotText, read_qrels, results_file, results_sha256
from .options import BYTES, NO_WAREHOUSE, run, warehouse_of
from .unstored import (
    QRELS_TABLE,
    RUN_TABLE,
    DirectRun,
    insert_direct,
    read_general,
    regular_run,
    values_of_a_copy,
)
from .values import (
    TopicValues,
    all_line_measures,
    checked_line_measures,
    engine_options,
    finish,
    first_failure,
    topic_values,
)

if TYPE_CHECKING:
    from ..backends.base import Connection

PARSE_OPTIONS = TREC_EVAL_COPY


def main(
    argv: Sequence[str],
    out: TextIO | None = None,
    err: TextIO | None = None,
    *,
    db: str | None = None,
    read_only: bool = False,
) -> int:
    """Run trec_eval on ``argv`` (its arguments without the program name); returns the exit code.

    Args:
        argv: trec_eval's arguments.
        out: where the lines go (standard output by default).
        err: where trec_eval's error messages go (standard error by default).
        db: the warehouse to store in. ``None``: ``$RANKHOUSE_DB`` when set, else nothing
            is kept (an in-memory warehouse: trec_eval writes no file, neither does this).
        read_only: evaluate without storing anything.
    """
    target = warehouse_of(db, read_only)
    if target == NO_WAREHOUSE:
        return unstored.main(argv, out, err)
    return run(
        argv, out, err, lambda options, out: evaluate(options, options.requests(), out, target)
    )


def evaluate(options, requests, out, db: str) -> int:
    """Evaluate the files of ``options`` through the warehouse ``db`` and print; the exit
    code.

    Raises:
        TrecEvalExit: trec_eval's fatal errors.
    """
    checked_line_measures(options, requests)  # a command that fails changes nothing
    # a store that computes elsewhere (a server): evaluated in its local staging warehouse,
    # then what that stored is published
    target = open_backend(resolve_target(db), Opening(hold=True))  # a file held for the whole run
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
    qrels_sha = content_hash(options.qrels)
    with results_file(options.results) as run_path:
        whitespace: set[int] = set()
        run_sha = results_sha256(run_path, whitespace)
        with wh.connect() as conn:
            stored = stored_run(conn, run_sha)
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
        run_id = store_run(conn, conn.duck, RUN_TABLE, run_path, sha, runid)
    with wh.connect() as conn:
        conn.duck.execute(f"DROP TABLE IF EXISTS {RUN_TABLE}")
    return run_id


def _store_qrels(wh, path: str, sha: str) -> int:
    with wh.transaction() as conn:
        return store_qrels(conn, conn.duck, QRELS_TABLE, path, sha)


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


# --- trec-eval's copies of the files in the catalogue --------------------------------------


def content_hash(path: str) -> str:
    """sha256 of a file's bytes (the identity of a stored qrels set or run)."""
    return file_sha256(Path(path))


def stored_run(conn: Connection, sha: str) -> dict | None:
    """The run stored from a file with this hash by ``trec-eval``, if any."""
    return first_dict(
        conn,
        "SELECT id, name, system_tag FROM runs WHERE content_sha256 = :sha "
        "AND parse_options = :options ORDER BY id LIMIT 1",
        {"sha": sha, "options": PARSE_OPTIONS},
    )


def store_qrels(conn: Connection, duck, table: str, path: str, sha: str) -> int:
    """Store the judgments read into the temporary table ``table`` (query_id, doc_id, grade;
    no duplicate pairs); reuse identical ones.

    Returns:
        The qrels set's id.
    """
    existing = same_qrels(conn, sha, PARSE_OPTIONS)
    if existing is not None:
        return int(existing["id"])
    duck.execute(
        f"CREATE OR REPLACE TEMP TABLE {staging.STAGE} AS SELECT query_id, doc_id, grade "
        f"FROM {table} ORDER BY line"
    )
    try:
        [summary] = staging.summarize(duck, "qrels")
        qrels_id = insert_qrels_set(
            conn,
            {
                "name": free_name(conn, "qrels_sets", Path(path).name, sha),
                "source": str(path),
                "content_sha256": sha,
                "parse_options": PARSE_OPTIONS,
                "ingested_at": utc_now(),
                "num_queries": summary.num_queries,
                "num_judgments": summary.num_rows,
                **staging.qrels_statistics(duck),
            },
        )
        staging.copy_judgments(duck, qrels_id)
    finally:
        staging.drop(duck)
    return int(qrels_id)


def store_run(conn: Connection, duck, table: str, path: str, sha: str, tag: str) -> int:
    """Store the run read into ``table`` (qid, docno, score; no duplicate pairs).

    Every line belongs to the one run trec_eval sees, whatever its tag field; the run's tag
    is that of the last line (trec_eval's ``runid``).

    Returns:
        The run's id.
    """
    num_queries, num_rows = duck.execute(
        f"SELECT count(DISTINCT qid), count(*) FROM {table}"
    ).fetchall()[0]
    run_id = record_run(conn, path, sha, tag, int(num_queries), int(num_rows))
    duck.execute(f"INSERT INTO run_rows SELECT ?, qid, docno, NULL, score FROM {table}", [run_id])
    return run_id


def record_run(
    conn: Connection,
    path: str,
    sha: str,
    tag: str,
    num_queries: int,
    num_rows: int,
    run_id: int | None = None,
) -> int:
    """Insert the catalogue row of a run read by ``trec-eval``; returns its id.

    ``run_id`` is given when the rows were written first (under an id from ``run_ids``).
    """
    metadata = {"source": str(path), "content_sha256": sha, "read_by": "trec-eval"}
    values = {
        "name": free_name(conn, "runs", tag, sha),
        "system_tag": tag,
        "source": str(path),
        "content_sha256": sha,
        "parse_options": PARSE_OPTIONS,
        "ingested_at": utc_now(),
        "metadata": json.dumps(metadata),
        "order_by": "score",
        "num_queries": num_queries,
        "num_rows": num_rows,
    }
    if run_id is not None:
        values["id"] = run_id
    return int(insert_run(conn, values))


class _Rollback(Exception):
    """Leaves the transaction, which rolls back the rows written: the general reader must
    read this run."""


def read_and_store(
    wh,
    run_path: str,
    sha: str,
    whitespace: frozenset[int],
    accept: Callable[[set[str]], bool],
) -> DirectRun | None:
    """Store the run file in the warehouse in one pass when it is regular (with its catalogue
    row); None leaves it to the general reader.

    Args:
        wh: the warehouse.
        run_path: the results file.
        sha: its sha256.
        whitespace: the whitespace bytes (other than newline) the file holds.
        accept: given the run's topics, whether trec_eval would evaluate it without aborting.
    """
    with regular_run(run_path, whitespace) as regular:
        if regular is None:
            return None
        try:
            with wh.transaction() as conn:
                run_id = conn.execute("SELECT nextval('run_ids')").scalar_one()
                found = insert_direct(conn.duck, *regular, run_id, accept)
                if found is None:
                    raise _Rollback
                record_run(
                    conn, run_path, sha, found.runid, len(found.topics), found.num_rows, run_id
                )
        except _Rollback:  # raised just above: nothing of the run is stored
            return None
        return DirectRun(run_id, found.runid, found.topics)
