"""Which value of a measure is the best: the largest for most, the smallest for the shares of
unjudged documents and RBP's residual, none for counts (they describe the judgments, not the
ranking). Tables mark it; this module imports nothing heavy, so the command line uses it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..cells import is_missing

# Measures where the largest value is not the best one: counts summed over queries and the
# shares of unjudged documents.
_NOT_RANKED = frozenset({"NumQ", "NumRet", "NumRel", "NumRelRet", "NumNonRelJudgedRet"})
_LOWER_IS_BETTER = frozenset({"Unj", "RBP_resid"})


def direction(measure: str) -> int:
    """+1 when larger is better, -1 when smaller is, 0 when the measure ranks nothing."""
    name = measure.split("(", 1)[0].split("@", 1)[0]
    if name in _NOT_RANKED:
        return 0
    return -1 if name in _LOWER_IS_BETTER else 1


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
