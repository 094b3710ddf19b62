"""The regression gate: is a run no worse than its baseline, on the same inputs?

* :mod:`.gate`: the verb (:func:`regress`) and its result; one stored check;
* :mod:`.verdicts`: each measure's interval, effect size and verdict, in the non-inferiority
  or the significance mode, with the margins;
* :mod:`.baselines`: the baselines named by a rule (``previous``, ``last-passed``, ``best``,
  ``reference``), and the pinned references;
* :mod:`.calibration`: each measure's nightly spread from history, its calibrated margin and
  what the margin means (false alarms, the drop caught);
* :mod:`.inputs`: whether the baseline was judged on the run's inputs, and what differs;
* :mod:`.drift`: the order-drift bounds (``--max-drift rbo@100:0.9``);
* :mod:`.store`: a gate's check stored in one transaction, and removed;
* :mod:`.files`: the gate's words (the outcome, what its margins mean) and its Markdown,
  JSON and JUnit files.
"""

from ..defaults import DEFAULT_FALSE_ALARM
from .baselines import (
    BASELINE_RULES,
    BEST,
    LAST_PASSED,
    PREVIOUS,
    REFERENCE,
    NoBaselineError,
    NoPassedRunError,
    accept_reference,
    current_reference,
    previous_run,
    reference_history,
)
from .calibration import MIN_NIGHTS
from .gate import OUTCOMES, STATUSES, RegressResult, regress
from .inputs import InputChangeError
from .store import remove_check
from .verdicts import MODES, NOT_SHOWN_POLICIES

__all__ = [
    "BASELINE_RULES",
    "BEST",
    "DEFAULT_FALSE_ALARM",
    "LAST_PASSED",
    "MIN_NIGHTS",
    "MODES",
    "NOT_SHOWN_POLICIES",
    "OUTCOMES",
    "PREVIOUS",
    "REFERENCE",
    "STATUSES",
    "InputChangeError",
    "NoBaselineError",
    "NoPassedRunError",
    "RegressResult",
    "accept_reference",
    "current_reference",
    "previous_run",
    "reference_history",
    "regress",
    "remove_check",
]
