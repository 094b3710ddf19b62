"""Compare runs on the same qrels: means, and paired significance tests against a baseline.

:mod:`.comparing` is the verb (:func:`compare`, and :func:`comparison` as plain rows),
:mod:`.options` its settings (:class:`CompareOptions`, PyTerrier's ``Experiment``'s), and
:mod:`.subsets` a comparison over some of the queries.
"""

from ..columns import COMPARE_COLUMNS as COLUMNS
from ..columns import COMPARE_NUMBERS as NUMBER_COLUMNS
from ..columns import PER_QUERY_COLUMNS
from ..display.experiment import experiment_rows, experiment_table
from .comparing import Comparison, compare, comparison
from .options import CompareOptions
from .subsets import read_queries

__all__ = [
    "COLUMNS",
    "NUMBER_COLUMNS",
    "PER_QUERY_COLUMNS",
    "CompareOptions",
    "Comparison",
    "compare",
    "comparison",
    "experiment_rows",
    "experiment_table",
    "read_queries",
]
