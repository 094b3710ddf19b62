"""trec_eval's output: its lines (TREC_EVAL_SEMANTICS section 7), the ``-c`` overwrites and
summaries (section 5), and its exit after the lines when it stopped part-way.
"""

from __future__ import annotations

import math

from .aborts import Failure
from .options import TEXT, Request, Summary, TrecEvalExit, write_as
from .qrels_reader import Qrels
from .values import TopicValues


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
