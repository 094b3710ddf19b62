"""rankhouse: an evaluation warehouse for ranked retrieval.

Qrels and runs go into DuckDB tables, trec_eval's measures are computed in SQL, and every
evaluation is kept per query so that history, comparison and regression gates are plain SQL.
"""

from typing import TYPE_CHECKING

from .errors import (
    ConflictError,
    InputError,
    MeasureError,
    NotFoundError,
    RankhouseError,
    RankhouseWarning,
    SchemaError,
)

if TYPE_CHECKING:
    from .warehouse import Warehouse

#: The package version (pyproject.toml reads it from here; no metadata lookup at start-up).
__version__ = "0.1.0"


def __getattr__(name: str):
    # `Warehouse` is imported on first use: `rankhouse --help` and `import rankhouse` stay light
    if name == "Warehouse":
        from .warehouse import Warehouse

        return Warehouse
    raise AttributeError(f"module 'rankhouse' has no attribute {name!r}")


def evaluate(
    qrels,
    run,
    measures,
    *,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    order: str = "score",
    columns=None,
    qrels_columns=None,
    allow_no_overlap: bool = False,
):
    """Evaluate a run DataFrame (or file) against qrels in a throw-away in-memory warehouse.

    The argument order is the CLI's (``rankhouse eval QRELS RUN``), ranx's and pytrec_eval's.

    Args:
        qrels: a DataFrame (``query_id, doc_id, relevance`` or recognised names) or a file.
        run: a DataFrame (``query_id, doc_id, score`` or recognised names) or a file.
        measures: one name or a list (``"nDCG@10"``, ``"AP"``, ``"P_5"``, ...).
        relevance_level: grade from which a judgment counts as relevant (trec_eval ``-l``).
        missing_queries: ``"zero"`` (trec_eval ``-c``) or ``"skip"``.
        order: ``"score"`` ranks by score as trec_eval does (ranks are ignored); ``"rank"``
            takes the run's ranks as the ranking (a run without scores needs it).
        columns: run column mapping, e.g. ``{"qid": "query", "score": "sim"}``.
        qrels_columns: qrels column mapping, e.g. ``{"rel": "grade"}``.
        allow_no_overlap: evaluate a run with no query in common with the qrels (every
            value 0) instead of raising InputError.

    Returns:
        An :class:`~rankhouse.evaluation.EvaluationResult` (``summary``, ``per_query``,
        ``aggregates``).
    """
    from .evaluation import evaluate_frames

    return evaluate_frames(
        qrels,
        run,
        measures,
        relevance_level=relevance_level,
        missing_queries=missing_queries,
        order=order,
        columns=columns,
        qrels_columns=qrels_columns,
        allow_no_overlap=allow_no_overlap,
    )


__all__ = [
    "ConflictError",
    "InputError",
    "MeasureError",
    "NotFoundError",
    "RankhouseError",
    "RankhouseWarning",
    "SchemaError",
    "Warehouse",
    "__version__",
    "evaluate",
]
