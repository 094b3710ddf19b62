"""The settings of a comparison, one object shared by the API, the report and the CLI.

They are PyTerrier's ``Experiment``'s where they mean the same (``names``, ``baseline`` by
index or name, ``test`` with a callable, ``correction`` by statsmodels' names,
``correction_alpha``, ``perquery``, ``round``, ``highlight``; ``queries`` plays
``filter_by_topics``): docs/compare.md maps them one by one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..defaults import DEFAULT_PERMUTATIONS, DEFAULT_SEED
from ..stats import DEFAULT_DEPTH, DEFAULT_LEVEL, DEFAULT_PERSISTENCE, PairedTest

Margin = float | str | Mapping[str, float | str] | None
"""A practical margin: a number in the measure's units, ``"2%"`` of the baseline's mean, or a
dict measure -> either (measures left out have none)."""


@dataclass(frozen=True)
class CompareOptions:
    """How :func:`rankhouse.compare.compare` compares runs (every field has its default).

    Attributes:
        names: the names shown for the runs, one per run in order (PyTerrier's ``names``);
            the stored runs keep theirs. Default: the stored names.
        baseline: the run the others are tested against: its position among the runs (an
            int, as PyTerrier's ``baseline=0``), or its shown name, stored name or file (a
            run outside the runs compared is listed first). None: means only.
        test: ``'t'``, ``'wilcoxon'``, ``'randomization'``, ``'bootstrap'`` (see
            :mod:`rankhouse.stats`), or a callable ``test(run_values, baseline_values)``
            returning ``(statistic, p-value)`` as :func:`scipy.stats.ttest_rel` does.
        correction: ``'none'`` (or None), ``'bh'``, or any method name or alias of
            :func:`statsmodels.stats.multitest.multipletests` (``'bonferroni'``,
            ``'holm'``, ``'hs'``, ``'fdr_bh'``...), applied per measure over the runs other
            than the baseline (over the pairs of runs in :func:`~rankhouse.compare.all_pairs`,
            where None means Holm for a paired test and nothing for Tukey's HSD).
        alpha: significance level of the (corrected) p-values.
        correction_alpha: PyTerrier's name for ``alpha`` (give one of the two).
        permutations: resamples of the randomization and bootstrap tests.
        seed: seed of the randomization and bootstrap tests and of bootstrap intervals.
        level: the confidence level of the intervals of means and differences.
        interval: ``'t'`` (Student's t, the default) or ``'bootstrap'`` (the seeded
            percentile bootstrap, ``permutations`` resamples).
        margin: the practical margin of the verdicts: None (the default: better and worse
            mean significant, and no run is shown equivalent), a number in the measure's
            units (``0.01``), a share of the baseline's mean (``"2%"``), or a dict measure
            -> either.
        drift: also measure the order drift of each run from the baseline (stored).
        depth: the drift's depth k (the top k of each ranking).
        persistence: RBO's persistence p.
        relevance_level: grade from which a judgment counts as relevant (trec_eval ``-l``).
        missing_queries: ``"zero"`` (trec_eval ``-c``) or ``"skip"``.
        queries: evaluate only these queries (PyTerrier's ``filter_by_topics``): a list of
            query ids, a DataFrame with a ``qid`` or ``query_id`` column (PyTerrier's
            topics), or a file with one query id per line. Queries without judgments are
            never evaluated (``filter_by_qrels``). The means are then those of the subset,
            computed from the stored per-query values (and not stored themselves).
        perquery: False: the means (one row per run and measure); True: the per-query values
            instead; ``'both'``: the tuple (means, per-query values).
        round: decimals shown in a notebook, one number or a dict measure -> decimals
            (default 4); the values themselves are never rounded.
        highlight: how a notebook marks the best mean per measure: ``'bold'``, ``'color'``
            (or ``'colour'``), or None.
    """

    names: Sequence[str] | None = None
    baseline: Any = None
    test: PairedTest = "t"
    correction: str | None = "none"
    alpha: float = 0.05
    correction_alpha: float | None = None
    permutations: int = DEFAULT_PERMUTATIONS
    seed: int = DEFAULT_SEED
    level: float = DEFAULT_LEVEL
    interval: str = "t"
    margin: Margin = None
    drift: bool = False
    depth: int = DEFAULT_DEPTH
    persistence: float = DEFAULT_PERSISTENCE
    relevance_level: int = 1
    missing_queries: str = "zero"
    queries: Any = None
    perquery: bool | str = False
    round: int | Mapping[str, int] | None = None  # noqa: A003 (PyTerrier's name)
    highlight: str | None = "bold"
