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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np
import pandas as pd
import sqlalchemy as sa

from ..ingest.hashing import count_repeats
from ..measures.sqlfile import load_sql
from ..storage import is_server, publish_all
from . import store
from .direct import read_and_store
from .mapping import line_measures, relstring_length
from .options import Options, Request, Summary, TrecEvalExit, parse_args
from .output import format_line, format_value
from .reader import Qrels, read_qrels, read_run, results_sha256

RUN_TABLE = "te_run"
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
    from ..warehouse import DB_ENV_VAR

    out = out or sys.stdout
    err = err or sys.stderr
    if db is None:
        db = os.environ.get(DB_ENV_VAR) or ":memory:"
    try:
        options = parse_args(argv)
        return evaluate(options, out, db=":memory:" if read_only else db)
    except TrecEvalExit as stop:
        out.flush()
        err.write(stop.stderr)
        return stop.code


def evaluate(options: Options, out: TextIO, *, db: str | None = None) -> int:
    """Evaluate and print; raises :class:`TrecEvalExit` on trec_eval's fatal errors."""
    requests = options.requests()
    qrels = read_qrels(options.qrels)
    run_path, cleanup = _run_file(options.results)
    try:
        return _evaluate(options, requests, qrels, run_path, out, db)
    finally:
        if cleanup:
            os.unlink(run_path)


def _run_file(path: str) -> tuple[str, bool]:
    """A results name starting with '-' is standard input: spool it to a file first."""
    if not path.startswith("-"):
        return path, False
    with tempfile.NamedTemporaryFile(suffix=".run", delete=False) as tmp:
        tmp.write(sys.stdin.buffer.read())
    return tmp.name, True


def _evaluate(options, requests, qrels: Qrels, run_path: str, out, db) -> int:
    from ..warehouse import Warehouse

    topics = sorted(set(qrels.frame["qid"]))
    qrels_sha = store.content_hash(options.qrels)
    whitespace: set[int] = set()
    run_sha = results_sha256(run_path, whitespace)
    # A server warehouse: evaluate in a local scratch warehouse, then publish what it stored
    server = Warehouse(db) if is_server(db) else None
    wh = Warehouse(":memory:" if server is not None else db)
    try:
        with wh.connect() as conn:
            stored = store.stored_run(conn, run_sha)
        direct = None
        if stored is not None:
            runid, run_topics, duplicate = stored["system_tag"], _stored_topics(wh, stored), None
        else:
            direct = read_and_store(
                wh,
                run_path,
                run_sha,
                frozenset(whitespace),
                lambda found: _first_failure(options, requests, qrels, topics, found, None) is None,
            )
            if direct is not None:
                runid, run_topics, duplicate = direct.runid, direct.topics, None
            else:
                runid, run_topics, duplicate = _read(wh, options, run_path, topics)
        failure = _first_failure(options, requests, qrels, topics, run_topics, duplicate)
        scratch = failure is not None or (stored is None and duplicate is not None)
        limit = failure.index if failure else len(topics)
        if scratch:
            if stored is not None:  # the run was not read: take its stored rows
                _load_stored_run(wh, stored["id"])
            per_topic = _scratch_values(wh, options, requests, qrels, topics, limit)
        else:
            if stored is not None:
                run_id = stored["id"]
            elif direct is not None:
                run_id = direct.run_id
            else:
                run_id = _store_run(wh, run_path, run_sha, runid)
            qrels_id = _store_qrels(wh, qrels, options.qrels, qrels_sha)
            per_topic = _values(wh, options, requests, run_id, qrels_id, topics, limit)
            if server is not None:
                publish_all(server, wh)
    finally:
        wh.close()
        if server is not None:
            server.close()
    missing = [i for i, qid in enumerate(topics[:limit]) if qid not in run_topics]
    if options.complete:
        for i in missing:
            _overwrite_dummy(per_topic, i, requests)
    _print(options, requests, topics, per_topic, out, runid, qrels.num_positive, failure)
    if failure:
        raise TrecEvalExit(failure.code, failure.stderr)
    return 0


# --- reading and storing ----------------------------------------------------------------------


