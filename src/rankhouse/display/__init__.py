"""How results look: HTML tables for notebooks and the report (:mod:`.tables`), the notebook's
DataFrame subclasses (:mod:`.frames`) and PyTerrier's wide Experiment table
(:mod:`.experiment`). Nothing here reads the warehouse.
"""

from __future__ import annotations

from . import frames
from .experiment import experiment_rows, experiment_table
from .tables import DEFAULT_ROUND, HtmlTable

__all__ = [
    "DEFAULT_ROUND",
    "ComparisonFrame",
    "ExperimentFrame",
    "HistoryFrame",
    "HtmlTable",
    "experiment_rows",
    "experiment_table",
]


def __getattr__(name: str) -> type:
    # the frames subclass pandas' DataFrame: made (with pandas) when first asked for
    return getattr(frames, name)
