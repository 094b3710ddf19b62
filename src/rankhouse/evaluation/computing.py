"""Computing evaluations in the engine: the ones a warehouse does not hold yet (computed in one
engine pass, then stored in one transaction), and runs given as data or files evaluated without
a warehouse (``rankhouse.evaluate``).

:mod:`.flow` comes here only when something is to be computed: reading what is stored
(:mod:`.stored`) loads no engine. Before computing: a run and a qrels set with no query in
common are almost always a wrong file, an error unless ``allow_no_overlap``; a run that
answers fewer than half of the qrels queries is a warning; a read-only warehouse refuses,
saying what, to compute what it does not hold.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..backends.base import EVALUATION_ROWS
from ..backends.duckdb_file.connection import DuckDBConnection
from ..defaults import __version__, read_sql
from ..engine import (
    JUDGED_SHARES_SQL,
    JUDGED_TABLE,
    VALUES_TABLE,
    compute,
    judged_cutoff,
    judged_shares,
    scratch_cursor,
)
from ..errors import InputError, Message, Option, RankhouseError, RankhouseWarning, count
from ..ingest.parse import load_into_engine
from ..ingest.shapes import qrels_source, run_sources
from ..ingest.sources import parse_columns
from ..labels import label
from ..measures.catalog import DIVERSITY, no_intents
from ..results import EvaluationResult, PerQueryValues
from ..stats import DEFAULT_LEVEL, check_level
from .inputs import (
    READ_ONLY_FIX,
    Reading,
    check_argument_order,
    columns_keyword,
    positional_names,
    requested,
)
from .stored import (
    EMPTY_QUERY_SET,
    EvaluationKey,
    counts_of,
    input_signature,
    queries_met,
    value_summaries,
    with_intervals,
)

if TYPE_CHECKING:
    from ..backends.base import Connection

#: Per run and measure of the engine's values: md5 of the query ids, sorted byte-wise (as
#: DuckDB sorts text, and PostgreSQL with COLLATE "C").
QUERY_SETS = (
    "SELECT run_id, measure_idx, md5(string_agg(query_id, chr(10) ORDER BY query_id)) "
    f"FROM {VALUES_TABLE} GROUP BY run_id, measure_idx"
)


def compute_and_store(
    store,
    keys: Sequence[EvaluationKey],
    measures,
    relevance_level: int,
    missing_queries: str,
    options: dict[str, Any],
    asked_for: bool = True,
) -> None:
    """One engine pass for every run and measure not stored yet, then one transaction; the
    store is held throughout (the values stay in the engine's tables on its connection).
    ``asked_for``: whether the caller named these measures (``history`` shows those by
    default), or computed them for its own use (a report's precision-recall points)."""
    with store.session():
        _compute_and_store(
            store, keys, measures, relevance_level, missing_queries, options, asked_for
        )


def _compute_and_store(store, keys, measures, relevance_level, missing_queries, options, asked_for):
    by_name = {m.name: m for m in measures}
    run_ids = sorted({k.run_id for k in keys})
    wanted = [by_name[name] for name in dict.fromkeys(k.measure for k in keys)]
    qrels_id = keys[0].qrels_id
    own_ranks = options.get("max_rank") is None and not options.get("judged_only")
    with store.engine_connection(run_ids, qrels_id) as duck:
        if not own_ranks:  # the judged shares are of the run's own top k: rank it so first
            compute(duck, run_ids, qrels_id, [], missing_queries="skip")
            judged_shares(duck, [judged_cutoff(key.measure) for key in keys])
        # else the shares are read off the evaluation's own ranking as they are stored
        values = compute(
            duck,
            run_ids,
            qrels_id,
            wanted,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
            **options,
        )
        # what each evaluation was computed from: its queries, read where the values are
        query_sets = {
            (run_id, idx): found for run_id, idx, found in duck.execute(QUERY_SETS).fetchall()
        }
    # the values stay in the engine's temporary table on `duck` after the block
    totals = {(a.run_id, a.measure.name): a for a in values.aggregates()}
    index = {m.name: i for i, m in enumerate(values.measures)}
    now = datetime.now(UTC).replace(tzinfo=None)
    evaluations = []
    for key in keys:
        measure = by_name[key.measure]
        total = totals.get((key.run_id, key.measure))
        evaluations.append(
            {
                **_key_params(key),
                "sha": key.qrels_sha256,
                "parameters": json.dumps(_jsonable(measure.params), sort_keys=True),
                "label": label(measure, relevance_level, missing_queries, options),
                "aggregate": measure.aggregate,
                "value": total.value if total is not None else math.nan,
                "num_q": total.num_q if total is not None else 0,
                "version": __version__,
                "created_at": now,
                "requested": bool(asked_for),
                "signature": input_signature(
                    key.qrels_sha256,
                    query_sets.get((key.run_id, index[key.measure]), EMPTY_QUERY_SET),
                    key.relevance_level,
                    key.missing_queries,
                    key.options,
                ),
            }
        )
    with store.transaction() as conn:
        if store.many_writers:  # two processes storing one evaluation store it once
            store.lock_evaluations(conn, {(k.run_id, k.qrels_id) for k in keys})
        _delete_stored(conn, keys)
        inserted = _insert_evaluations(conn, evaluations)
        ids = {(run_id, index[measure]): id_ for id_, run_id, measure in inserted}
        if ids:
            store.store_values(conn, duck, *_values_select(ids))
            shares = _judged_select(inserted, None if own_ranks else JUDGED_TABLE)
            store.store_values(conn, duck, *shares, table="evaluation_judged")


#: The columns of an evaluation row, and the names of their values in ``evaluations``' dicts.
_EVALUATION_COLUMNS = {
    "run_id": "run_id",
    "qrels_id": "qrels_id",
    "qrels_sha256": "sha",
    "measure": "measure",
    "parameters": "parameters",
    "relevance_level": "level",
    "missing_queries": "policy",
    "options": "options",
    "aggregate": "aggregate",
    "value": "value",
    "num_q": "num_q",
    "rankhouse_version": "version",
    "created_at": "created_at",
    "label": "label",
    "requested": "requested",
    "input_signature": "signature",
}
#: Rows of one INSERT (16 binds a row: PostgreSQL takes at most 65,535 binds a statement).
_INSERT_ROWS = 1_000


def _insert_evaluations(conn: Connection, evaluations: list[dict[str, Any]]) -> list[tuple]:
    """Insert the evaluation rows, many to a statement (one statement costs about 1 ms on a
    DuckDB file, and a round trip to a server); their (id, run_id, measure)."""
    columns = ", ".join(_EVALUATION_COLUMNS)
    inserted = []
    for start in range(0, len(evaluations), _INSERT_ROWS):
        rows, params = [], {}
        for i, row in enumerate(evaluations[start : start + _INSERT_ROWS]):
            rows.append("(" + ", ".join(f":{n}{i}" for n in _EVALUATION_COLUMNS.values()) + ")")
            params |= {f"{n}{i}": row[n] for n in _EVALUATION_COLUMNS.values()}
        inserted += conn.execute(
            f"INSERT INTO evaluations ({columns}) VALUES {', '.join(rows)} "
            "RETURNING id, run_id, measure",
            params,
        ).all()
    return [tuple(row) for row in inserted]


def _delete_stored(conn: Connection, keys: Sequence[EvaluationKey]) -> None:
    """Delete the stored evaluations (and their values) that ``keys`` are about to replace.

    They are looked up first: evaluations asked for the first time (a run just ingested)
    have none, and the two deletes would cost 4 ms for nothing."""
    matches = []
    params: dict[str, Any] = {}
    for i, key in enumerate(keys):
        matches.append(
            f"(run_id = :run_id{i} AND qrels_id = :qrels_id{i} AND measure = :measure{i} AND "
            f"relevance_level = :level{i} AND missing_queries = :policy{i} AND "
            f"options = :options{i})"
        )
        params |= {f"{name}{i}": value for name, value in _key_params(key).items()}
    replaced = [
        row[0]
        for row in conn.execute(
            f"SELECT id FROM evaluations WHERE {' OR '.join(matches)}", params
        ).all()
    ]
    if not replaced:
        return
    ids = {f"id{i}": evaluation_id for i, evaluation_id in enumerate(replaced)}
    listed = ", ".join(f":{name}" for name in ids)
    for table in EVALUATION_ROWS:
        conn.execute(f"DELETE FROM {table} WHERE evaluation_id IN ({listed})", ids)
    conn.execute(f"DELETE FROM evaluations WHERE id IN ({listed})", ids)


def _key_params(key: EvaluationKey) -> dict[str, Any]:
    return {
        "run_id": key.run_id,
        "qrels_id": key.qrels_id,
        "measure": key.measure,
        "level": key.relevance_level,
        "policy": key.missing_queries,
        "options": key.options,
    }


def _jsonable(params: dict[str, Any]) -> dict[str, Any]:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in (params or {}).items()}


def engine_values(duck, run_ids: list[int], names: dict[int, str], measures) -> PerQueryValues:
    """The engine's values (``rh_values`` on ``duck``) in result order."""
    found = duck.execute(
        f"SELECT v.run_id, v.query_id, v.measure_idx, v.value FROM {VALUES_TABLE} AS v "
        "JOIN (SELECT unnest($runs) AS run_id, generate_subscripts($runs, 1) AS r) AS o "
        "ON o.run_id = v.run_id ORDER BY o.r, v.query_id, v.measure_idx",
        {"runs": run_ids},
    ).fetchall()
    measure_names = [m.name for m in measures]
    values = PerQueryValues()
    for run_id, query, idx, value in found:
        values.run.append(names[run_id])
        values.query.append(query)
        values.measure.append(measure_names[idx])
        values.value.append(value)
    return values


def _values_select(ids: dict[tuple[int, int], int]) -> tuple[str, dict[str, Any]]:
    """The engine's values (``rh_values``) of the evaluations ``ids`` ((run id, measure
    index) -> evaluation id) as ``evaluation_id, query_id, value``, and the binds."""
    keys = list(ids)
    params = {
        "runs": [run_id for run_id, _ in keys],
        "idx": [idx for _, idx in keys],
        "ids": list(ids.values()),
    }
    select = (
        f"SELECT e.evaluation_id, v.query_id, v.value FROM {VALUES_TABLE} AS v JOIN "
        "(SELECT unnest($runs) AS run_id, unnest($idx) AS measure_idx, "
        "CAST(unnest($ids) AS INTEGER) AS evaluation_id) AS e "
        "ON e.run_id = v.run_id AND e.measure_idx = v.measure_idx"
    )
    return select, params


def _judged_select(inserted: list[tuple], kept: str | None) -> tuple[str, dict[str, Any]]:
    """The judged shares of the evaluations ``inserted`` (``id, run_id, measure``) as
    ``evaluation_id, query_id, k, judged``, each at its measure's cutoff, and the binds: read
    off the engine's ranking (one statement, the rows straight into the store), or from the
    table ``kept`` (:func:`~rankhouse.engine.judged_shares`) when the ranking is not the
    run's own."""
    ks = [judged_cutoff(measure) for _, _, measure in inserted]
    params = {
        "runs": [run_id for _, run_id, _ in inserted],
        "cutoffs": ks,
        "ids": [evaluation_id for evaluation_id, _, _ in inserted],
    }
    if kept is None:
        params["ks"] = sorted(set(ks))
    shares = kept or f"({read_sql(JUDGED_SHARES_SQL)})"
    select = (
        f"SELECT e.evaluation_id, j.query_id, j.k, j.judged FROM {shares} "
        "AS j JOIN (SELECT unnest($runs) AS run_id, CAST(unnest($cutoffs) AS INTEGER) AS k, "
        "CAST(unnest($ids) AS INTEGER) AS evaluation_id) AS e "
        "ON e.run_id = j.run_id AND e.k = j.k"
    )
    return select, params


# --- what is checked before computing -------------------------------------------------------


def check_overlap(
    counts: dict[str, Any], qrels_name: str, missing_queries: str, *, allow: bool
) -> None:
    """No query in common: InputError unless ``allow``; fewer than half answered: a warning.

    Args:
        counts: run name -> its :class:`~rankhouse.results.QueryCounts`.
        qrels_name: the qrels set's name.
        missing_queries: the policy the counts were taken under.
        allow: evaluate a run with no query in common anyway.
    """
    for run, found in counts.items():
        missing = found.missing_from_run
        judged = found.evaluated + (missing if missing_queries == "skip" else 0)
        answered = judged - missing
        if answered == 0 and judged and not allow:
            raise InputError(
                Message(
                    f"run {run!r} and qrels set {qrels_name!r} have no query in common (the "
                    f"run answers {count(found.ignored, 'query')}, none of the {judged:,} "
                    "judged): is "
                    "one of them the wrong file? Pass ",
                    Option("allow_no_overlap", True, cli_value=""),
                    " to evaluate it anyway",
                )
            )
        if answered > 0 and 2 * answered < judged:
            warnings.warn(
                RankhouseWarning(
                    f"run {run!r} answers {answered:,} of the {count(judged, 'query')} of "
                    f"qrels set {qrels_name!r}: fewer than half (is it a run of this collection?)"
                ),
                stacklevel=3,
            )


def refuse_without_intents(qrels_row: dict[str, Any], measures: Sequence[Any]) -> None:
    """Raise: diversity measures asked of a qrels set ingested without intents (its parse
    options say which: :mod:`rankhouse.ingest.intents`), before any work."""
    asked = [m for m in measures if getattr(m, "family", None) == DIVERSITY]
    if asked and '"intents": true' not in (qrels_row.get("parse_options") or ""):
        raise no_intents(asked, repr(qrels_row["name"]))


def refuse_read_only(keys: Iterable[Any], run_names: dict[int, str], qrels_name: str) -> None:
    """Raise: a read-only warehouse cannot compute (and store) the evaluations ``keys``."""
    wanted: dict[str, list[str]] = {}
    for key in keys:
        wanted.setdefault(run_names[key.run_id], []).append(key.measure)
    what = "; ".join(f"{', '.join(ms)} of run {run!r}" for run, ms in wanted.items())
    raise RankhouseError(
        Message(
            f"the warehouse is open read-only and these values are not stored: {what} "
            f"against qrels set {qrels_name!r}; ",
            READ_ONLY_FIX,
            " to compute and store them",
        )
    )


# --- data evaluated without a warehouse ------------------------------------------------------


def evaluate_frames(
    qrels: Any,
    run: Any,
    measures: Iterable[Any],
    *,
    reading: Reading | None = None,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    allow_no_overlap: bool = False,
    level: float = DEFAULT_LEVEL,
) -> EvaluationResult:
    """Evaluate runs given as data (or files) without a warehouse file: notebooks, quick checks.

    The inputs are read and checked exactly as an ingest checks them, into a bare in-memory
    engine database (no schema, no catalogue, nothing stored), and evaluated by the same SQL.

    Args:
        qrels: qrels in any shape :mod:`rankhouse.ingest.shapes` accepts: a DataFrame (any
            column names ingest recognises, or mapped by ``reading.qrels_columns``), a file path,
            ``{qid: {docid: grade}}``, ir_measures ``Qrel`` tuples.
        run: one run or several in any shape :mod:`rankhouse.ingest.shapes` accepts: a
            DataFrame (several system tags, or PyTerrier's ``name`` column, give several
            runs), a file path, ``{qid: {docid: score}}``, ir_measures ``ScoredDoc`` tuples;
            several as a list, or a dict name -> run (the keys are the run names).
        measures: measure names, as for :func:`evaluate`.
        reading: the runs' order and the column mappings of the runs and the qrels
            (:class:`~rankhouse.evaluation.inputs.Reading`; None: its defaults).
        relevance_level: as for :func:`evaluate`.
        missing_queries: as for :func:`evaluate`.
        allow_no_overlap: as for :func:`evaluate`.
        level: as for :func:`evaluate`: the confidence level of each mean's interval.

    Returns:
        An :class:`EvaluationResult` (``evaluation_id`` is empty: nothing is stored).
    """
    mapped = reading or Reading()
    check_argument_order(qrels, run, qrels_columns=mapped.qrels_columns, columns=mapped.columns)
    check_level(level)
    measure_list, labels = requested(measures, relevance_level, missing_queries, {})
    with scratch_cursor() as duck:
        qrels_data, implied = qrels_source(qrels)
        mapping = {**(implied or {}), **parse_columns(mapped.qrels_columns)}
        with columns_keyword("qrels_columns"):
            [qrels_set] = load_into_engine(duck, qrels_data, "qrels", columns=mapping or None)
        if not isinstance(qrels, str | bytes | os.PathLike):  # data: named by its argument
            qrels_set = replace(qrels_set, name="qrels")
        runs: list = []
        next_id = 1
        for source in positional_names(run_sources(run), mapped.columns):
            mapping = {**(source.columns or {}), **parse_columns(mapped.columns)}
            loaded = load_into_engine(
                duck,
                source.source,
                "run",
                first_id=next_id,
                columns=mapping or None,
                order=mapped.order,
                name=source.name,
            )
            next_id += len(loaded)
            for one in loaded:  # the same content twice is one run, as an ingest stores it
                if one.name in {r.name for r in runs}:
                    duck.execute("DELETE FROM run_rows WHERE run_id = ?", [one.id])
                else:
                    runs.append(one)
        met = queries_met(DuckDBConnection(duck), [r.id for r in runs], qrels_set.id)
        counts = {r.name: counts_of(met[r.id], r.tied_pairs, missing_queries) for r in runs}
        check_overlap(counts, qrels_set.name, missing_queries, allow=allow_no_overlap)
        values = compute(
            duck,
            [r.id for r in runs],
            qrels_set.id,
            measure_list,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
        )
        names = {r.id: r.name for r in runs}
        rows = [
            {
                "run": names[a.run_id],
                "run_id": a.run_id,
                "measure": a.measure.name,
                "value": a.value,
                "num_q": a.num_q,
                "evaluation_id": None,
                "reused": False,
                "label": labels[a.measure.name],
            }
            for a in values.aggregates()
        ]
        per_query = engine_values(duck, [r.id for r in runs], names, values.measures)
    spread = value_summaries(per_query, {m.name: m.aggregate for m in measure_list})
    rows = with_intervals(rows, spread, lambda row: (row["run"], row["measure"]), level)
    measure_names = [m.name for m in measure_list]
    return EvaluationResult(
        rows, per_query, measure_names, counts, qrels_set.name, labels, level=level
    )
