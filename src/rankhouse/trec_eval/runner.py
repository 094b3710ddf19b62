"""``rankhouse trec-eval``: trec_eval 10's behaviour from command line to printed lines.

The run is read and ranked in DuckDB (score descending, docno descending, then ``-M`` and
``-J``), each qrels topic is evaluated in qid byte order, and the lines are printed exactly as
trec_eval prints them, including its aborts (exit codes of spec section 11) and the ``-c``
dummy-ranking quirks (spec 5).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

import duckdb
import numpy as np
import pandas as pd

from .compute import Settings, Topic, TopicEval
from .options import Options, Request, Summary, TrecEvalExit, parse_args
from .output import format_line, format_value
from .reader import read_qrels, read_run

DUMMY_DOCNO = "ceci_nest_pas_un_docno"
_BIG = 2**62

_RANKING_SQL = """
CREATE OR REPLACE TEMP TABLE te_kept AS
WITH sorted AS (
    SELECT t.tidx, r.docno,
           row_number() OVER (PARTITION BY t.tidx ORDER BY r.score DESC, r.docno DESC) AS pos
    FROM te_run r JOIN te_topics t ON r.qid = t.qid
)
SELECT s.tidx, s.docno, s.pos,
       CASE WHEN q.rel IS NULL THEN -1 WHEN q.rel < 0 THEN -2 ELSE q.rel END AS rel
FROM sorted s
LEFT JOIN (SELECT tidx, docno, min(rel) AS rel FROM te_qrels GROUP BY ALL) q
       ON q.tidx = s.tidx AND q.docno = s.docno
WHERE s.pos <= $max_docs
"""


@dataclass
class Failure:
    """trec_eval stops at topic ``index`` (per-topic lines of earlier topics stay printed)."""

    index: int
    code: int
    stderr: str


def main(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run trec_eval on ``argv`` (its arguments without the program name); returns the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        options = parse_args(argv)
        return evaluate(options, out)
    except TrecEvalExit as stop:
        out.flush()
        err.write(stop.stderr)
        return stop.code


def evaluate(options: Options, out: TextIO) -> int:
    """Evaluate and print; raises :class:`TrecEvalExit` on trec_eval's fatal errors."""
    requests = options.requests()
    qrels = read_qrels(options.qrels)
    con = duckdb.connect(config={"default_collation": ""})
    con.execute("SET enable_progress_bar = false")
    try:
        run = read_run(con, options.results)
        topics = sorted(set(qrels.frame["qid"]))
        frame = qrels.frame.assign(
            tidx=qrels.frame["qid"].map({q: i for i, q in enumerate(topics)})
        )
        con.register("te_qrels_frame", frame)
        con.execute("CREATE TEMP TABLE te_qrels AS SELECT * FROM te_qrels_frame")
        con.register("te_topics_frame", pd.DataFrame({"qid": topics, "tidx": range(len(topics))}))
        con.execute("CREATE TEMP TABLE te_topics AS SELECT * FROM te_topics_frame")
        present = {
            i
            for (i,) in con.execute(
                "SELECT DISTINCT t.tidx FROM te_run r JOIN te_topics t ON r.qid = t.qid"
            ).fetchall()
        }
        missing = [i for i in range(len(topics)) if i not in present]
        if options.complete and missing:
            dummies = pd.DataFrame(
                {"qid": [topics[i] for i in missing], "docno": DUMMY_DOCNO, "score": 1.0}
            )
            con.register("te_dummies", dummies)
            con.execute(
                "INSERT INTO te_run (qid, docno, score) SELECT qid, docno, score FROM te_dummies"
            )
        max_docs = options.max_docs if options.max_docs is not None else _BIG
        con.execute(_RANKING_SQL, {"max_docs": max_docs})
        failure = _first_failure(con, options, requests, qrels.frame, topics, missing)
        limit = failure.index if failure else len(topics)
        per_topic = _compute(con, options, requests, frame, limit)
    finally:
        con.close()
    if options.complete:
        for i in missing:
            if i < limit:
                _overwrite_dummy(per_topic[i])
    _print(options, requests, topics, per_topic, out, run.runid, qrels.num_positive, failure)
    if failure:
        raise TrecEvalExit(failure.code, failure.stderr)
    return 0


