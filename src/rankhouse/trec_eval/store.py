"""Store what ``trec-eval`` read (trec_eval's parsing rules) as a normal qrels set and run.

The run is already in a DuckDB temporary table on the warehouse's connection (read by
:mod:`.run_reader`), so it goes to ``run_rows`` with one ``INSERT ... SELECT``: no copy through
Python. Catalogue rows and content deduplication are the catalogue's
(:mod:`rankhouse.catalog.writes`); the parse options say ``"format": "trec_eval"`` because
trec_eval's rules (C ``atof`` scores, one run per file named by the last tag, ...) differ from
``rankhouse ingest``'s, so the same file ingested both ways gives two stored runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..catalog.lookup import TREC_EVAL_COPY
from ..catalog.writes import (
    free_name,
    insert_qrels_set,
    insert_run,
    same_qrels,
    utc_now,
)
from ..ingest import staging
from ..ingest.files import file_sha256
from .direct import DirectRun, insert_direct, regular_run

if TYPE_CHECKING:
    from ..backends.base import Connection

PARSE_OPTIONS = TREC_EVAL_COPY


def content_hash(path: str) -> str:
    """sha256 of a file's bytes (the identity of a stored qrels set or run)."""
    return file_sha256(Path(path))


def stored_run(conn: Connection, sha: str) -> dict | None:
    """The run stored from a file with this hash by ``trec-eval``, if any."""
    row = (
        conn.execute(
            (
                "SELECT id, name, system_tag FROM runs WHERE content_sha256 = :sha "
                "AND parse_options = :options ORDER BY id LIMIT 1"
            ),
            {"sha": sha, "options": PARSE_OPTIONS},
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None


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
