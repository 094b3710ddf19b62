"""Statistics of paired per-query values: tests, corrections, intervals, effect sizes,
verdicts, many systems at once, and order drift between two rankings.

One module per question, each with its formulas and references:

* :mod:`.estimates`: what paired values estimate: n, mean and standard deviation, t and
  seeded percentile bootstrap intervals of a mean or a difference, Cohen's d_z and Hedges'
  g_z, Student's t quantile in plain Python, and the checks of the arguments every
  statistic shares.
* :mod:`.paired`: is a run different from its baseline? Paired significance tests (t,
  Wilcoxon, randomization, bootstrap, a callable) and multiple-testing corrections by
  statsmodels' names.
* :mod:`.verdicts`: what may be said of it: better / worse / equivalent / inconclusive with
  the numbers behind it, non-inferiority at a margin and the gate's words, and the power
  behind them (the minimum detectable effect, the gate's operating characteristics).
* :mod:`.pairs`: many systems at once: the two-way system x query ANOVA, all pairs by paired
  tests with a correction or by Tukey HSD (randomised and parametric), and the compact
  letter display.
* :mod:`.drift`: order drift of a run's ranking from its baseline's: extrapolated rank-biased
  overlap, Kendall's tau, tau_AP and overlap@k over the top k.

Everything here is a plain function over numbers (lists or numpy arrays, paired by query id
by the caller, NaN pairs dropped) returning numbers or small frozen dataclasses; scipy and
statsmodels are imported at first use (:mod:`rankhouse.lazy`), so importing this package
stays light.
"""

from ..defaults import (
    DEFAULT_DEPTH,
    DEFAULT_LEVEL,
    DEFAULT_PERMUTATIONS,
    DEFAULT_PERSISTENCE,
    DEFAULT_SEED,
)
from .drift import Drift, drift, kendall_tau, overlap, rank_biased_overlap, tau_ap
from .estimates import (
    INTERVAL_METHODS,
    EffectSize,
    Interval,
    Summary,
    check_alpha,
    check_direction,
    check_level,
    check_margin,
    check_resampling,
    difference_interval,
    effect_size,
    hedges_correction,
    mean_interval,
    summarize,
    t_interval,
)
from .paired import (
    CORRECTION_NAMES,
    CORRECTIONS,
    TESTS,
    PairedTest,
    bootstrap_null_sampler,
    check_correction,
    check_test,
    correct,
    correction_method,
    paired_test,
)
from .pairs import (
    AnovaRow,
    AnovaTable,
    PairwiseResult,
    all_pairs,
    compact_letter_display,
    randomised_tukey_hsd,
    tukey_hsd,
    two_way_anova,
)
from .verdicts import (
    DEFAULT_POWER,
    GATE_WORDS,
    VERDICTS,
    NonInferiority,
    Verdict,
    detectable_effect_size,
    gate_status,
    minimum_detectable_effect,
    non_inferiority,
    verdict,
)

__all__ = [
    "CORRECTIONS",
    "CORRECTION_NAMES",
    "DEFAULT_DEPTH",
    "DEFAULT_LEVEL",
    "DEFAULT_PERMUTATIONS",
    "DEFAULT_PERSISTENCE",
    "DEFAULT_POWER",
    "DEFAULT_SEED",
    "INTERVAL_METHODS",
    "TESTS",
    "VERDICTS",
    "AnovaRow",
    "AnovaTable",
    "Drift",
    "EffectSize",
    "GATE_WORDS",
    "Interval",
    "NonInferiority",
    "PairedTest",
    "PairwiseResult",
    "Summary",
    "Verdict",
    "all_pairs",
    "bootstrap_null_sampler",
    "check_alpha",
    "check_correction",
    "check_direction",
    "check_level",
    "check_margin",
    "check_resampling",
    "check_test",
    "compact_letter_display",
    "correct",
    "correction_method",
    "detectable_effect_size",
    "difference_interval",
    "drift",
    "effect_size",
    "gate_status",
    "hedges_correction",
    "kendall_tau",
    "mean_interval",
    "minimum_detectable_effect",
    "non_inferiority",
    "overlap",
    "paired_test",
    "randomised_tukey_hsd",
    "rank_biased_overlap",
    "summarize",
    "t_interval",
    "tau_ap",
    "tukey_hsd",
    "two_way_anova",
    "verdict",
]
