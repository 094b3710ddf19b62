"""Evaluate runs against a qrels set, store every evaluation, and reuse stored ones.

Asking again for the same thing (:mod:`.stored` says what identifies an evaluation) returns
the stored per-query values instead of computing them again, unless ``recompute``. The
engine (:mod:`.computing`) and the readers of a ranked-labels file are imported when
something is to be computed or read, so that ``eval`` of stored values loads neither.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..backends.base import store_of
from ..catalog import Ingested, get_qrels, get_runs, removed_on_failure
from ..catalog.lookup import pruned_message, pruned_runs
from ..errors import Message, NotFoundError, Option, RankhouseError
from ..results import EvaluationResult, QueryCounts
from ..stats import DEFAULT_LEVEL, check_level
from .inputs import (
    Reading,
    check_argument_order,
    ingest_qrels_shape,
    refuse_new_file,
    requested,
    resolve_qrels,
    resolve_runs,
)
from .stored import (
    EvaluationKey,
    StoredMeasure,
    effective_level,
    find_stored,
    mark_requested,
    query_counts,
    stored_measures,
    stored_summaries,
    stored_values,
    value_summaries,
    with_intervals,
)


@dataclass(frozen=True)
class EvaluateOptions:
    """How :func:`evaluate` evaluates (every field has its default); one object from the
    caller (:class:`~rankhouse.Warehouse`) to the verb.

    Attributes:
        relevance_level: grade from which a judgment counts as relevant for binary measures
            that do not set their own (``AP(rel=2)``).
        missing_queries: ``"zero"`` scores a qrels query the run did not answer as an empty
            ranking and counts it in the mean (trec_eval ``-c``); ``"skip"`` averages over the
            queries both have.
        recompute: compute and store again even when an identical evaluation is stored.
        options: further options that change values (for example trec_eval's ``-M`` as
            ``{"max_rank": 100}`` and ``-J`` as ``{"judged_only": True}``); part of the key.
        with_query_counts: fill ``query_counts`` (a scan of the run's rows: skip it when
            not needed, e.g. for trec-eval's output).
        with_per_query: read the per-query values back into the result (they are stored
            either way; the command line skips reading them unless it prints them).
        name: the name of a run given as a file or DataFrame (as ``ingest_run``'s).
        meta: metadata pairs stored with a run given as a file or DataFrame.
        allow_no_overlap: evaluate a run that has no query in common with the qrels set
            (every value 0) instead of raising InputError. Checked, with a warning when a run
            answers fewer than half of the qrels queries, when values are computed.
        asked_for: whether the caller asked for these measures (``history`` shows those
            by default); a report's precision-recall points are not.
        ingested: the record of a caller that removes what it ingested when it fails
            (:func:`rankhouse.catalog.removed_on_failure`); without it, a call that fails
            removes the files it ingested itself.
        level: the confidence level of each mean's interval (the result's ``mean_low``,
            ``mean_high``: Student's t over the per-query values, :mod:`.stored`).
        reading: how runs and qrels given as files or data are read: their column mappings
            and the runs' order (:class:`~rankhouse.evaluation.inputs.Reading`; None: the
            defaults, from a caller that takes no mapping).
    """

    relevance_level: int = 1
    missing_queries: str = "zero"
    recompute: bool = False
    options: dict[str, Any] | None = None
    with_query_counts: bool = True
    with_per_query: bool = True
    name: str | None = None
    meta: dict[str, str] | None = None
    allow_no_overlap: bool = False
    asked_for: bool = True
    ingested: Ingested | None = None
    level: float = DEFAULT_LEVEL
    reading: Reading | None = None


def evaluate(
    wh,
    qrels: Any,
    runs: Any,
    measures: Iterable[Any],
    settings: EvaluateOptions | None = None,
    **keywords: Any,
) -> EvaluationResult:
    """Evaluate runs against a qrels set, storing per-query values and aggregates.

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        qrels: a stored qrels set's name or id, a file path or a DataFrame.
        runs: one run or a list of runs; each a stored name or id, a file path (ingested on
            the fly, deduplicated by content hash; a multi-tag file gives one run per tag) or
            a pandas DataFrame.
        measures: names in ir_measures' or trec_eval's grammar (``"nDCG@10"``, ``"P_5"``,
            ``"ndcg_cut.10,20"``) or :class:`~rankhouse.measures.Measure` objects.
        settings: how (:class:`EvaluateOptions`); ``keywords`` replace its fields.

    Returns:
        An :class:`EvaluationResult`.

    Raises:
        MeasureError: an unknown measure name.
        NotFoundError: a run or qrels name that is neither stored nor a file.
        InputError: a file that cannot be ingested; qrels and run files given in the wrong
            order; a folder; a run with no query in common with the qrels.
        RankhouseError: a read-only warehouse asked for values it does not hold.
    """
    settings = replace(settings or EvaluateOptions(), **keywords)
    store = store_of(wh)
    check_level(settings.level)
    settings = replace(settings, options=dict(sorted((settings.options or {}).items())))
    named = _stored_by_names(store, qrels, runs, measures, settings)
    if named is not None:  # stored names and stored labels: no parser, no reader loads
        return _evaluate(store, *named, settings)
    measure_list, labels = requested(
        measures, settings.relevance_level, settings.missing_queries, settings.options
    )
    reading = settings.reading
    mapped = reading or Reading()
    check_argument_order(qrels, runs, qrels_columns=mapped.qrels_columns, columns=mapped.columns)
    # a call that fails removes the files it ingested: it leaves the warehouse as it found it
    with removed_on_failure(store, settings.ingested) as journal:
        qrels_row = resolve_qrels(store, qrels, reading=reading, ingested=journal)
        run_rows = resolve_runs(
            store, runs, name=settings.name, meta=settings.meta, reading=reading, ingested=journal
        )
        return _evaluate(store, qrels_row, run_rows, measure_list, labels, settings)


def evaluate_ranked_labels(
    wh,
    path: str | os.PathLike[str],
    measures: Iterable[Any],
    settings: EvaluateOptions | None = None,
    **keywords: Any,
) -> EvaluationResult:
    """Evaluate a ranked file with labels (``qid Q0 docid rel`` lines in rank order,
    :mod:`rankhouse.ingest.trec_exact`): its qrels and its run are stored under the
    file's base name (the run as its next version when the name holds other content), then
    evaluated as :func:`evaluate` evaluates them.

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        path: the file.
        measures: as for :func:`evaluate`.
        settings: as for :func:`evaluate` (``name``, ``meta`` and ``reading`` are not
            used); ``keywords`` replace its fields.

    Raises:
        InputError: the file cannot be read (naming its line and field).
        RankhouseError: a read-only warehouse (the file's content cannot be stored).
    """
    from ..ingest.trec_exact import read_ranked_labels  # a file to read: the readers load

    settings = replace(settings or EvaluateOptions(), **keywords)
    store = store_of(wh)
    ranked = read_ranked_labels(path)
    if store.read_only:
        raise refuse_new_file(path, "ranked")
    with removed_on_failure(store, settings.ingested) as journal:
        qrels_id = ingest_qrels_shape(store, ranked.qrels, name=ranked.name, ingested=journal)
        runs = resolve_runs(store, ranked.run, name=ranked.name, ingested=journal)
        ids = [run["id"] for run in runs]
        return evaluate(store, qrels_id, ids, measures, replace(settings, ingested=journal))


def refuse_pruned(store, to_compute: list, run_names: dict[int, str], recompute: bool) -> None:
    """Refuse values to compute for a run whose rows were pruned, saying how to bring them
    back (:func:`rankhouse.catalog.lookup.pruned_message`).

    Raises:
        NotFoundError: a run of ``to_compute`` was pruned.
    """
    with store.connect() as conn:
        pruned = pruned_runs(conn, {key.run_id for key in to_compute})
    if not pruned:
        return
    run_id = min(pruned)
    measures = ", ".join(dict.fromkeys(k.measure for k in to_compute if k.run_id == run_id))
    why = Message(" (", Option("recompute"), ")") if recompute else " (not stored for it)"
    raise NotFoundError(pruned_message(run_names[run_id], pruned[run_id], Message(measures, why)))


def _stored_by_names(store, qrels: Any, runs: Any, measures: Any, settings: EvaluateOptions):
    """(qrels row, run rows, measures, labels) when the qrels set and the runs are given by
    stored names or ids and each measure by the label of values stored for them at the default
    settings (:func:`.stored.stored_measures`), else None: anything else takes the full path,
    which also says, in its order, what is wrong."""
    defaults = (settings.relevance_level, settings.missing_queries, settings.recompute) == (
        1,
        "zero",
        False,
    )
    reading = settings.reading or Reading()
    if not defaults or settings.options or settings.name is not None or settings.meta:
        return None
    if reading.columns is not None or reading.qrels_columns is not None:
        return None
    texts = [measures] if isinstance(measures, str) else measures
    run_list = [runs] if isinstance(runs, str | int) else runs
    if not isinstance(texts, list | tuple) or not texts:
        return None
    if not all(isinstance(text, str) for text in texts):
        return None
    if not isinstance(run_list, list | tuple) or not run_list:
        return None
    if not all(_stored_name(value) for value in [qrels, *run_list]):
        return None
    try:
        qrels_row = get_qrels(store, qrels)
        run_rows = list({row["id"]: row for row in get_runs(store, run_list)}.values())
    except NotFoundError:
        return None
    found = stored_measures(store, texts, qrels_row["id"], [row["id"] for row in run_rows])
    if found is None:
        return None
    return qrels_row, run_rows, found, {m.name: m.name for m in found}


def _stored_name(value: Any) -> bool:
    """Whether ``value`` can only be a stored name or id: no file or folder of that name."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return False
    return isinstance(value, int) or not os.path.lexists(value)


def _evaluate(
    store,
    qrels_row: dict[str, Any],
    run_rows: list[dict[str, Any]],
    measure_list: list,
    labels: dict[str, str],
    settings: EvaluateOptions,
) -> EvaluationResult:
    """:func:`evaluate` once its qrels set and runs are stored (``settings.options`` sorted)."""
    relevance_level, missing_queries = settings.relevance_level, settings.missing_queries
    options, asked_for, level = settings.options or {}, settings.asked_for, settings.level
    if not run_rows:
        raise RankhouseError("no run to evaluate")

    keys = {
        (run["id"], m.name): EvaluationKey(
            run_id=run["id"],
            qrels_id=qrels_row["id"],
            qrels_sha256=qrels_row["content_sha256"],
            measure=m.name,
            relevance_level=effective_level(m, relevance_level),
            missing_queries=missing_queries,
            options=json.dumps(options, sort_keys=True),
        )
        for run in run_rows
        for m in measure_list
    }
    stored = {} if settings.recompute else find_stored(store, keys.values())
    if asked_for:
        mark_requested(store, stored.values())
    to_compute = [k for k in keys.values() if k not in stored]
    run_names = {run["id"]: run["name"] for run in run_rows}
    counted: dict[int, QueryCounts] = {}
    if to_compute:  # only now the engine loads: reading stored values needs none
        from .computing import (
            check_overlap,
            compute_and_store,
            refuse_read_only,
            refuse_without_intents,
        )

        if any(isinstance(m, StoredMeasure) for m in measure_list):  # gone since: parse them
            measure_list, labels = requested([m.name for m in measure_list], 1, "zero", {})

        refuse_pruned(store, to_compute, run_names, settings.recompute)
        refuse_without_intents(qrels_row, measure_list)
        if store.read_only:
            refuse_read_only(to_compute, run_names, qrels_row["name"])
        counted = query_counts(
            store,
            [k.run_id for k in to_compute],
            qrels_row["id"],
            missing_queries,
            will_compute=True,
        )
        by_name = {run_names[run_id]: found for run_id, found in counted.items()}
        check_overlap(by_name, qrels_row["name"], missing_queries, allow=settings.allow_no_overlap)
        compute_and_store(
            store, to_compute, measure_list, relevance_level, missing_queries, options, asked_for
        )
        stored.update(find_stored(store, to_compute))

    computed = set(to_compute)
    rows = [
        {
            "run": run_names[key.run_id],
            "run_id": key.run_id,
            "measure": key.measure,
            "value": stored[key]["value"],
            "num_q": stored[key]["num_q"],
            "evaluation_id": stored[key]["id"],
            "reused": key not in computed,
            "label": labels[key.measure],
        }
        for key in keys.values()
    ]
    counts = {}
    if settings.with_query_counts:  # the runs not counted above, in one statement; a pruned
        # run has no rows to count: its values are stored
        kept = [run for run in run_rows if run.get("pruned_at") is None]
        uncounted = [run["id"] for run in kept if run["id"] not in counted]
        counted.update(query_counts(store, uncounted, qrels_row["id"], missing_queries))
        counts = {run["name"]: counted[run["id"]] for run in kept}
    measure_names = [m.name for m in measure_list]
    per_query = stored_values(store, rows) if settings.with_per_query else None
    if per_query is not None:  # read already: summarized where they are
        kinds = {m.name: m.aggregate for m in measure_list}
        spread = value_summaries(per_query, kinds)
        rows = with_intervals(rows, spread, lambda row: (row["run"], row["measure"]), level)
    else:
        with store.connect() as conn:
            spread = stored_summaries(conn, [row["evaluation_id"] for row in rows])
        rows = with_intervals(rows, spread, lambda row: row["evaluation_id"], level)
    return EvaluationResult(
        rows, per_query, measure_names, counts, qrels_row["name"], labels, level=level
    )
