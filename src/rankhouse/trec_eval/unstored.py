"""``trec-eval`` without a warehouse, as trec_eval itself: nothing is kept; and how either
path gets the run into the engine's tables.

The two files are read into a bare in-memory engine database: the run straight into
``run_rows`` by the direct path, on a second connection while the qrels are read
(:class:`_RunReading`), else by the general reader; the engine computes the values there.

The direct path is ``trec-eval``'s common case at full speed: a run file whose lines are six
fields joined by single spaces (or single tabs), with scores that DuckDB and C's ``atof`` read
alike, is read the same way by trec_eval's general rules (see :func:`.files.read_run`), so it
goes to the database in one parallel pass, as ``rankhouse ingest``'s direct path does, instead
of through a temporary table and a copy. A file that is not like that, a document listed twice
for a query, or a run trec_eval would abort on, rolls the transaction back and returns None:
the general reader takes over and nothing is stored. The direct reader itself is ``rankhouse
ingest``'s (:func:`rankhouse.ingest.trec.insert_run_rows`).

The general reader puts the run into the temporary table :data:`RUN_TABLE`
(:func:`.files.read_run`), where its duplicates are found as trec_eval finds them: only within
the top ``-M`` documents of the topics it evaluates. When trec_eval would stop part-way, or
the run holds a duplicate (which a stored run cannot), the values are computed on a copy in a
transaction that is rolled back (:func:`values_of_a_copy`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from ..engine import load_files, scratch_database
from ..ingest.files import duckdb_readable
from ..ingest.sources import Source
from ..ingest.staging import count_repeated, count_repeated_documents, may_hold_numpy_rows
from ..ingest.trec import Fallback, insert_run_rows, only_separator, run_shape
from ..lazy import Background
from .files import NotText, Qrels, last_tag, read_qrels, read_run, results_file, results_odd_bytes
from .options import BYTES, TEXT, Options, run
from .values import TopicValues, checked_line_measures, engine_values, finish, first_failure

#: Ids of the run and qrels set in a bare engine database (nothing else is there).
RUN_ID = QRELS_ID = 1
#: The temporary tables the qrels and (by the general reader) the run are read into.
RUN_TABLE = "te_run"
QRELS_TABLE = "te_qrels"
#: Ids of the deduplicated copy evaluated in a rolled-back transaction (never stored).
COPY_ID = -1


def main(argv, out=None, err=None) -> int:
    """trec_eval on ``argv``, keeping nothing (as trec_eval); the exit code."""
    return run(argv, out, err, lambda options, out: evaluate(options, options.requests(), out))


def evaluate(options, requests, out) -> int:
    """Evaluate the files of ``options`` in a bare engine database and print; the exit code.

    Files are read as UTF-8 text; when one is not UTF-8, both are read again as bytes, as
    trec_eval reads them (:data:`.options.BYTES`).

    Raises:
        TrecEvalExit: trec_eval's fatal errors.
    """
    try:
        return evaluate_read_as(options, requests, out, TEXT)
    except NotText:
        return evaluate_read_as(options, requests, out, BYTES)


def evaluate_read_as(options, requests, out, encoding: str) -> int:
    """:func:`evaluate` with the files read as ``encoding`` (:data:`.options.TEXT` or
    :data:`.options.BYTES`).

    Raises:
        TrecEvalExit: trec_eval's fatal errors.
        NotText: a file is not UTF-8 and ``encoding`` is TEXT.
    """
    duck = scratch_database()
    try:
        with results_file(options.results) as run_path:
            # the run goes into run_rows on a second connection while the qrels are read
            with _RunReading(duck, run_path, encoding) as reading:
                qrels = read_qrels(duck, options.qrels, QRELS_TABLE, encoding)
                # while the run is read: the judgments the engine evaluates (a copy that is
                # evaluated instead takes its own, under COPY_ID), and the measures' SQL
                duck.execute(
                    f"INSERT INTO judgments SELECT $id, query_id, doc_id, grade FROM {QRELS_TABLE}",
                    {"id": QRELS_ID},
                )
                load_files([m for _, m in checked_line_measures(options, requests)])
                if may_hold_numpy_rows(run_path):
                    import numpy  # noqa: F401  (the run's checks and the values use it)
            topics = qrels.topics
            direct = reading.result()  # a problem of the run is reported after the qrels'
            if (
                direct is not None
                and first_failure(options, requests, qrels, direct.topics, None) is not None
            ):  # trec_eval would stop part-way: the general reader takes the run
                duck.execute("DELETE FROM run_rows WHERE run_id = ?", [RUN_ID])
                direct = None
            if direct is not None:
                runid, run_topics, duplicate = direct.runid, direct.topics, None
            else:
                runid, run_topics, duplicate = read_general(
                    duck, options, run_path, topics, encoding
                )
        failure = first_failure(options, requests, qrels, run_topics, duplicate)
        limit = failure.index if failure else len(topics)
        if failure is not None or duplicate is not None:
            per_topic = values_of_a_copy(duck, options, requests, qrels, limit)
        else:
            if direct is None:
                duck.execute(
                    f"INSERT INTO run_rows SELECT $id, qid, docno, NULL, score FROM {RUN_TABLE}",
                    {"id": RUN_ID},
                )
            per_topic = engine_values(
                duck, options, requests, RUN_ID, QRELS_ID, topics, limit, private=True
            )
    finally:
        duck.close()
    return finish(
        options, requests, qrels, topics, run_topics, per_topic, runid, failure, out, encoding
    )


class _RunReading:
    """The run file read by the direct path (:func:`read_unstored`) into ``run_rows``
    of the engine's database, on a connection of its own and in a thread, while the caller
    reads the qrels on ``duck`` (DuckDB runs each of the two on one core: DL19's two files,
    51 ms one after the other, 37 ms side by side).

    Leaving the ``with`` block waits for the thread; leaving it with an exception (the
    qrels' error, which trec_eval reports first) stops the reading (DuckDB's statements are
    interrupted until the thread ends: 7 million lines need not be read for a bad qrels
    file) and forgets what it found or raised.
    """

    def __init__(self, duck, run_path: str, encoding: str = TEXT) -> None:
        self._cursor = duck.cursor()
        self._run_path = run_path
        self._encoding = encoding
        self._stopped = threading.Event()
        self._reading: Background[DirectRun | None] | None = None

    def _read(self) -> DirectRun | None:
        # the file's odd bytes decide the reader; the caller judges the topics it finds
        whitespace = results_odd_bytes(self._run_path)
        if self._stopped.is_set() or self._encoding != TEXT:  # bytes: the general reader's
            return None
        return read_unstored(self._cursor, self._run_path, whitespace, None, RUN_ID)

    def __enter__(self) -> _RunReading:
        self._reading = Background(self._read, "rankhouse-run")
        return self

    def __exit__(self, kind, *_) -> None:
        assert self._reading is not None
        if kind is not None:
            self._stopped.set()
            # again and again: an interrupt that comes before a statement starts is lost
            while not self._reading.wait(0.01):
                self._cursor.interrupt()
        self._reading.wait()
        self._cursor.close()

    def result(self) -> DirectRun | None:
        """The run the direct path read, or None (the general reader must read it); raises
        what the reading raised (a missing or empty run file)."""
        assert self._reading is not None
        return self._reading.result()


# --- a regular run, straight into run_rows -------------------------------------------------


class DirectRun(NamedTuple):
    """A run the direct path stored."""

    run_id: int
    runid: str
    """trec_eval's run name: the tag of the last line."""
    topics: set[str]