def _first_failure(con, options, requests, qrels_frame, topics, missing) -> Failure | None:
    failures: list[Failure] = []
    if missing and not options.complete:
        qid = topics[missing[0]]
        failures.append(
            Failure(missing[0], 4, f"trec_eval: result qid '{qid}' not found in qrels\n")
        )
    ranked = [r for r in requests if r.measure.needs_ranking]
    if ranked:
        name = ranked[0].name
        cant = f"trec_eval: Can't calculate measure '{name}'\n"
        row = con.execute(
            "SELECT tidx, min(docno) FROM (SELECT tidx, docno FROM te_kept GROUP BY ALL "
            "HAVING count(*) > 1) GROUP BY tidx ORDER BY tidx LIMIT 1"
        ).fetchone()
        if row:
            failures.append(
                Failure(row[0], 4, f"trec_eval.form_res_qrels: duplicate docs {row[1]}{cant}")
            )
        dups = qrels_frame[qrels_frame.duplicated(["qid", "docno"], keep=False)]
        if len(dups):
            qid = min(dups["qid"])
            docno = min(dups.loc[dups["qid"] == qid, "docno"])
            failures.append(
                Failure(
                    topics.index(qid), 4, f"trec_eval.form_res_rels: duplicate docs {docno}\n{cant}"
                )
            )
        first = qrels_frame[qrels_frame["qid"] == topics[0]]
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


def _topic_info(frame: pd.DataFrame, count: int) -> list[Topic]:
    infos = [Topic(np.empty(0, dtype=np.int64), {}, -(2**63), []) for _ in range(count)]
    for tidx, rel in zip(frame["tidx"].tolist(), frame["rel"].tolist(), strict=True):
        if tidx >= count:
            continue
        info = infos[tidx]
        if rel >= 0:
            info.counts[rel] = info.counts.get(rel, 0) + 1
        if rel >= 1:
            info.graded.append(rel)
        info.max_grade = max(info.max_grade, rel)
    for info in infos:
        info.graded.sort(reverse=True)
    return infos


def _compute(con, options: Options, requests: list[Request], frame, limit: int) -> list[dict]:
    """Per topic (first ``limit`` topics): {line name: value} in table order."""
    where = "rel >= 0" if options.judged_only else "true"
    arrays = con.execute(
        f"SELECT tidx, rel FROM te_kept WHERE tidx < $limit AND {where} ORDER BY tidx, pos",
        {"limit": limit},
    ).fetchnumpy()
    tidx = np.asarray(arrays["tidx"], dtype=np.int64)
    rels = np.asarray(arrays["rel"], dtype=np.int64)
    bounds = np.searchsorted(tidx, np.arange(limit + 1))
    infos = _topic_info(frame, limit)
    settings = Settings(options.level, options.num_docs_in_coll)
    results = []
    for i in range(limit):
        info = infos[i]
        info.rels = rels[bounds[i] : bounds[i + 1]]
        topic = TopicEval(info, settings)
        values: dict[str, object] = {}
        for request in requests:
            if request.name in ("runid", "num_q"):
                continue
            for name, value in zip(request.line_names(), topic.values(request), strict=True):
                values[name] = value
        results.append(values)
    return results


def _overwrite_dummy(values: dict) -> None:
    # trec_eval overwrites these by exact printed name, so parameterised names keep the
    # dummy's values (spec 5, QUIRK).
    for name in values:
        if name in ("num_ret", "utility", "rbp_resid") or name.startswith("unj_"):
            values[name] = 0
        elif name == "relstring":
            values[name] = ""


def _print(options, requests, topics, per_topic, out, runid, num_positive, failure) -> None:
    lines = []
    if options.per_topic:
        for qid, values in zip(topics, per_topic, strict=False):
            for request in requests:
                if not request.measure.per_topic:
                    continue
                quoted = request.name == "relstring"
                for name in request.line_names():
                    value = format_value(
                        values[name], integer=request.measure.integer, quoted=quoted
                    )
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
    num_q = len(per_topic)
    if kind is Summary.RUNID:
        return runid
    if kind is Summary.COUNT:
        return format_value(num_q, integer=True)
    if kind is Summary.NONE:
        return None
    values = [v[name] for v in per_topic]
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