def _read(wh, options: Options, run_path: str, topics: list[str]):
    """Read the run into the warehouse connection's temporary table; find duplicates.

    Returns:
        (runid, the run's topics, the first fatal duplicate as (topic index, docno) or None;
        ``()`` when the run has duplicates none of which is fatal).
    """
    with wh.connect() as conn:
        duck = wh.duckdb_connection(conn)
        run = read_run(duck, run_path, RUN_TABLE)
        run_topics = {
            q for (q,) in duck.execute(f"SELECT DISTINCT qid FROM {RUN_TABLE}").fetchall()
        }
        # a repeated 64-bit hash only sends the run to the exact check below
        pairs = duck.execute(f"SELECT hash(qid, docno) AS h FROM {RUN_TABLE}").fetchnumpy()["h"]
        duplicate = _fatal_duplicate(duck, options, topics) if count_repeats(pairs) else None
    return run.runid, run_topics, duplicate


def _fatal_duplicate(duck, options: Options, topics: list[str]):
    """trec_eval's duplicate check: only in the kept top -M of evaluated topics."""
    duck.register("te_topics_frame", pd.DataFrame({"qid": topics, "tidx": range(len(topics))}))
    try:
        row = duck.execute(
            f"""
            WITH ranked AS (
                SELECT t.tidx, r.docno,
                       row_number() OVER (PARTITION BY r.qid ORDER BY r.score DESC,
                                          r.docno DESC) AS pos
                FROM {RUN_TABLE} AS r JOIN te_topics_frame AS t ON t.qid = r.qid
            )
            SELECT tidx, min(docno) FROM (
                SELECT tidx, docno FROM ranked WHERE pos <= $max_docs
                GROUP BY tidx, docno HAVING count(*) > 1
            ) GROUP BY tidx ORDER BY tidx LIMIT 1
            """,
            {"max_docs": options.max_docs if options.max_docs is not None else 2**62},
        ).fetchall()
    finally:
        duck.unregister("te_topics_frame")
    return tuple(row[0]) if row else ()


def _stored_topics(wh, stored: dict) -> set[str]:
    with wh.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT DISTINCT query_id FROM run_rows WHERE run_id = :run_id"),
            {"run_id": stored["id"]},
        ).scalars()
        return set(rows)


def _load_stored_run(wh, run_id: int) -> None:
    with wh.connect() as conn:
        wh.duckdb_connection(conn).execute(
            f"CREATE OR REPLACE TEMP TABLE {RUN_TABLE} AS SELECT query_id AS qid, "
            "doc_id AS docno, score FROM run_rows WHERE run_id = ?",
            [run_id],
        )


def _store_run(wh, run_path: str, sha: str, runid: str) -> int:
    with wh.transaction() as conn:
        duck = wh.duckdb_connection(conn)
        run_id = store.store_run(conn, duck, RUN_TABLE, run_path, sha, runid)
    with wh.connect() as conn:
        wh.duckdb_connection(conn).execute(f"DROP TABLE IF EXISTS {RUN_TABLE}")
    return run_id


def _store_qrels(wh, qrels: Qrels, path: str, sha: str) -> int:
    with wh.transaction() as conn:
        return store.store_qrels(conn, wh.duckdb_connection(conn), qrels.frame, path, sha)


def _scratch_values(wh, options, requests, qrels: Qrels, topics, limit: int) -> TopicValues:
    """Values of the first ``limit`` topics computed in memory (duplicates dropped first)."""
    from ..warehouse import Warehouse

    if limit == 0:
        return TopicValues(0)
    frame = qrels.frame.drop_duplicates(["qid", "docno"], keep="first")
    with wh.connect() as conn:
        # Arrow, not pandas: a NaN score must stay NaN (pandas' NaN would arrive as NULL)
        ranked = (
            wh.duckdb_connection(conn)
            .sql(
                f"""
            SELECT qid, docno, score FROM (
                SELECT qid, docno, score,
                       row_number() OVER (PARTITION BY qid, docno
                                          ORDER BY score DESC) AS copy
                FROM {RUN_TABLE}
            ) WHERE copy = 1
            """
            )
            .to_arrow_table()
        )
    with Warehouse(":memory:") as scratch:
        with scratch.transaction() as conn:
            duck = scratch.duckdb_connection(conn)
            duck.register("te_scratch_run", ranked)
            duck.execute(f"CREATE TEMP TABLE {RUN_TABLE} AS SELECT * FROM te_scratch_run")
            duck.unregister("te_scratch_run")
            run_id = store.store_run(conn, duck, RUN_TABLE, "scratch", "0" * 64, "scratch")
            qrels_id = store.store_qrels(conn, duck, frame, "scratch", "0" * 64)
        return _values(scratch, options, requests, run_id, qrels_id, topics, limit)


