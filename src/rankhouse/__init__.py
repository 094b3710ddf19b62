"""rankhouse: an evaluation warehouse for ranked retrieval.

Qrels and runs go into DuckDB tables, trec_eval's measures are computed in SQL, and every
evaluation is kept per query so that history, comparison and regression gates are plain SQL.
"""

import os
from typing import TYPE_CHECKING

from .defaults import __version__
from .errors import (
    ConflictError,
    InputError,
    MeasureError,
    NotFoundError,
    NoWarehouseError,
    OutputError,
    RankhouseError,
    RankhouseWarning,
    SchemaError,
    WarehouseLockedError,
)

if TYPE_CHECKING:
    from .warehouse import Warehouse


# The API below imports the library when first used, so that `import rankhouse` and the
# console script (which imports this package first) stay light: `rankhouse --help` loads
# none of the library, trec-eval only what it runs. This package's functions are the only
# place under the command line where rankhouse imports its own modules inside a function.


def __getattr__(name: str):
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
    level: float = 0.95,
):
    """Evaluate one run or several against qrels in a throw-away in-memory warehouse.

    The argument order is the CLI's (``rankhouse eval QRELS RUN``), ranx's and pytrec_eval's.
    Runs and qrels come in the shapes people already have (:mod:`rankhouse.ingest.shapes`).

    Args:
        qrels: a DataFrame (``query_id, doc_id, relevance``, PyTerrier's ``qid, docno,
            label`` or other recognised names), a file, ``{qid: {docid: grade}}``
            (pytrec_eval, ranx) or ir_measures ``Qrel`` tuples.
        run: one run or several. A run is a DataFrame (``query_id, doc_id, score`` or
            recognised names; PyTerrier's result frame, whose ``name`` column names its
            runs), a file, ``{qid: {docid: score}}`` or ir_measures ``ScoredDoc`` tuples.
            Several runs: a list of those, or a dict name -> run (the keys are the run
            names).
        measures: one name or a list (``"nDCG@10"``, ``"AP"``, ``"P_5"``, ...).
        relevance_level: grade from which a judgment counts as relevant (trec_eval ``-l``).
        missing_queries: ``"zero"`` (trec_eval ``-c``) or ``"skip"``.
        order: ``"score"`` ranks by score as trec_eval does (ranks are ignored); ``"rank"``
            takes the run's ranks as the ranking (a run without scores needs it).
        columns: run column mapping, e.g. ``{"qid": "query", "score": "sim"}``.
        qrels_columns: qrels column mapping, e.g. ``{"rel": "grade"}``.
        allow_no_overlap: evaluate a run with no query in common with the qrels (every
            value 0) instead of raising InputError.
        level: the confidence level of each mean's interval (``aggregates``' ``mean_low``,
            ``mean_high``; Student's t over the per-query values).

    Returns:
        An :class:`~rankhouse.results.EvaluationResult` (``summary``, ``per_query``,
        ``aggregates``, ``intervals``).
    """
    from .errors import warnings_at_caller
    from .evaluation import Reading, evaluate_frames

    with warnings_at_caller():
        return evaluate_frames(
            qrels,
            run,
            measures,
            reading=Reading(order, columns, qrels_columns),
            relevance_level=relevance_level,
            missing_queries=missing_queries,
            allow_no_overlap=allow_no_overlap,
            level=level,
        )


def evaluate_ranked_labels(
    path,
    measures,
    *,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    allow_no_overlap: bool = False,
    level: float = 0.95,
):
    """Evaluate a ranked file with labels, in a throw-away in-memory warehouse.

    Each line is ``qid Q0 docid rel`` (a qrels line's shape) and the order of a query's lines
    is its ranking: the file holds a run and its judgments at once, as course material hands
    them out (:mod:`rankhouse.ingest.trec_exact`). The run is named after the file.

    Args:
        path: the file (plain or compressed).
        measures: one name or a list, as for :func:`evaluate`.
        relevance_level: grade from which a judgment counts as relevant (trec_eval ``-l``).
        missing_queries: ``"zero"`` (trec_eval ``-c``) or ``"skip"``.
        allow_no_overlap: as for :func:`evaluate`.
        level: the confidence level of each mean's interval.

    Returns:
        An :class:`~rankhouse.results.EvaluationResult`.

    Raises:
        InputError: a line without 4 fields, a label that is not an integer, a document
            twice for a query (naming the file, line and field).
    """
    from .errors import warnings_at_caller
    from .evaluation import evaluate_frames
    from .ingest.trec_exact import read_ranked_labels

    ranked = read_ranked_labels(path)
    with warnings_at_caller():
        return evaluate_frames(
            ranked.qrels,
            {ranked.name: ranked.run},
            measures,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
            allow_no_overlap=allow_no_overlap,
            level=level,
        )


