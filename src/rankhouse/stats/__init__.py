"""Statistics of paired per-query values: tests, corrections, intervals, effect sizes,
verdicts, many systems at once, and order drift between two rankings.

One module per concept, each with its formula and reference:

* :mod:`.paired`: paired significance tests (t, Wilcoxon, randomization, bootstrap, a
  callable) of two runs' per-query values.
* :mod:`.corrections`: multiple-testing corrections by statsmodels' names.
* :mod:`.checks`: the checks of alpha, a confidence level, a margin, a direction, and values.
* :mod:`.summary`: n, mean and standard deviation of paired differences.
* :mod:`.intervals`: t and seeded percentile bootstrap intervals of a mean or a difference.
* :mod:`.effect_size`: Cohen's d_z and Hedges' g_z of a paired difference.
* :mod:`.power`: the minimum detectable effect of a paired t-test.
* :mod:`.verdict`: better / worse / equivalent / inconclusive, with the numbers behind it.
* :mod:`.noninferiority`: no worse than the baseline minus a margin (a gate's test), and the
  gate's words at a margin (non-inferior, regressed, not shown).
* :mod:`.anova`: the two-way system x query analysis of variance.
* :mod:`.pairwise`: all pairs of systems (the result shape; paired tests with a correction).
* :mod:`.tukey`: randomised and parametric Tukey HSD over all pairs.
* :mod:`.letters`: compact letter display of the pairs that cannot be told apart.
* :mod:`.rankings`: rankings as the drift measures take them.
* :mod:`.rbo`: extrapolated rank-biased overlap.
* :mod:`.rank_correlation`: Kendall's tau, tau_AP and overlap@k over the top k.
* :mod:`.drift`: order drift of a run's ranking from its baseline's (all of the above).

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
from .anova import AnovaRow, AnovaTable, two_way_anova
from .checks import check_alpha, check_direction, check_level, check_margin, check_resampling
from .corrections import (
    CORRECTION_NAMES,
    CORRECTIONS,
    check_correction,
    correct,
    correction_method,
)
from .drift import Drift, drift
from .effect_size import EffectSize, effect_size, hedges_correction
from .intervals import (
    INTERVAL_METHODS,
    Interval,
    difference_interval,
    mean_interval,
    t_interval,
)
from .letters import compact_letter_display
from .noninferiority import GATE_WORDS, NonInferiority, gate_status, non_inferiority
from .paired import TESTS, PairedTest, bootstrap_null_sampler, check_test, paired_test
from .pairwise import PairwiseResult, all_pairs
from .power import DEFAULT_POWER, detectable_effect_size, minimum_detectable_effect
from .rank_correlation import kendall_tau, overlap, tau_ap
from .rbo import rank_biased_overlap
from .summary import Summary, summarize
from .tukey import randomised_tukey_hsd, tukey_hsd
from .verdict import VERDICTS, Verdict, verdict

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
