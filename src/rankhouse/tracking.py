"""The warehouse's verbs over time, on :class:`~rankhouse.Warehouse`: the history of stored
evaluations, the regression gate and the HTML report (``rankhouse history``, ``regress``,
``report``). Each call is one unit of work: a DuckDB file is held for its length only.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .defaults import (
    DEFAULT_FALSE_ALARM,
    DEFAULT_GATE_BASELINE,
    DEFAULT_GATE_MODE,
    DEFAULT_LEVEL,
    DEFAULT_PERMUTATIONS,
    DEFAULT_SEED,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    import pandas as pd

    from .backends import Backend
    from .regress import RegressResult


class Tracking:
    """``history``, ``regress`` and ``report`` of :class:`~rankhouse.Warehouse`."""

    backend: Backend
    _call: Callable[[], AbstractContextManager[Any]]  # the Warehouse's: one unit of work

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
        all_measures: bool = False,
        level: float = 0.95,
        drift: bool = False,
    ) -> pd.DataFrame:
        """Stored evaluations over time, one row per run (``rankhouse history``).

        Args:
            system: only runs with this system tag.
            run: only this run (name or id).
            qrels: only evaluations against this qrels set (name or id).
            measures: only these measures, as columns in this order (names, ir_measures
                objects, trec_eval nicknames); default: the labels some call asked for.
            since: only runs ingested at or after this date (ISO text, date or datetime, UTC).
            relevance_level: the level ``measures`` were evaluated at (``AP`` with 2 is the
                column ``AP(rel=2)``).
            missing_queries: the policy ``measures`` were evaluated with.
            all_measures: without ``measures``, every stored label, also the
                precision-recall points a report stored for its curves.
            level: the confidence level of each mean's interval (``<measure> low``,
                ``<measure> high``: Student's t over the per-query values).
            drift: also each run's newest stored order drift from its baseline (RBO,
                Kendall's tau, tau_AP, overlap), as ``compare --drift`` stored it.

        See :func:`rankhouse.history.history` for the columns and the errors.
        """
        from .history import history as stored_history

        with self._call():
            return stored_history(
                self.backend,
                system=system,
                run=run,
                qrels=qrels,
                measures=measures,
                since=since,
                relevance_level=relevance_level,
                missing_queries=missing_queries,
                all_measures=all_measures,
                level=level,
                drift=drift,
            )

    def regress(
        self,
        run: Any,
        *,
        baseline: Any = DEFAULT_GATE_BASELINE,
        qrels: Any,
        measures: Any,
        mode: str = DEFAULT_GATE_MODE,
        max_drop: float | None = None,
        relative: bool = False,
        false_alarm: float = DEFAULT_FALSE_ALARM,
        not_shown: str = "auto",
        alpha: float = 0.05,
        level: float = DEFAULT_LEVEL,
        test: str = "t",
        correction: str = "holm",
        permutations: int = DEFAULT_PERMUTATIONS,
        seed: int = DEFAULT_SEED,
        relevance_level: int = 1,
        missing_queries: str = "zero",
        max_drift: Any = None,
        allow_missing_baseline: bool = False,
        new_system: str = "warn",
        allow_input_change: bool = False,
    ) -> RegressResult:
        """Gate ``run`` against a baseline and store the verdict (``rankhouse regress``).

        In the default mode (``non_inferiority``) a measure passes when it is shown no
        worse than the baseline by more than its margin (the lower limit of the (1 - 2
        alpha) t interval of the paired difference at least -margin), and fails as
        ``regressed`` (the interval lies below zero too: the evidence shows a drop) or
        ``not_shown`` (the queries cannot tell); margins not given are calibrated from the
        system's nightly history for the ``false_alarm`` target. In the ``significance``
        mode a measure fails when it moves to its worse side by more than the margin and
        the change is significant. The result's ``outcome`` is the CLI's exit code: 0
        passed or first, 1 regressed, 3 not shown; bad input raises, as the CLI's exit
        code 2.

        Args:
            run: the run under test: a stored name or id, a file or a DataFrame.
            baseline: a run (name, id, file or DataFrame), or ``'previous'`` (the latest
                earlier run of the same system tag), ``'last-passed'`` (the newest of those
                whose gate passed), ``'best'`` (the passed one with the highest mean of
                the first measure) or ``'reference'`` (the system's pinned reference:
                :meth:`accept_reference`).
            qrels: the qrels set (name, id, file or DataFrame).
            measures: one measure or a list (names, ir_measures objects, nicknames); a
                name may carry its margin: ``'nDCG@10:0.01'``, ``'AP:2%'``.
            mode: ``'non_inferiority'`` or ``'significance'``.
            max_drop: the margin of the measures given without one (absolute, or a
                fraction with ``relative``); None: calibrated.
            relative: read ``max_drop`` as a fraction of the reference's mean.
            false_alarm: the share of unchanged nights the whole check may fail.
            not_shown: ``'auto'`` (fail it when its margin was given, pass it with a
                warning when calibrated), ``'fail'`` or ``'pass'``: what a measure not shown
                non-inferior does to the check.
            alpha: significance level of the (corrected) p-values and of the one-sided
                non-inferiority test.
            level: confidence level of the intervals of the differences shown.
            test: ``"t"``, ``"wilcoxon"``, ``"randomization"`` or ``"bootstrap"``.
            correction: ``"holm"`` (the default), ``"none"`` or a statsmodels multipletests
                name, over the measures.
            permutations: resamples of the randomization and bootstrap tests.
            seed: seed of the randomization and bootstrap tests.
            relevance_level: grade from which a judgment counts as relevant.
            missing_queries: ``"zero"`` (trec_eval ``-c``) or ``"skip"``.
            max_drift: order-drift bounds, e.g. ``'rbo@100:0.9'`` (one or a list).
            allow_missing_baseline: pass the first run of a system (``history`` shows its
                gate as ``first run``; with ``'reference'`` it becomes the reference).
            new_system: ``'warn'`` or ``'fail'``: a first run whose tag is new while other
                systems are stored (a renamed tag?) passes with a warning naming the nearest
                system, or raises NoBaselineError naming it.
            allow_input_change: gate against a baseline judged on other inputs.

        Returns:
            A :class:`~rankhouse.regress.RegressResult` (``passed``, ``regressed``,
            ``verdicts``, ``drift``); a notebook shows it as the verdict table.

        See :func:`rankhouse.regress.regress` for the errors.
        """
        from .regress import GateOptions, regress

        options = GateOptions(
            baseline=baseline,
            mode=mode,
            max_drop=max_drop,
            relative=relative,
            false_alarm=false_alarm,
            not_shown=not_shown,
            alpha=alpha,
            level=level,
            test=test,
            correction=correction,
            permutations=permutations,
            seed=seed,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
            max_drift=max_drift,
            allow_missing_baseline=allow_missing_baseline,
            new_system=new_system,
            allow_input_change=allow_input_change,
        )
        with self._call():
            return regress(self.backend, run, qrels=qrels, measures=measures, options=options)

    def accept_reference(self, run: Any, *, qrels: Any, reason: str) -> dict[str, Any]:
        """Accept ``run`` as its system's reference on ``qrels`` (``rankhouse gate accept``):
        from now on ``regress(..., baseline='reference')`` weighs the system's nights against
        it. The former references stay in the table ``gate_references`` with their reasons.

        Returns:
            The stored ``gate_references`` row (system_tag, run_name, reason, accepted_at...).
        """
        from .regress import accept_reference

        with self._call():
            return accept_reference(self.backend, run, qrels=qrels, reason=reason)

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
        last: int | None = None,
        brief: bool = False,
        margin: Any = None,
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
            last: only the newest ``last`` runs of each system (the baseline stays).
            brief: compare only the newest run with the baseline (a nightly job's page).
            margin: the comparison's practical margin, as for :meth:`compare`; the table
                then shows the gate's word at that margin.

        See :func:`rankhouse.report.report.build_report` for what the report holds and the errors.
        """
        from .report.report import write_report

        with self._call():
            return write_report(
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
                last=last,
                brief=brief,
                margin=margin,
            )
