"""Which value of a measure is the best, as its registry entry declares (``better``): the
largest for most, the smallest for the shares of unjudged documents and RBP's residual, none
for counts (they describe the judgments, not the ranking). Tables mark it; this module
imports nothing heavy, so the command line uses it too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..cells import is_missing
from .registry import REGISTRY

_SIGN = {"higher": 1, "lower": -1, "none": 0}
# A label's measure name: what precedes its parameters, cutoff and settings ("AP(rel=2)@5",
# "nDCG@10 [max_rank=100]").
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def direction(measure: str) -> int:
    """+1 when larger is better, -1 when smaller is, 0 when the measure ranks nothing.

    Args:
        measure: a canonical name or a label (``AP(rel=2)``, ``nDCG@10 [max_rank=100]``).
            A name the registry does not know counts as larger-is-better.
    """
    match = _NAME.match(measure.strip())
    definition = REGISTRY.lookup(match.group(0)) if match else None
    return 1 if definition is None else _SIGN[definition.better]


def best_positions(values: Sequence[Any], measure: str) -> set[int]:
    """Positions of the best value(s) of ``measure`` among ``values`` (ties all win; a
    missing value never does)."""
    sign = direction(measure)
    numbers = [None if is_missing(v) else float(v) for v in values]
    present = [v for v in numbers if v is not None]
    if sign == 0 or len(present) < 2:
        return set()
    best = max(present) if sign > 0 else min(present)
    return {i for i, v in enumerate(numbers) if v == best}


def value_range(measure: str) -> tuple[float, float] | None:
    """The range every value of ``measure`` lies in, as its registry entry declares it
    (``bounds``: (0, 1) for precision, recall, AP, RR, nDCG...), or None when unbounded or
    unknown.

    Args:
        measure: a canonical name or a label (``AP(rel=2)``, ``nDCG@10 [max_rank=100]``).
    """
    match = _NAME.match(measure.strip())
    definition = REGISTRY.lookup(match.group(0)) if match else None
    return None if definition is None else definition.bounds
