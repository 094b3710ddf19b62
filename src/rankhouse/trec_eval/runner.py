"""``rankhouse trec-eval``: trec_eval 10's behaviour from command line to printed lines.

The qrels and the run are read with trec_eval's rules (:mod:`.reader`; the run straight into
DuckDB), stored in the warehouse as a normal qrels set and run (:mod:`.store`; a file stored
before is recognised by its hash and not read again), evaluated by the SQL measure engine
through :func:`rankhouse.evaluation.evaluate` (so every value is stored like any evaluation,
and a repeated request reuses it), and printed exactly as trec_eval prints them, including its
aborts (exit codes of spec section 11) and its ``-c`` output quirks (spec 5).

When trec_eval would abort, or the run holds a document twice for a query (which a stored run
cannot), the numbers are computed in a scratch in-memory warehouse and nothing is stored.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TextIO

from ..backends import open_backend, resolve_target
from ..background import Background
from ..defaults import DB_ENV_VAR
from ..engine import compute, load_files, scratch_database
from ..errors import RankhouseError
from ..evaluation import evaluate as evaluate_stored
from ..ingest.hashing import count_repeated, may_hold_numpy_rows
from ..measures.sqlfile import load_sql
from . import store
from .direct import DirectRun, read_and_store, read_unstored
from .mapping import line_measures, relstring_length
from .options import HELP, Options, Request, Summary, TrecEvalExit, asks_for_help, parse_args
from .output import format_line, format_value
from .reader import Qrels, read_qrels, read_run, results_odd_bytes, results_sha256

RUN_TABLE = "te_run"
QRELS_TABLE = "te_qrels"
#: Ids of the run and qrels set in a bare engine database (nothing else is there).
RUN_ID = QRELS_ID = 1
#: Ids of the deduplicated copy evaluated in a rolled-back transaction (never stored).
COPY_ID = -1
RELSTRING_SQL = "trec_eval/relstring.sql"
RELSTRING_RANKED_SQL = "trec_eval/relstring_ranked.sql"


@dataclass
class Failure:
    """trec_eval stops at topic ``index`` (per-topic lines of earlier topics stay printed)."""

    index: int
    code: int
    stderr: str


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
        read_only: evaluate without storing anything (scratch warehouse).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    if asks_for_help(argv):  # trec_eval's -h prints its help and exits 0
        out.write(HELP)
        return 0
    if db is None:
        db = os.environ.get(DB_ENV_VAR) or ":memory:"
    try:
        options = parse_args(argv)
        return evaluate(options, out, db=":memory:" if read_only else db)
    except TrecEvalExit as stop:
        out.flush()
        err.write(stop.stderr)
        return stop.code
    except RankhouseError as exc:  # the warehouse's, not trec_eval's (no driver, a conflict)
        out.flush()
        err.write(f"Error: {exc.cli_text()}\n")
        return 1


def evaluate(options: Options, out: TextIO, *, db: str | None = None) -> int:
    """Evaluate and print; raises :class:`TrecEvalExit` on trec_eval's fatal errors.

    ``db=":memory:"`` keeps nothing (trec_eval's own behaviour): the files are read into a
    bare in-memory engine database and evaluated there. Otherwise they are stored in the
    warehouse ``db`` and every value with them.
    """
    requests = options.requests()
    if db == ":memory:":
        return _evaluate_unstored(options, requests, out)
    return _evaluate_stored(options, requests, out, db)


@contextmanager
def _run_file(path: str) -> Iterator[str]:
    """A results name starting with '-' is standard input: spooled to a file first."""
    if not path.startswith("-"):
        yield path
        return
    with tempfile.NamedTemporaryFile(suffix=".run", delete=False) as tmp:
        tmp.write(sys.stdin.buffer.read())
    try:
        yield tmp.name
    finally:
        os.unlink(tmp.name)


def _evaluate_unstored(options, requests, out) -> int:
    duck = scratch_database()
    try:
        with _run_file(options.results) as run_path:
            # the run goes into run_rows on a second connection while the qrels are read
            with _RunReading(duck, run_path) as reading:
                qrels = read_qrels(duck, options.qrels, QRELS_TABLE)
                # while the run is read: the judgments the engine evaluates (a copy that is
                # evaluated instead takes its own, under COPY_ID), and the measures' SQL
                duck.execute(
                    f"INSERT INTO judgments SELECT $id, query_id, doc_id, grade FROM {QRELS_TABLE}",
                    {"id": QRELS_ID},
                )
                load_files([m for _, m in _lines(options, requests)])
                if may_hold_numpy_rows(run_path):
                    import numpy  # noqa: F401  (the run's checks and the values use it)
            topics = qrels.topics
            direct = reading.result()  # a problem of the run is reported after the qrels'
            if (
                direct is not None
                and _first_failure(options, requests, qrels, direct.topics, None) is not None
            ):  # trec_eval would stop part-way: the general reader takes the run
                duck.execute("DELETE FROM run_rows WHERE run_id = ?", [RUN_ID])
                direct = None
            if direct is not None:
                runid, run_topics, duplicate = direct.runid, direct.topics, None
            else:
                runid, run_topics, duplicate = _read(duck, options, run_path, topics)
        failure = _first_failure(options, requests, qrels, run_topics, duplicate)
        limit = failure.index if failure else len(topics)
        if failure is not None or duplicate is not None:
            per_topic = _values_of_a_copy(duck, options, requests, qrels, limit)
        else:
            if direct is None:
                duck.execute(
                    f"INSERT INTO run_rows SELECT $id, qid, docno, NULL, score FROM {RUN_TABLE}",
                    {"id": RUN_ID},
                )
            per_topic = _engine_values(
                duck, options, requests, RUN_ID, QRELS_ID, topics, limit, private=True
            )
    finally:
        duck.close()
    return _finish(options, requests, qrels, topics, run_topics, per_topic, runid, failure, out)


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

    def __init__(self, duck, run_path: str) -> None:
        self._cursor = duck.cursor()
        self._run_path = run_path
        self._stopped = threading.Event()
        self._reading: Background[DirectRun | None] | None = None

    def _read(self) -> DirectRun | None:
        # the file's odd bytes decide the reader; the caller judges the topics it finds
        whitespace = results_odd_bytes(self._run_path)
        if self._stopped.is_set():
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


def _evaluate_stored(options, requests, out, db) -> int:
    # a store that computes elsewhere (a server): evaluated in its local staging warehouse,
    # then what that stored is published; a file is held for the whole run (one opening)
    target = open_backend(resolve_target(db), hold=True)
    try:
        with target.staging() as wh:
            return _evaluate_in(options, requests, out, target, wh)
    finally:
        target.close()


def _evaluate_in(options, requests, out, target, wh) -> int:
    with wh.connect() as conn:
        duck = conn.duck
    qrels = read_qrels(duck, options.qrels, QRELS_TABLE)
    topics = qrels.topics
    qrels_sha = store.content_hash(options.qrels)
    with _run_file(options.results) as run_path:
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
                lambda found: _first_failure(options, requests, qrels, found, None) is None,
            )
            if direct is not None:
                runid, run_topics, duplicate = direct.runid, direct.topics, None
            else:
                runid, run_topics, duplicate = _read(duck, options, run_path, topics)
        failure = _first_failure(options, requests, qrels, run_topics, duplicate)
        limit = failure.index if failure else len(topics)
        if failure is not None or (stored is None and duplicate is not None):
            if stored is not None:  # the run was not read: take its stored rows
                _load_stored_run(duck, stored["id"])
            per_topic = _values_of_a_copy(duck, options, requests, qrels, limit)
        else:
            if stored is not None:
                run_id = stored["id"]
            elif direct is not None:
                run_id = direct.run_id
            else:
                run_id = _store_run(wh, run_path, run_sha, runid)
            qrels_id = _store_qrels(wh, options.qrels, qrels_sha)
            per_topic = _stored_values(wh, options, requests, run_id, qrels_id, topics, limit)
            target.publish_all(wh)
    return _finish(options, requests, qrels, topics, run_topics, per_topic, runid, failure, out)


def _finish(options, requests, qrels: Qrels, topics, run_topics, per_topic, runid, failure, out):
    """trec_eval's -c overwrites, its output, and its exit."""
    limit = per_topic.num_topics
    missing = [i for i, qid in enumerate(topics[:limit]) if qid not in run_topics]
    if options.complete:
        for i in missing:
            _overwrite_dummy(per_topic, i, requests)
    _print(options, requests, topics, per_topic, out, runid, qrels.num_positive, failure)
    if failure:
        raise TrecEvalExit(failure.code, failure.stderr)
    return 0


# --- reading and storing ----------------------------------------------------------------------


def _read(duck, options: Options, run_path: str, topics: list[str]):
    """Read the run into the temporary table ``te_run`` on ``duck``; find duplicates.

    Returns:
        (runid, the run's topics, the first fatal duplicate as (topic index, docno) or None;
        ``()`` when the run has duplicates none of which is fatal).
    """
    run = read_run(duck, run_path, RUN_TABLE)
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


def _values_of_a_copy(duck, options, requests, qrels: Qrels, limit: int) -> TopicValues:
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
        return _engine_values(duck, options, requests, COPY_ID, COPY_ID, qrels.topics, limit)
    finally:
        duck.rollback()


# --- values -----------------------------------------------------------------------------------


@dataclass
class TopicValues:
    """The values of the first ``num_topics`` topics: ``columns[line][i]`` is topic i's."""

    num_topics: int
    columns: dict[str, list] = field(default_factory=dict)


def _engine_options(options: Options) -> dict:
    engine_options: dict = {}
    if options.max_docs is not None:
        engine_options["max_rank"] = options.max_docs
    if options.judged_only:
        engine_options["judged_only"] = True
    return engine_options


def _lines(options, requests) -> list:
    return [(line, m) for r in requests for line, m in line_measures(r, options)]


def _engine_values(
    duck, options, requests, run_id, qrels_id, topics, limit, *, private: bool = False
) -> TopicValues:
    """The printed lines' values computed by the engine on ``duck`` (nothing stored;
    ``private``: see :func:`rankhouse.engine.compute`)."""
    lines = _lines(options, requests)
    by_query: dict[str, dict[str, float]] = {}
    ready = None
    if lines and limit:
        values = compute(
            duck,
            [run_id],
            qrels_id,
            list(dict.fromkeys(m for _, m in lines)),
            relevance_level=options.level,
            missing_queries="zero",
            private=private,
            **_engine_options(options),
        )
        queries, columns = values.columns(run_id)
        if queries == topics[:limit]:  # the usual case: the columns are the lines' values
            ready = columns
        else:
            by_query = {n: dict(zip(queries, col, strict=True)) for n, col in columns.items()}
    return _topic_values(
        duck, options, requests, lines, by_query, run_id, qrels_id, topics, limit, ready
    )


def _stored_values(wh, options, requests, run_id, qrels_id, topics, limit) -> TopicValues:
    """The printed lines' values, evaluated through the warehouse (stored, or reused)."""
    lines = _lines(options, requests)
    by_query: dict[str, dict[str, float]] = {}
    if lines and limit:
        result = evaluate_stored(
            wh,
            qrels_id,
            [run_id],
            [m.name for m in dict.fromkeys(m for _, m in lines)],  # canonical names
            relevance_level=options.level,
            missing_queries="zero",
            options=_engine_options(options),
            with_query_counts=False,
            allow_no_overlap=True,  # trec_eval's own rules apply
        )
        found = result.per_query_values
        for measure, query, value in zip(found.measure, found.query, found.value, strict=True):
            by_query.setdefault(measure, {})[query] = value
    with wh.connect() as conn:
        duck = conn.duck
    return _topic_values(duck, options, requests, lines, by_query, run_id, qrels_id, topics, limit)


def _topic_values(
    duck, options, requests, lines, by_query, run_id, qrels_id, topics, limit, ready=None
):
    """Every printed line's values for the first ``limit`` topics; relstring from ``duck``.

    ``by_query`` maps measure name -> {query id: value}; ``ready``, when given, maps measure
    name -> the values of exactly those topics, in order (then ``by_query`` is not read).
    """
    table = TopicValues(limit)
    if limit == 0:
        return table
    wanted = topics[:limit]
    for line, measure in lines:
        if ready is not None:
            table.columns[line] = list(ready[measure.name])  # a copy: -c overwrites in place
            continue
        found = by_query.get(measure.name, {})
        if len(found) == len(wanted) and list(found) == wanted:  # the usual case, at C speed
            table.columns[line] = list(found.values())
        else:
            table.columns[line] = [found.get(qid, measure.empty_value) for qid in wanted]
    for request in requests:
        # relstring has no summary line: without -q nothing of it is printed
        if request.name == "relstring" and options.per_topic:
            length = relstring_length(request)
            found = relstrings(duck, options, run_id, qrels_id, length)
            # trec_eval's -c dummy ranking is one document not in the qrels (gone under -J
            # or -M0)
            dummy = "-" if length >= 1 and not options.judged_only and options.max_docs != 0 else ""
            table.columns[request.line_names()[0]] = [found.get(qid, dummy) for qid in wanted]
    return table


def relstrings(
    duck, options: Options, run_id: int, qrels_id: int, length: int, *, reuse_ranking: bool = True
) -> dict[str, str]:
    """trec_eval's relstring of every query the run answered.

    When the engine has just ranked this run against this qrels set with these options (its
    tables are on the DuckDB connection ``duck``), the strings are read from that ranking
    (``sql/trec_eval/relstring_ranked.sql``); otherwise, or without ``reuse_ranking``, the
    run's rows are ranked here.
    """
    length = max(length, 0)
    if options.judged_only:  # the judged ones among the top -M (all of them without -M)
        depth = options.max_docs
    else:
        depth = length if options.max_docs is None else min(length, options.max_docs)
    binds = {
        "run_id": run_id,
        "qrels_id": qrels_id,
        "judged_only": options.judged_only,
        "length": length,
        "depth": depth,
    }
    ranked = reuse_ranking and ranking_matches(duck, run_id, qrels_id, options)
    sql = load_sql(RELSTRING_RANKED_SQL if ranked else RELSTRING_SQL)
    return dict(sql.run(duck, binds).fetchall())


def ranking_matches(duck, run_id: int, qrels_id: int, options: Options) -> bool:
    """Whether the engine's ranking tables on the DuckDB connection ``duck`` are this run's
    under these options."""
    found = duck.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'rh_request'"
    ).fetchone()[0]
    if not found:
        return False
    request = duck.execute(
        "SELECT run_ids, qrels_id, max_rank, judged_only, skip_missing FROM rh_request"
    ).fetchone()
    if request is None:
        return False
    run_ids, stored_qrels, max_rank, judged_only, skip_missing = request
    return (
        list(run_ids) == [run_id]
        and stored_qrels == qrels_id
        and max_rank == options.max_docs
        and judged_only == options.judged_only
        and not skip_missing
    )


