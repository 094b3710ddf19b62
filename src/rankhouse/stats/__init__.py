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

The names of :mod:`.drift` are imported with the package (its function ``drift`` shares the
module's name, which an import of the module would otherwise put in its place); every other
name is imported from its module at its first use (:func:`rankhouse.lazy.package_names`), so
that ``history`` loads :mod:`.estimates` and :mod:`.drift` alone.
"""

from ..lazy import package_names
from .drift import (  # re-exported
    Drift as Drift,
)
from .drift import (
    drift as drift,
)
from .drift import (
    kendall_tau as kendall_tau,
)
from .drift import (
    overlap as overlap,
)
from .drift import (
    rank_biased_overlap as rank_biased_overlap,
)
from .drift import (
    tau_ap as tau_ap,
)

_MODULES = {
    "..defaults": (
        "DEFAULT_DEPTH",
        "DEFAULT_LEVEL",
        "DEFAULT_PERMUTATIONS",
        "DEFAULT_PERSISTENCE",
        "DEFAULT_SEED",
    ),
    ".estimates": (
        "INTERVAL_METHODS",
        "EffectSize",
        "Interval",
        "Summary",
        "check_alpha",
        "check_direction",
        "check_level",
        "check_margin",
        "check_resampling",
        "difference_interval",
        "effect_size",
        "hedges_correction",
        "mean_interval",
        "summarize",
        "t_interval",
    ),
    ".paired": (
        "CORRECTION_NAMES",
        "CORRECTIONS",
        "TESTS",
        "PairedTest",
        "bootstrap_null_sampler",
        "check_correction",
        "check_test",
        "correct",
        "correction_method",
        "paired_test",
    ),
    ".pairs": (
        "AnovaRow",
        "AnovaTable",
        "PairwiseResult",
        "all_pairs",
        "compact_letter_display",
        "randomised_tukey_hsd",
        "tukey_hsd",
        "two_way_anova",
    ),
    ".verdicts": (
        "DEFAULT_POWER",
        "GATE_WORDS",
        "VERDICTS",
        "NonInferiority",
        "Verdict",
        "detectable_effect_size",
        "gate_status",
        "minimum_detectable_effect",
        "non_inferiority",
        "verdict",
    ),
}

__getattr__ = package_names(__name__, _MODULES)
__all__ = sorted(
    [
        *(name for names in _MODULES.values() for name in names),
        "Drift",
        "drift",
        "kendall_tau",
        "overlap",
        "rank_biased_overlap",
        "tau_ap",
    ]
)
