"""The regression gate: is a run no worse than its baseline, on the same inputs?

* :mod:`.gate`: the verb (:func:`regress`) and its result; one stored check;
* :mod:`.verdicts`: each measure's interval, effect size and verdict, in the non-inferiority
  or the significance mode, with the margins;
* :mod:`.baselines`: the baselines named by a rule (``previous``, ``last-passed``, ``best``);
* :mod:`.inputs`: whether the baseline was judged on the run's inputs, and what differs;
* :mod:`.drift`: the order-drift bounds (``--max-drift rbo@100:0.9``);
* :mod:`.store`: a gate's check stored in one transaction, and removed;
* :mod:`.files`: a gate's Markdown, JSON and JUnit files.
"""

from .baselines import (
    BASELINE_RULES,
    BEST,
    LAST_PASSED,
    PREVIOUS,
    NoBaselineError,
    NoPassedRunError,
    previous_run,
)
from .gate import STATUSES, RegressResult, regress
from .inputs import InputChangeError
from .store import remove_check
from .verdicts import MODES

__all__ = [
    "BASELINE_RULES",
    "BEST",
    "LAST_PASSED",
    "MODES",
    "PREVIOUS",
    "STATUSES",
    "InputChangeError",
    "NoBaselineError",
    "NoPassedRunError",
    "RegressResult",
    "previous_run",
    "regress",
    "remove_check",
]
