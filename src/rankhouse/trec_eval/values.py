"""The values printed per topic: computed by the measure engine, or evaluated through the
warehouse, and laid out as trec_eval's lines (:class:`TopicValues`).

trec_eval prints a value for every qrels topic up to the one it stops at, in its order; the
engine gives values per query of the run. The usual case (the same topics, in order) is taken
as it is; otherwise each line's values are picked topic by topic, with the measure's value for
a topic the run lacks. ``relstring`` is no measure of the engine: it is read from the ranking
the engine has just built, when that is this run's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine import check_settings, compute
from ..measures.sqlfile import load_sql
from .mapping import line_measures, relstring_length
from .options import Options

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
