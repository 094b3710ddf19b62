"""Statistics of paired per-query values: tests, corrections, intervals, effect sizes,
verdicts, many systems at once, and order drift between two rankings.

One module per concept, each with its formula and reference:

* :mod:`.paired`: paired significance tests (t, Wilcoxon, randomization, bootstrap, a
  callable) of two runs' per-query values.
* :mod:`.corrections`: multiple-testing corrections by statsmodels' names.
* :mod:`.checks`: the checks of alpha, a confidence level, a margin, a direction, and values.

Everything here is a plain function over numbers (lists or numpy arrays, paired by query id
by the caller, NaN pairs dropped) returning numbers or small frozen dataclasses; scipy and
statsmodels are imported at first use (:mod:`rankhouse.lazy`), so importing this package
stays light.
"""

from ..defaults import DEFAULT_PERMUTATIONS, DEFAULT_SEED
from .checks import check_alpha
from .corrections import (
    CORRECTION_NAMES,
    CORRECTIONS,
    check_correction,
    correct,
    correction_method,
)
from .paired import TESTS, PairedTest, bootstrap_null_sampler, check_test, paired_test

__all__ = [
    "CORRECTIONS",
    "CORRECTION_NAMES",
    "DEFAULT_PERMUTATIONS",
    "DEFAULT_SEED",
    "TESTS",
    "PairedTest",
    "bootstrap_null_sampler",
    "check_alpha",
    "check_correction",
    "check_test",
    "correct",
    "correction_method",
    "paired_test",
]