# --- values -----------------------------------------------------------------------------------


@dataclass
class TopicValues:
    """The values of the first ``num_topics`` topics: ``columns[line][i]`` is topic i's."""

    num_topics: int
    columns: dict[str, list] = field(default_factory=dict)


def _values(wh, options, requests, run_id: int, qrels_id: int, topics, limit: int) -> TopicValues:
    """The values of every printed line for the first ``limit`` topics."""
    from ..evaluation import evaluate as evaluate_stored

    lines = [(line, m) for r in requests for line, m in line_measures(r, options)]
    table = TopicValues(limit)
    if limit == 0:
        return table
    wanted = topics[:limit]
    if lines:
        measures = list(dict.fromkeys(m for _, m in lines))
        engine_options = {}
        if options.max_docs is not None:
            engine_options["max_rank"] = options.max_docs
        if options.judged_only:
            engine_options["judged_only"] = True
        result = evaluate_stored(
            wh,
            qrels_id,
            [run_id],
            [m.name for m in measures],  # canonical names parse back to the same measures
            relevance_level=options.level,
            missing_queries="zero",
            options=engine_options,
            with_query_counts=False,
        )
        # one row per topic, one column per measure (every evaluated topic has every measure)
        wide = result.per_query.pivot(index="query", columns="measure", values="value")
        position = wide.index.get_indexer(wanted)  # -1: a topic without values
        for line, measure in lines:
            if measure.name in wide.columns:
                column = wide[measure.name].to_numpy(dtype=float)
                found = np.where(position >= 0, column[position], measure.empty_value)
                table.columns[line] = found.tolist()
            else:
                table.columns[line] = [measure.empty_value] * limit
    for request in requests:
        if request.name == "relstring":
            length = relstring_length(request)
            found = relstrings(wh, options, run_id, qrels_id, length)
            # trec_eval's -c dummy ranking is one document not in the qrels (gone under -J
            # or -M0)
            dummy = "-" if length >= 1 and not options.judged_only and options.max_docs != 0 else ""
            table.columns[request.line_names()[0]] = [found.get(qid, dummy) for qid in wanted]
    return table


def relstrings(
    wh, options: Options, run_id: int, qrels_id: int, length: int, *, reuse_ranking: bool = True
) -> dict[str, str]:
    """trec_eval's relstring of every query the run answered.

    When the engine has just ranked this run against this qrels set with these options (its
    tables are on the connection), the strings are read from that ranking
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
    with wh.connect() as conn:
        ranked = reuse_ranking and ranking_matches(conn, run_id, qrels_id, options)
        sql = load_sql(RELSTRING_RANKED_SQL if ranked else RELSTRING_SQL)
        return dict(conn.execute(sql.statements[-1], sql.binds(binds)).fetchall())


def ranking_matches(conn: sa.Connection, run_id: int, qrels_id: int, options: Options) -> bool:
    """Whether the engine's ranking tables on ``conn`` are this run's under these options."""
    if not sa.inspect(conn).has_table("rh_request"):
        return False
    request = conn.execute(sa.text("SELECT * FROM rh_request")).mappings().first()
    return request is not None and (
        list(request["run_ids"]) == [run_id]
        and request["qrels_id"] == qrels_id
        and request["max_rank"] == options.max_docs
        and request["judged_only"] == options.judged_only
        and not request["skip_missing"]
    )


# --- trec_eval's aborts and output ------------------------------------------------------------


def _first_failure(options, requests, qrels: Qrels, topics, run_topics, duplicate):
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
        frame = qrels.frame
        dups = frame[frame.duplicated(["qid", "docno"], keep=False)]
        if len(dups):
            qid = min(dups["qid"])
            docno = min(dups.loc[dups["qid"] == qid, "docno"])
            failures.append(
                Failure(
                    topics.index(qid), 4, f"trec_eval.form_res_rels: duplicate docs {docno}\n{cant}"
                )
            )
        first = frame[frame["qid"] == topics[0]]
        if (first["rel"] < 0).all():
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
        if request.name in ("utility", "rbp_resid", "relstring") and not request.explicit:
            table.columns[request.name][i] = "" if request.name == "relstring" else 0.0


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