def experiment(
    qrels,
    runs,
    measures=None,
    *pyterrier_order,
    names=None,
    baseline=None,
    test="t",
    correction="none",
    alpha: float = 0.05,
    correction_alpha: float | None = None,
    level: float = 0.95,
    interval: str = "t",
    margin=None,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    queries=None,
    perquery=False,
    round=None,  # noqa: A002 (PyTerrier's name)
    highlight: str | None = "bold",
    shape: str = "rankhouse",
    eval_metrics=None,
):
    """PyTerrier's ``pt.Experiment`` over runs you already have, in a throw-away warehouse.

    :meth:`Warehouse.compare` without a warehouse file: the runs and qrels are data or files
    (any shape :func:`evaluate` takes), nothing is kept. The parameters are
    :func:`rankhouse.compare.compare`'s (docs/compare.md maps them to PyTerrier's).

    Args:
        qrels: qrels data or a file.
        runs: several runs: a list, or a dict name -> run (the keys are the names).
        measures: measure names (``"nDCG@10"``, ``"map"``, ``"NDCG@10"``...), ir_measures
            objects (``nDCG@10``) or trec_eval nicknames (``"official"``), one or a list.
        pyterrier_order: nothing: ``pt.Experiment``'s order, ``(systems, topics, qrels,
            metrics)``, is refused with what to pass instead.
        names: the names shown for the runs, one per run in order.
        baseline: the position of the baseline among ``runs`` (``0``), or its name.
        test: ``"t"``, ``"wilcoxon"``, ``"randomization"``, ``"bootstrap"`` or a callable.
        correction: ``"none"`` or a statsmodels multipletests name (``"holm"``, ``"hs"``...).
        alpha: significance level.
        correction_alpha: PyTerrier's name for ``alpha``.
        level: confidence level of the intervals of means and differences.
        interval: ``"t"`` (Student's t) or ``"bootstrap"`` (seeded percentile bootstrap).
        margin: the verdicts' practical margin: None, a number in the measure's units,
            ``"2%"`` of the baseline's mean, or a dict measure -> either.
        relevance_level: grade from which a judgment counts as relevant.
        missing_queries: ``"zero"`` (trec_eval ``-c``) or ``"skip"``.
        queries: only these query ids (a list, a topics DataFrame, or a file of ids).
        perquery: True: the per-query values; ``"both"``: (means, per-query values).
        round: ``shape="rankhouse"``: decimals a notebook shows (the values are not
            rounded); ``shape="pyterrier"``: the means rounded as PyTerrier rounds them. A
            number or a dict measure -> decimals.
        highlight: ``"bold"``, ``"color"`` or None.
        shape: ``"rankhouse"``: the long comparison (one row per run and measure);
            ``"pyterrier"``: ``pt.Experiment``'s wide frame, its columns named after the
            measures as given (``map``, ``map +``, ``map -``, ``map p-value``, ``map
            reject``, ``map p-value corrected``; :mod:`rankhouse.compare.pyterrier`).
        eval_metrics: PyTerrier's name for ``measures`` (give one of the two).

    Returns:
        A :class:`~rankhouse.present.frames.ComparisonFrame` (a notebook shows the Experiment
        table; :func:`experiment_table` makes it wide), or the per-query values, or both;
        with ``shape="pyterrier"``, PyTerrier's frames.

    Raises:
        InputError: ``pt.Experiment``'s argument order.
    """
    from .compare import CompareOptions, compare
    from .compare.pyterrier import SHAPES, pyterrier_experiment, refuse_pyterrier_order
    from .defaults import packed
    from .errors import RankhouseError, warnings_at_caller
    from .evaluation import ingest_qrels_shape
    from .evaluation.inputs import check_argument_order
    from .warehouse import Warehouse

    refuse_pyterrier_order(qrels, runs, measures, pyterrier_order)
    check_argument_order(qrels, runs)
    if eval_metrics is not None:
        if measures is not None:
            raise RankhouseError("measures and eval_metrics name the same thing; give one")
        measures = eval_metrics
    if shape not in SHAPES:
        raise RankhouseError(f"shape must be 'rankhouse' or 'pyterrier', not {shape!r}")
    options = packed(CompareOptions, locals())
    with warnings_at_caller(), Warehouse(":memory:") as wh:
        if not isinstance(qrels, str | bytes | os.PathLike):  # data: named by its argument
            qrels = ingest_qrels_shape(wh.backend, qrels, name="qrels")
        if shape == "pyterrier":
            return pyterrier_experiment(wh, qrels, runs, measures, options)
        return compare(wh, qrels, runs, measures, options)


def experiment_table(frame):
    """The wide Experiment table of a comparison, one row per run, with ``<m> +`` and
    ``<m> -`` (queries improved, degraded); see
    :func:`rankhouse.present.frames.experiment_table`."""
    from .present.frames import experiment_table as wide

    return wide(frame)


__all__ = [
    "ConflictError",
    "InputError",
    "MeasureError",
    "NoWarehouseError",
    "NotFoundError",
    "OutputError",
    "RankhouseError",
    "RankhouseWarning",
    "SchemaError",
    "WarehouseLockedError",
    "Warehouse",
    "__version__",
    "evaluate",
    "evaluate_ranked_labels",
    "experiment",
    "experiment_table",
]