def read_unstored(
    duck,
    run_path: str,
    whitespace: frozenset[int],
    accept: Callable[[set[str]], bool] | None,
    run_id: int,
) -> DirectRun | None:
    """The same one-pass read into ``run_rows`` of a bare engine database (no catalogue);
    ``accept`` None takes any topics (the caller judges them)."""
    with regular_run(run_path, whitespace) as regular:
        if regular is None:
            return None
        duck.begin()
        found = insert_direct(duck, *regular, run_id, accept)
        if found is None:
            duck.rollback()
            return None
        duck.commit()
        return DirectRun(run_id, found.runid, found.topics)


class Found(NamedTuple):
    """What the direct reader inserted: trec_eval's run name, the topics, the rows."""

    runid: str
    topics: set[str]
    num_rows: int


@contextmanager
def regular_run(run_path: str, whitespace: frozenset[int]) -> Iterator[tuple[Source, str] | None]:
    """(the run as a source the direct path reads, its one separator), or None when the file
    is not regular."""
    with duckdb_readable(Path(run_path), run_path, keep_gzip=False) as (plain, _):
        source = Source(run_path, Path(run_path), None, "trec", read_path=plain)
        shape = run_shape(source)
        if shape is None or not only_separator(lambda: whitespace, shape[0]):
            yield None
        else:
            yield source, shape[0]


def insert_direct(duck, source: Source, separator: str, run_id: int, accept) -> Found | None:
    """Insert the rows in the caller's transaction; None when the general reader must take
    the file (the caller rolls back): the direct reader stopped at a line, a document is
    listed twice for a query (the general reader finds the one trec_eval reports), or
    ``accept`` refuses the topics."""
    num_rows = insert_run_rows(duck, source, "score", "none", separator, None, run_id)
    if isinstance(num_rows, Fallback) or count_repeated_documents(duck, run_id, num_rows):
        return None
    topics = {
        query
        for (query,) in duck.execute(
            "SELECT DISTINCT query_id FROM run_rows WHERE run_id = ?", [run_id]
        ).fetchall()
    }
    if accept is not None and not accept(topics):
        return None
    return Found(last_tag(str(source.data_path)), topics, num_rows)


# --- the general reader, and the values of a copy ------------------------------------------


def read_general(duck, options: Options, run_path: str, topics: list[str], encoding: str = TEXT):
    """Read the run into the temporary table ``te_run`` on ``duck`` (``encoding`` as
    :func:`.files.read_run`); find duplicates.

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
