"""Compare runs on the same qrels: means with their intervals, and against a baseline paired
tests, intervals of the differences, effect sizes and verdicts; all pairs of runs at once; the
order drift of runs from a baseline.

:mod:`.comparing` is the verb (:func:`compare`, and :func:`comparison` as plain rows) with what
each run gets against the baseline, :mod:`.options` what it is asked (:class:`CompareOptions`,
PyTerrier's ``Experiment``'s settings; the practical margin; a subset of the queries),
:mod:`.all_pairs` every pair of runs (:func:`all_pairs`), :mod:`.drift` the order drift,
stored (:func:`drift`, :func:`run_drift`), and :mod:`.pyterrier` the frame of PyTerrier's
``pt.Experiment``.
"""

from ..columns import COMPARE_COLUMNS as COLUMNS
from ..columns import COMPARE_NUMBERS as NUMBER_COLUMNS
from ..columns import PER_QUERY_COLUMNS
from ..present.frames import experiment_rows, experiment_table
from .all_pairs import ALL_PAIRS_TESTS, AllPairs, MeasurePairs, all_pairs
from .comparing import Comparison, compare, comparison
from .drift import DRIFT_MEASURES, DriftMeans, QueryDrift, StoredDrift, drift, run_drift
from .options import CompareOptions, read_queries

__all__ = [
    "ALL_PAIRS_TESTS",
    "COLUMNS",
    "DRIFT_MEASURES",
    "NUMBER_COLUMNS",
    "PER_QUERY_COLUMNS",
    "AllPairs",
    "CompareOptions",
    "Comparison",
    "DriftMeans",
    "MeasurePairs",
    "QueryDrift",
    "StoredDrift",
    "all_pairs",
    "compare",
    "comparison",
    "drift",
    "experiment_rows",
    "experiment_table",
    "read_queries",
    "run_drift",
]
