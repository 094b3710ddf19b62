"""rankhouse: an evaluation warehouse for ranked retrieval.

Qrels and runs go into DuckDB tables, trec_eval's measures are computed in SQL, and every
evaluation is kept per query so that history, comparison and regression gates are plain SQL.
"""

from importlib.metadata import PackageNotFoundError, version

from .errors import (
    ConflictError,
    InputError,
    MeasureError,
    NotFoundError,
    NoWarehouseError,
    RankhouseError,
    SchemaError,
    WarehouseLockedError,
)
from .warehouse import Warehouse

try:
    __version__ = version("rankhouse")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+unknown"


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
    )


__all__ = [
    "ConflictError",
    "InputError",
    "MeasureError",
    "NoWarehouseError",
    "NotFoundError",
    "RankhouseError",
    "SchemaError",
    "WarehouseLockedError",
    "Warehouse",
    "__version__",
    "evaluate",
]