# --- trec_eval's aborts and output ------------------------------------------------------------


def _first_failure(options, requests, qrels: Qrels, run_topics, duplicate):
    topics = qrels.topics
    failures: list[Failure] = []
    missing = [i for i, qid in enumerate(topics) if qid not in run_topics]
    if missing and not options.complete:
        qid = topics[missing[0]]
        failures.append(
            Failure(missing[0], 4, f"trec_eval: result qid '{qid}' not found in qrels\n")
        )
    ranked = [r for r in requests if r.measure.needs_ranking]
    if ranked:
        name = ranked[0].name
        cant = f"trec_eval: Can't calculate measure '{name}'\n"
        if duplicate:
            index, docno = duplicate
            failures.append(
                Failure(index, 4, f"trec_eval.form_res_qrels: duplicate docs {docno}{cant}")
            )
        if qrels.duplicate is not None:
            qid, docno = qrels.duplicate
            failures.append(
                Failure(
                    topics.index(qid), 4, f"trec_eval.form_res_rels: duplicate docs {docno}\n{cant}"
                )
            )
        if qrels.first_topic_all_negative:
            failures.append(Failure(0, 4, cant))
        utility = next((r for r in requests if r.name == "utility"), None)
        if utility is not None and len(utility.values) != 4:
            failures.append(
                Failure(
                    0,
                    4,
                    "trec_eval: improper number of coefficients for "
                    f"utility\n{cant.replace(name, 'utility')}",
                )
            )
    return min(failures, key=lambda f: f.index) if failures else None


