"""Notebook display: results that Jupyter shows as rankhouse's HTML tables.

``compare``, ``history`` and ``rankhouse.experiment(..., shape="pyterrier")`` return these
DataFrame subclasses; they behave as DataFrames in
every way (anything derived from them is a plain DataFrame) and add ``_repr_html_`` and
``styled()``, with the report's options: ``round`` (decimals, one number or per measure) and
``highlight`` (``'bold'``, ``'color'`` or None: how the best value per measure is marked).
Defaults can be stored in ``frame.attrs["display"]`` (a dict of those two options).

The classes subclass pandas' DataFrame, so they are made when first asked for
(``frames.ComparisonFrame``), with pandas: a command that prints plain rows never imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from ..lazy import pandas as pd
from .all_pairs import drift_html
from .experiment import experiment_table
from .panels import comparison_panels_html, frame_rows
from .pyterrier import experiment_html
from .tables import DEFAULT_ROUND, HtmlTable, comparison_html, history_html

_FRAMES = ("ComparisonFrame", "ExperimentFrame", "HistoryFrame")

DEFAULT_SETTINGS = {
    "level": 0.95,
    "interval": "t",
    "test": "t",
    "correction": "none",
    "alpha": 0.05,
}
"""compare's settings, for a frame that lost its ``attrs["comparison"]``."""

EVERY_COLUMN = (
    "every column: PyTerrier's Experiment table (p-values, queries improved and degraded)"
)
"""The summary of the wide table under the panels."""


def __getattr__(name: str) -> type:
    if name in _FRAMES:
        return _frame_classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _frame_classes() -> dict[str, type]:
    class _DisplayFrame(pd.DataFrame):
        @property
        def _constructor(self):
            # Frames derived by selection or arithmetic are plain DataFrames: the table layout
            # only fits the whole result.
            return pd.DataFrame

        def _display_options(self, round: Any, highlight: Any) -> dict[str, Any]:  # noqa: A002
            stored = self.attrs.get("display", {})
            return {
                "round": stored.get("round", DEFAULT_ROUND) if round is None else round,
                "highlight": stored.get("highlight", "bold")
                if highlight == "default"
                else highlight,
            }

        def _render(self, **options: Any) -> str:
            raise NotImplementedError

        def styled(
            self,
            round: int | Mapping[str, int] | None = None,  # noqa: A002 (PyTerrier's name)
            highlight: str | None = "default",
        ) -> HtmlTable:
            """The HTML table with these display options (Jupyter shows it as a table).

            Args:
                round: decimals, one number or a dict measure -> decimals (default 4).
                highlight: ``'bold'`` (default), ``'color'`` or None.
            """
            return HtmlTable(self._render(**self._display_options(round, highlight)))

        def _repr_html_(self) -> str:
            return self.styled().html

    class ComparisonFrame(_DisplayFrame):
        """:func:`rankhouse.compare.compare`'s result: shown as compare's compact panels (one
        table per measure: mean, difference with its interval, g_z, verdict), PyTerrier's
        Experiment table with every column folded under them, and the order drift when
        asked for."""

        _metadata = ["_drift"]

        @property
        def drift(self) -> pd.DataFrame | None:
            """The order drift of each run from the baseline (``compare(..., drift=True)``;
            :data:`~rankhouse.columns.DRIFT_COLUMNS`), or None when not asked for."""
            return getattr(self, "_drift", None)

        def _render(self, **options: Any) -> str:
            settings = {**DEFAULT_SETTINGS, **self.attrs.get("comparison", {})}
            frame = pd.DataFrame(self)
            found = comparison_panels_html(frame_rows(frame), settings, **options)
            wide = comparison_html(frame, settings=settings, **options)
            found += f"<details><summary>{EVERY_COLUMN}</summary>{wide}</details>"
            if self.drift is not None:
                digits = options["round"] if isinstance(options["round"], int) else 4
                found += drift_html(self.drift, round=digits)
            return found

        def experiment_table(self) -> pd.DataFrame:
            """The wide table, one row per run (:func:`.experiment.experiment_table`)."""
            return experiment_table(self)

    class HistoryFrame(_DisplayFrame):
        """:func:`rankhouse.history.history`'s result: the best value per measure and qrels
        set marked, failed gates in red."""

        def _render(self, **options: Any) -> str:
            level = self.attrs.get("history", {}).get("level")
            return history_html(pd.DataFrame(self), level=level, **options)

    class ExperimentFrame(_DisplayFrame):
        """PyTerrier's ``pt.Experiment`` frame (``rankhouse.experiment(...,
        shape="pyterrier")``): shown with the best values marked, as PyTerrier's Styler."""

        def _render(self, **options: Any) -> str:
            return experiment_html(pd.DataFrame(self), **options)

    made = {
        "ComparisonFrame": ComparisonFrame,
        "ExperimentFrame": ExperimentFrame,
        "HistoryFrame": HistoryFrame,
    }
    for name, frame_class in made.items():  # found again by name (pickle, documentation)
        frame_class.__module__ = __name__
        frame_class.__qualname__ = name
    return made
