"""The regression gate: is a run no worse than its baseline, on the same inputs?

* :mod:`.gate`: the verb (:func:`regress`), its steps in order, and its result;
* :mod:`.options`: what the gate is asked (:class:`GateOptions`, one object the API and the
  CLI build), the gated measures with their margins, and the order-drift bounds
  (``--max-drift rbo@100:0.9``);
* :mod:`.verdicts`: each measure's interval, effect size and verdict, in the non-inferiority
  or the significance mode, and its margin: given, or calibrated from the system's nightly
  spread, and what it means (false alarms, the drop caught);
* :mod:`.baselines`: the baselines named by a rule (``previous``, ``last-passed``, ``best``,
  ``reference``), the pinned references, and whether the baseline was judged on the run's
  inputs;
* :mod:`.files`: what a check leaves: its rows, stored in one transaction (and removed), and
  its words (the outcome, what its margins mean) and Markdown, JSON and JUnit files.
"""

from ..defaults import DEFAULT_FALSE_ALARM
from .baselines import (
    BASELINE_RULES,
    BEST,
    LAST_PASSED,
    PREVIOUS,
    REFERENCE,
    InputChangeError,
    NoBaselineError,
    NoPassedRunError,
    accept_reference,
    current_reference,
    previous_run,
    reference_history,
)
from .files import remove_check
from .gate import OUTCOMES, STATUSES, RegressResult, regress
from .options import MODES, NOT_SHOWN_POLICIES, GateOptions
from .verdicts import MIN_NIGHTS

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
    "GateOptions",
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
