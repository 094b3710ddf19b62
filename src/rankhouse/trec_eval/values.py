"""What trec_eval prints: the values per topic, where it stops, and its lines.

The values (:class:`TopicValues`) are computed by the measure engine, or evaluated through the
warehouse. trec_eval prints a value for every qrels topic up to the one it stops at, in its
order; the engine gives values per query of the run. The usual case (the same topics, in
order) is taken as it is; otherwise each line's values are picked topic by topic, with the
measure's value for a topic the run lacks. ``relstring`` is no measure of the engine: it is
read from the ranking the engine has just built, when that is this run's.

trec_eval evaluates topic by topic and aborts at the first topic it cannot evaluate
(TREC_EVAL_SEMANTICS section 11, :func:`first_failure`): a qrels topic missing from the run
(without ``-c``), a document listed twice in the ranking it keeps, a qrels pair judged twice,
a grade too high to allocate its levels, a first topic judged only negatively, a utility
measure without its four coefficients. The per-topic lines of the topics before stay printed;
nothing after.

The lines (section 7, :func:`finish`) come after the ``-c`` overwrites and summaries
(section 5), and trec_eval's exit after them when it stopped part-way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..engine import check_settings, compute
from ..measures.sqlfile import load_sql
from .files import Qrels
from .options import (
    TEXT,
    Options,
    Request,
    Summary,
    TrecEvalExit,
    line_measures,
    relstring_length,
    write_as,
)

RELSTRING_SQL = "trec_eval/relstring.sql"
RELSTRING_RANKED_SQL = "trec_eval/relstring_ranked.sql"


@dataclass
class TopicValues:
    """The values of the first ``num_topics`` topics: ``columns[line][i]`` is topic i's."""

    num_topics: int
    columns: dict[str, list] = field(default_factory=dict)


def engine_options(options: Options) -> dict:
    engine_options: dict = {}
    if options.max_docs is not None:
        engine_options["max_rank"] = options.max_docs
    if options.judged_only:
        engine_options["judged_only"] = True
    return engine_options


def all_line_measures(options, requests) -> list:
    """(printed line name, measure) of every line the requests print."""
    return [(line, m) for r in requests for line, m in line_measures(r, options)]


def checked_line_measures(options, requests) -> list:
    """:func:`all_line_measures`, once the options are known to be ones the engine takes
    (asked before anything is stored: a command that fails changes nothing).

    Raises:
        MeasureError: a negative ``-l`` or ``-M``, a parameter out of range (a cutoff past
            2**31-1).
    """
    check_settings(options.level, options.max_docs)
    return all_line_measures(options, requests)


def engine_values(
    duck, options, requests, run_id, qrels_id, topics, limit, *, private: bool = False
) -> TopicValues:
    """The printed lines' values computed by the engine on ``duck`` (nothing stored;
    ``private``: see :func:`rankhouse.engine.compute`)."""
    lines = all_line_measures(options, requests)
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
            **engine_options(options),
        )
        queries, columns = values.columns(run_id)
        if queries == topics[:limit]:  # the usual case: the columns are the lines' values
            ready = columns
        else:
            by_query = {n: dict(zip(queries, col, strict=True)) for n, col in columns.items()}
    return topic_values(
        duck, options, requests, lines, by_query, run_id, qrels_id, topics, limit, ready
    )


def topic_values(
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


# --- where trec_eval stops (spec 11) -------------------------------------------------------


@dataclass
class Failure:
    """trec_eval stops at topic ``index`` (per-topic lines of earlier topics stay printed)."""

    index: int
    code: int
    stderr: str


def first_failure(options, requests, qrels: Qrels, run_topics, duplicate) -> Failure | None:
    """The topic trec_eval stops at for these files and measures, and why; None when it
    evaluates every topic. ``duplicate``: a run's fatal duplicate (topic index, document)."""
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
        if qrels.oversized is not None:  # its grade levels: 16 GiB or more, not allocated
            failures.append(Failure(topics.index(qrels.oversized), 4, cant))
        if qrels.first_topic_all_negative:
            failures.append(Failure(0, 4, cant))
        utility = next((r for r in requests if r.name == "utility"), None)
        if utility is not None and len(utility.values) != 4:
            failures.append(
                Failure(
                    0,
                    4,
                    "trec_eval.calc_utility: improper number of coefficients\n"
                    "trec_eval: Can't calculate measure 'utility'\n",
                )
            )
    return min(failures, key=lambda f: f.index) if failures else None


# --- the lines (spec 5 and 7) --------------------------------------------------------------


def format_value(value: float | int | str, *, integer: bool = False, quoted: bool = False) -> str:
    """One value as trec_eval prints it: ``%ld`` for counts, ``%6.4f`` (NaN as ``  -nan``)."""
    if quoted:
        return f"'{value}'"
    if isinstance(value, str):
        return value
    if integer:
        return "%ld" % int(value)  # noqa: UP031 - C's format is the specification
    if math.isnan(value):
        return "  -nan"
    return "%6.4f" % value  # noqa: UP031


def format_line(name: str, qid: str, value: str) -> str:
    """``printf("%-22s\\t%s\\t%s\\n", name, qid, value)``."""
    return f"{name:<22}\t{qid}\t{value}\n"


def finish(
    options,
    requests,
    qrels: Qrels,
    topics,
    run_topics,
    per_topic: TopicValues,
    runid,
    failure: Failure | None,
    out,
    encoding: str = TEXT,
) -> int:
    """Print trec_eval's lines (after its ``-c`` overwrites); its exit code. ``encoding``:
    how the ids were read (:func:`.options.write_as` prints them back as those bytes).

    Raises:
        TrecEvalExit: ``failure``, after the lines of the topics before it.
    """
    limit = per_topic.num_topics
    missing = [i for i, qid in enumerate(topics[:limit]) if qid not in run_topics]
    if options.complete:
        for i in missing:
            _overwrite_dummy(per_topic, i, requests)
    lines = _lines(options, requests, topics, per_topic, runid, qrels.num_positive, failure)
    write_as(out, lines, encoding)
    if failure:
        raise TrecEvalExit(failure.code, failure.stderr, encoding)
    return 0


def _overwrite_dummy(table: TopicValues, i: int, requests: list[Request]) -> None:
    # trec_eval overwrites these by exact printed name, so parameterised names keep the
    # dummy's values (spec 5, QUIRK). num_ret and unj_* are already 0 in SQL.
    for request in requests:
        name = request.name
        overwritten = name in ("utility", "rbp_resid", "relstring") and not request.explicit
        if overwritten and name in table.columns:  # relstring is only read for -q
            table.columns[name][i] = "" if name == "relstring" else 0.0


def _lines(options, requests, topics, per_topic, runid, num_positive, failure) -> str:
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
    return "".join(lines)


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
