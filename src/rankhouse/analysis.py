"""The warehouse's verbs across runs, on :class:`~rankhouse.Warehouse`: a comparison against a
baseline with intervals, effect sizes and verdicts, every pair of runs at once, and the order
drift of runs from a baseline (``rankhouse compare``, ``compare --all-pairs``, ``compare
--drift``). Each call is one unit of work: a DuckDB file is held for its length only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .defaults import (
    DEFAULT_DEPTH,
    DEFAULT_LEVEL,
    DEFAULT_PERMUTATIONS,
    DEFAULT_PERSISTENCE,
    DEFAULT_SEED,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    import pandas as pd

    from .backends import Backend
    from .compare import AllPairs


class Analysis:
    """``compare``, ``all_pairs`` and ``drift`` of :class:`~rankhouse.Warehouse`."""

    backend: Backend
    _call: Callable[[], AbstractContextManager[Any]]  # the Warehouse's: one unit of work

    def compare(
        self,
        qrels: Any,
        runs: Any,
        measures: Any,
        *,
        names: Any = None,
        baseline: Any = None,
        test: Any = "t",
        correction: str | None = "none",
        alpha: float = 0.05,
        correction_alpha: float | None = None,
        permutations: int = DEFAULT_PERMUTATIONS,
        seed: int = DEFAULT_SEED,
        level: float = DEFAULT_LEVEL,
        interval: str = "t",
        margin: Any = None,
        drift: bool = False,
        drift_depth: int = DEFAULT_DEPTH,
        drift_persistence: float = DEFAULT_PERSISTENCE,
        relevance_level: int = 1,
        missing_queries: str = "zero",
        queries: Any = None,
        perquery: bool | str = False,
        round: Any = None,  # noqa: A002 (PyTerrier's name)
        highlight: str | None = "bold",
    ) -> Any:
        """Means of several runs with their intervals and, against a baseline, paired tests,
        intervals of the differences, Hedges' g_z and verdicts (``rankhouse compare``), with
        PyTerrier's ``Experiment`` parameters (docs/compare.md).

        Args:
            qrels: a stored qrels set (name or id), a file path, or qrels data.
            runs: runs as :meth:`evaluate` takes them (a dict name -> run names them).
            measures: measure names or Measure objects.
            names: the names shown for the runs, one per run in order.
            baseline: the run the others are tested against: its position among ``runs``
                (an int, PyTerrier's ``baseline=0``), or its name or file (None: means only).
            test: ``"t"``, ``"wilcoxon"``, ``"randomization"``, ``"bootstrap"``, or a callable
                as :func:`scipy.stats.ttest_rel`.
            correction: ``"none"``, ``"bh"``, or any statsmodels multipletests method name
                or alias (``"bonferroni"``, ``"holm"``, ``"hs"``, ``"fdr_bh"``...).
            alpha: significance level of the corrected p-values and the verdicts.
            correction_alpha: PyTerrier's name for ``alpha``.
            permutations: resamples of the randomization and bootstrap tests and intervals.
            seed: seed of everything resampled.
            level: confidence level of the intervals (0.95).
            interval: ``"t"`` (Student's t) or ``"bootstrap"`` (seeded percentile bootstrap).
            margin: the verdicts' practical margin: None, a number in the measure's units,
                ``"2%"`` of the baseline's mean, or a dict measure -> either.
            drift: also the order drift of each run from the baseline (the frame's
                ``drift``; stored).
            drift_depth: the drift's depth k.
            drift_persistence: RBO's persistence p.
            relevance_level: as for :meth:`evaluate`.
            missing_queries: as for :meth:`evaluate`.
            queries: only these query ids (a list, a topics DataFrame, or a file of ids).
            perquery: True: the per-query values instead of the means; ``"both"``: both.
            round: decimals a notebook shows, a number or a dict measure -> decimals.
            highlight: how a notebook marks the best mean: ``"bold"``, ``"color"``, None.

        See :func:`rankhouse.compare.compare` for the result's columns and the errors.
        """
        from .compare import CompareOptions, compare

        options = CompareOptions(
            names=names,
            baseline=baseline,
            test=test,
            correction=correction,
            alpha=alpha,
            correction_alpha=correction_alpha,
            permutations=permutations,
            seed=seed,
            level=level,
            interval=interval,
            margin=margin,
            drift=drift,
            depth=drift_depth,
            persistence=drift_persistence,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
            queries=queries,
            perquery=perquery,
            round=round,
            highlight=highlight,
        )
        with self._call():
            return compare(self.backend, qrels, runs, measures, options)

    def all_pairs(
        self,
        qrels: Any,
        runs: Any,
        measures: Any,
        *,
        names: Any = None,
        test: Any = "tukey",
        correction: str | None = None,
        alpha: float = 0.05,
        permutations: int = DEFAULT_PERMUTATIONS,
        seed: int = DEFAULT_SEED,
        level: float = DEFAULT_LEVEL,
        interval: str = "t",
        relevance_level: int = 1,
        missing_queries: str = "zero",
        queries: Any = None,
    ) -> AllPairs:
        """Every pair of runs compared, per measure (``rankhouse compare --all-pairs``): the
        two-way ANOVA, a p-value for every pair with the family-wise error controlled, the
        matrices of differences and p-values, and compact letter groups.

        Args:
            qrels: a stored qrels set (name or id), a file path, or qrels data.
            runs: at least two runs, as :meth:`evaluate` takes them.
            measures: measure names or Measure objects.
            names: the names shown for the runs, one per run in order.
            test: ``"tukey"`` (randomised Tukey HSD), or a paired test (``"t"``,
                ``"wilcoxon"``, ``"randomization"``, ``"bootstrap"``) corrected across the
                pairs.
            correction: for a paired test, ``"holm"`` (None) or ``"bh"`` or any
                statsmodels name; none with Tukey's HSD.
            alpha: the level at which a pair is separable (the letters).
            permutations: the randomised tests' permutations or resamples.
            seed: their seed.
            level: confidence level of the intervals of the means.
            interval: ``"t"`` or ``"bootstrap"``.
            relevance_level: as for :meth:`evaluate`.
            missing_queries: as for :meth:`evaluate`.
            queries: only these query ids.

        Returns:
            An :class:`~rankhouse.compare.AllPairs` (``anova``, ``pairs``, ``groups``,
            ``differences(measure)``, ``p_values(measure)``); a notebook shows its tables.

        See :func:`rankhouse.compare.all_pairs` for the errors.
        """
        from .compare import CompareOptions, all_pairs

        options = CompareOptions(
            names=names,
            test=test,
            correction=correction,
            alpha=alpha,
            permutations=permutations,
            seed=seed,
            level=level,
            interval=interval,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
            queries=queries,
        )
        with self._call():
            return all_pairs(self.backend, qrels, runs, measures, options)

    def drift(
        self,
        runs: Any,
        baseline: str | int,
        *,
        k: int = DEFAULT_DEPTH,
        p: float = DEFAULT_PERSISTENCE,
        queries: Any = None,
        per_query: bool = False,
    ) -> pd.DataFrame:
        """The order drift of stored runs from a stored baseline: RBO (persistence ``p``,
        extrapolated), Kendall's tau and tau_AP over the top ``k``, and overlap@k; per run
        as means, or per query. Stored once, then read (the views ``drift_results`` and
        ``query_drift``).

        Args:
            runs: stored run names or ids (one or several).
            baseline: the stored run they are compared with.
            k: the depth compared.
            p: RBO's persistence.
            queries: only these query ids (a list or a set).
            per_query: one row per run and query instead of one per run.

        See :func:`rankhouse.compare.drift` for the columns and the errors.
        """
        wanted = None if queries is None else {str(q) for q in queries}
        from .compare import drift

        with self._call():
            return drift(
                self.backend, runs, baseline, k=k, p=p, queries=wanted, per_query=per_query
            )
