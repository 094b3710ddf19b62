"""``trec-eval`` without a warehouse, as trec_eval itself: nothing is kept.

The two files are read into a bare in-memory engine database: the run straight into
``run_rows`` by the direct path, on a second connection while the qrels are read
(:class:`_RunReading`), else by the general reader; the engine computes the values there.
"""

from __future__ import annotations

import threading

from ..engine import load_files, scratch_database
from ..ingest.staging import may_hold_numpy_rows
from ..lazy import Background
from .aborts import first_failure
from .command import run
from .direct import DirectRun, read_unstored
from .general import QRELS_TABLE, RUN_TABLE, read_general, values_of_a_copy
from .input_files import NotText, results_file, results_odd_bytes
from .options import BYTES, TEXT
from .output import finish
from .qrels_reader import read_qrels
from .values import checked_line_measures, engine_values

#: Ids of the run and qrels set in a bare engine database (nothing else is there).
RUN_ID = QRELS_ID = 1


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
    """The run file read by the direct path (:func:`.direct.read_unstored`) into ``run_rows``
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
