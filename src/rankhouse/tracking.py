"""The warehouse's verbs over time, on :class:`~rankhouse.Warehouse`: the history of stored
evaluations and the HTML report (``rankhouse history``, ``report``). Each call is one unit of
work: a DuckDB file is held for its length only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import history, report

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    import pandas as pd

    from .backends import Backend


class Tracking:
    """``history`` and ``report`` of :class:`~rankhouse.Warehouse`."""

    backend: Backend
    session: Callable[[], AbstractContextManager[Any]]  # the Warehouse's

    def history(
        self,
        *,
        system: str | None = None,
        run: str | int | None = None,
        qrels: str | int | None = None,
        measures: Any = None,
        since: Any = None,
        relevance_level: int = 1,
        missing_queries: str = "zero",
    ) -> pd.DataFrame:
        """Stored evaluations over time, one row per run (``rankhouse history``).

        Args:
            system: only runs with this system tag.
            run: only this run (name or id).
            qrels: only evaluations against this qrels set (name or id).
            measures: only these measures, as columns in this order (names, ir_measures
                objects, trec_eval nicknames).
            since: only runs ingested at or after this date (ISO text, date or datetime, UTC).
            relevance_level: the level ``measures`` were evaluated at (``AP`` with 2 is the
                column ``AP(rel=2)``).
            missing_queries: the policy ``measures`` were evaluated with.

        See :func:`rankhouse.history.history` for the columns and the errors.
        """
        with self.session():
            return history.history(
                self.backend,
                system=system,
                run=run,
                qrels=qrels,
                measures=measures,
                since=since,
                relevance_level=relevance_level,
                missing_queries=missing_queries,
            )

    def report(
        self,
        path: str | os.PathLike[str],
        *,
        qrels: Any = None,
        runs: Any = None,
        systems: Any = None,
        measures: Any = None,
        baseline: Any = None,
        test: str = "t",
        correction: str = "none",
        alpha: float = 0.05,
        relevance_level: int = 1,
        round: Any = 4,  # noqa: A002 (PyTerrier's name)
        highlight: str | None = "bold",
    ) -> Path:
        """Write the HTML report to ``path`` (``rankhouse report``) and return the path.

        Args:
            path: the HTML file to write.
            qrels: only this qrels set (name, id or file).
            runs: only these runs (names, ids or files).
            systems: only the runs of these system tags.
            measures: the measures shown, in this order (default: the stored ones).
            baseline: the run the others are tested against; None: means only.
            test: the paired test, as for :meth:`compare`.
            correction: the multiple-testing correction, as for :meth:`compare`.
            alpha: significance level.
            relevance_level: grade from which binary measures count a document as relevant.
            round: decimals shown, one number or a dict measure -> decimals.
            highlight: how the best mean per measure is marked: ``'bold'``, ``'color'``, None.

        See :func:`rankhouse.report.build_report` for what the report holds and the errors.
        """
        with self.session():
            return report.write_report(
                self.backend,
                path,
                qrels=qrels,
                runs=runs,
                systems=systems,
                measures=measures,
                baseline=baseline,
                test=test,
                correction=correction,
                alpha=alpha,
                relevance_level=relevance_level,
                round=round,
                highlight=highlight,
            )