def _overwrite_dummy(table: TopicValues, i: int, requests: list[Request]) -> None:
    # trec_eval overwrites these by exact printed name, so parameterised names keep the
    # dummy's values (spec 5, QUIRK). num_ret and unj_* are already 0 in SQL.
    for request in requests:
        name = request.name
        overwritten = name in ("utility", "rbp_resid", "relstring") and not request.explicit
        if overwritten and name in table.columns:  # relstring is only read for -q
            table.columns[name][i] = "" if name == "relstring" else 0.0


def _print(options, requests, topics, per_topic, out, runid, num_positive, failure) -> None:
    lines = []
    if options.per_topic:
        for i, qid in enumerate(topics[: per_topic.num_topics]):
            for request in requests:
                if not request.measure.per_topic:
                    continue
                quoted = request.name == "relstring"
                integer = request.measure.integer
                for name in request.line_names():
                    value = format_value(per_topic.columns[name][i], integer=integer, quoted=quoted)
                    lines.append(format_line(name, qid, value))
    if not failure and not options.no_summary:
        for request in requests:
            for name in request.line_names():
                value = _summary(request, name, per_topic, options, runid, num_positive)
                if value is not None:
                    lines.append(format_line(name, "all", value))
    out.write("".join(lines))


def _summary(request: Request, name, per_topic, options, runid, num_positive) -> str | None:
    kind = request.measure.summary
    num_q = per_topic.num_topics
    if kind is Summary.RUNID:
        return runid
    if kind is Summary.COUNT:
        return format_value(num_q, integer=True)
    if kind is Summary.NONE:
        return None
    values = per_topic.columns[name]
    if kind is Summary.SUM:
        total = num_positive if (options.complete and name == "num_rel") else sum(values)
        return format_value(total, integer=True)
    total = 0.0
    if kind is Summary.GMEAN:
        for v in values:
            total += math.log(max(v, 0.00001))
        return format_value(math.exp(total / num_q) if num_q else 0.0)
    for v in values:
        total += v
    return format_value(total / num_q if num_q else 0.0)
