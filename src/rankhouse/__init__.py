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
    RankhouseError,
    SchemaError,
)
from .warehouse import Warehouse

try:
    __version__ = version("rankhouse")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+unknown"


def evaluate(run, qrels, measures, **options):
    """Evaluate a run DataFrame (or file) against qrels in a throw-away in-memory warehouse.

    See :func:`rankhouse.evaluation.evaluate_frames`.
    """
    from .evaluation import evaluate_frames

    return evaluate_frames(run, qrels, measures, **options)


__all__ = [
    "ConflictError",
    "InputError",
    "MeasureError",
    "NotFoundError",
    "RankhouseError",
    "SchemaError",
    "Warehouse",
    "__version__",
    "evaluate",
]
