"""Evaluate runs against a qrels set, store every evaluation, and reuse stored ones.

:mod:`.flow` is the verb (:func:`evaluate`); :mod:`.inputs` resolves and checks what it is
given (measures, names, ids, files, data), :mod:`.stored` finds and reads stored evaluations
(their keys, input signatures, query counts and intervals), and :mod:`.computing` computes
the rest in the engine and stores it, or evaluates data without a warehouse
(``rankhouse.evaluate``).

Each name below is imported from its module at its first use (:func:`rankhouse.lazy.package_names`):
``history`` and ``eval`` of stored values load no engine.
"""

from ..lazy import package_names

_MODULES = {
    "..results": ("AGGREGATE_COLUMNS", "EvaluationResult", "PerQueryValues", "QueryCounts"),
    ".inputs": (
        "MISSING_QUERY_POLICIES",
        "Reading",
        "ingest_qrels_shape",
        "ingest_run_shapes",
        "resolve_qrels",
        "resolve_runs",
    ),
    ".stored": ("query_counts",),
    ".flow": ("evaluate", "evaluate_ranked_labels"),
    ".computing": ("evaluate_frames",),
}

__getattr__ = package_names(__name__, _MODULES)
__all__ = sorted(name for names in _MODULES.values() for name in names)
