"""Evaluate runs against a qrels set, store every evaluation, and reuse stored ones.

:mod:`.flow` is the verb (:func:`evaluate`); :mod:`.inputs` resolves what it is given (names,
ids, files, data), :mod:`.checks` refuses wrong inputs with their names, :mod:`.stored` finds,
stores and reads evaluations, :mod:`.counts` counts how the queries met, and :mod:`.frames`
evaluates data without a warehouse (``rankhouse.evaluate``).
"""

from ..results import AGGREGATE_COLUMNS, EvaluationResult, PerQueryValues, QueryCounts
from .counts import query_counts
from .flow import MISSING_QUERY_POLICIES, evaluate, evaluate_ranked_labels
from .frames import evaluate_frames
from .inputs import (
    Reading,
    ingest_qrels_shape,
    ingest_run_shapes,
    resolve_qrels,
    resolve_runs,
)

__all__ = [
    "AGGREGATE_COLUMNS",
    "MISSING_QUERY_POLICIES",
    "EvaluationResult",
    "PerQueryValues",
    "QueryCounts",
    "Reading",
    "evaluate",
    "evaluate_frames",
    "evaluate_ranked_labels",
    "ingest_qrels_shape",
    "ingest_run_shapes",
    "query_counts",
    "resolve_qrels",
    "resolve_runs",
]
