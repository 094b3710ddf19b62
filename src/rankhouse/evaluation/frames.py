"""Evaluate runs given as data (or files) without a warehouse: ``rankhouse.evaluate``."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ..backends.duckdb_file.connection import DuckDBConnection
from ..engine import compute, scratch_cursor
from ..ingest.parse import load_into_engine
from ..ingest.shapes import qrels_source, run_sources
from ..ingest.sources import parse_columns
from ..results import EvaluationResult
from ..stats import DEFAULT_LEVEL, check_level
from .checks import check_argument_order, check_overlap, columns_keyword
from .counts import QUERY_COUNTS_SQL, counts_of
from .flow import requested
from .inputs import positional_names
from .spread import value_summaries, with_intervals
from .stored import engine_values


def evaluate_frames(
    qrels: Any,
    run: Any,
    measures: Iterable[Any],
    *,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    order: str = "score",
    columns: str | dict[str, str] | None = None,
    qrels_columns: str | dict[str, str] | None = None,
    allow_no_overlap: bool = False,
    level: float = DEFAULT_LEVEL,
) -> EvaluationResult:
    """Evaluate runs given as data (or files) without a warehouse file: notebooks, quick checks.

    The inputs are read and checked exactly as an ingest checks them, into a bare in-memory
    engine database (no schema, no catalogue, nothing stored), and evaluated by the same SQL.

    Args:
        qrels: qrels in any shape :mod:`rankhouse.ingest.shapes` accepts: a DataFrame (any
            column names ingest recognises, or mapped with ``qrels_columns``), a file path,
            ``{qid: {docid: grade}}``, ir_measures ``Qrel`` tuples.
        run: one run or several in any shape :mod:`rankhouse.ingest.shapes` accepts: a
            DataFrame (several system tags, or PyTerrier's ``name`` column, give several
            runs), a file path, ``{qid: {docid: score}}``, ir_measures ``ScoredDoc`` tuples;
            several as a list, or a dict name -> run (the keys are the run names).
        measures: measure names, as for :func:`evaluate`.
        relevance_level: as for :func:`evaluate`.
        missing_queries: as for :func:`evaluate`.
        order: ``"score"`` ranks by score (trec_eval; a rank column is ignored); ``"rank"``
            takes the run's ranks as the ranking (a run without scores needs it).
        columns: column mapping for the runs, e.g. ``{"qid": "query", "score": "sim"}``.
        qrels_columns: column mapping for the qrels.
        allow_no_overlap: as for :func:`evaluate`.
        level: as for :func:`evaluate`: the confidence level of each mean's interval.

    Returns:
        An :class:`EvaluationResult` (``evaluation_id`` is empty: nothing is stored).
    """
    check_argument_order(qrels, run, qrels_columns=qrels_columns, columns=columns)
    check_level(level)
    measure_list, labels = requested(measures, relevance_level, missing_queries, {})
    with scratch_cursor() as duck:
        qrels_data, implied = qrels_source(qrels)
        mapping = {**(implied or {}), **parse_columns(qrels_columns)}
        with columns_keyword("qrels_columns"):
            [qrels_set] = load_into_engine(duck, qrels_data, "qrels", columns=mapping or None)
        if not isinstance(qrels, str | bytes | os.PathLike):  # data: named by its argument
            qrels_set = replace(qrels_set, name="qrels")
        runs: list = []
        next_id = 1
        for source in positional_names(run_sources(run), columns):
            mapping = {**(source.columns or {}), **parse_columns(columns)}
            loaded = load_into_engine(
                duck,
                source.source,
                "run",
                first_id=next_id,
                columns=mapping or None,
                order=order,
                name=source.name,
            )
            next_id += len(loaded)
            for one in loaded:  # the same content twice is one run, as an ingest stores it
                if one.name in {r.name for r in runs}:
                    duck.execute("DELETE FROM run_rows WHERE run_id = ?", [one.id])
                else:
                    runs.append(one)
        counts = {
            r.name: counts_of(
                tuple(
                    DuckDBConnection(duck)
                    .execute(QUERY_COUNTS_SQL, {"run_id": r.id, "qrels_id": qrels_set.id})
                    .one()
                ),
                r.tied_pairs,
                missing_queries,
            )
            for r in runs
        }
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
