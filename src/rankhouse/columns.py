"""The columns of what the verbs return, where both the verbs and the presentation read them.

A result's columns are fixed whatever was asked for (STYLE 6): these tuples are their order.
"""

AGGREGATE_COLUMNS = [
    "run",
    "run_id",
    "measure",
    "value",
    "num_q",
    "evaluation_id",
    "reused",
    "label",
]
"""Columns of :attr:`~rankhouse.results.EvaluationResult.aggregates`, in order."""

COMPARE_COLUMNS = (
    "run",
    "measure",
    "mean",
    "num_q",
    "baseline",
    "delta",
    "num_paired",
    "improved",
    "degraded",
    "tied",
    "p_value",
    "p_corrected",
    "significant",
)
"""Columns of :func:`rankhouse.compare.compare`'s result, one row per run and measure."""

COMPARE_NUMBERS = frozenset(COMPARE_COLUMNS) - {"run", "measure", "baseline", "significant"}
"""The columns of :data:`COMPARE_COLUMNS` that hold numbers (the others hold names and flags)."""

PER_QUERY_COLUMNS = ("run", "query", "measure", "value")
"""Columns of the per-query values ``compare(..., perquery=True)`` returns."""

HISTORY_FIXED_COLUMNS = ("ingested_at", "run", "system", "qrels")
"""The leading columns of :func:`rankhouse.history.history`; metadata columns, measures and
``gate`` follow."""

HIDDEN_METADATA = frozenset({"source", "content_sha256"})
"""Metadata keys every run has; left out of history's and the report's columns (they are in
``run_catalog``)."""

VERDICT_COLUMNS = (
    "measure",
    "baseline_value",
    "run_value",
    "delta",
    "drop",
    "tolerance",
    "num_q",
    "improved",
    "degraded",
    "p_value",
    "p_corrected",
    "significant",
    "status",
    "regressed",
    "run_evaluation_id",
    "baseline_evaluation_id",
)
"""Columns of a :class:`~rankhouse.regress.RegressResult`'s verdicts, one row per measure."""

VERDICT_NUMBERS = tuple(
    name
    for name in VERDICT_COLUMNS
    if name not in ("measure", "significant", "status", "regressed")
)
"""The verdict columns that hold numbers."""
