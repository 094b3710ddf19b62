"""Checks of the arguments the statistics share: alpha, a confidence level, a margin, a
direction, and a list of values (finite numbers: the caller drops NaN pairs first)."""

from __future__ import annotations

from collections.abc import Sequence

from ..defaults import MAX_PERMUTATIONS
from ..errors import Message, Option, RankhouseError
from ..lazy import numpy as np


def check_alpha(alpha: float) -> None:
    """Raise RankhouseError unless ``0 < alpha < 1``."""
    if not 0.0 < alpha < 1.0:
        raise RankhouseError(
            Message(Option("alpha"), f" must lie strictly between 0 and 1, got {alpha}")
        )


def check_resampling(permutations: int, seed: int, *, name: str = "permutations") -> None:
    """Raise RankhouseError unless ``permutations`` (called ``name``) is a whole number from
    1 to :data:`~rankhouse.defaults.MAX_PERMUTATIONS` and ``seed`` a whole number at least 0
    (numpy's generators take no negative seed)."""
    if isinstance(permutations, bool) or not isinstance(permutations, int):
        raise RankhouseError(
            Message(Option(name), f" must be a whole number, got {permutations!r}")
        )
    if not 1 <= permutations <= MAX_PERMUTATIONS:
        raise RankhouseError(
            Message(
                Option(name),
                f" must lie between 1 and {MAX_PERMUTATIONS:,} (rankhouse's bound: a p-value's "
                f"resolution is then 1e-6), got {permutations:,}",
            )
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise RankhouseError(
            Message(
                Option("seed"),
                f" must be a whole number at least 0 (numpy's random generator takes no "
                f"negative seed), got {seed!r}",
            )
        )


def check_level(level: float) -> None:
    """Raise RankhouseError unless the confidence level lies strictly between 0 and 1."""
    if not 0.0 < level < 1.0:
        raise RankhouseError(
            Message(Option("level"), f" must lie strictly between 0 and 1, got {level}")
        )


def check_margin(margin: float | None) -> None:
    """Raise RankhouseError unless ``margin`` is None or a finite number at least 0."""
    if margin is not None and not 0.0 <= margin < float("inf"):
        raise RankhouseError(
            Message(
                Option("margin"),
                f" must be a finite number at least 0 (an absolute difference), got {margin}",
            )
        )


def check_direction(direction: int) -> None:
    """Raise RankhouseError unless ``direction`` is +1 (higher is better) or -1 (lower is)."""
    if direction not in (1, -1):
        raise RankhouseError(
            Message(
                Option("direction"),
                f" must be 1 (higher is better) or -1 (lower is better), got {direction!r}; a "
                "measure that ranks nothing (a count) has no better or worse",
            )
        )


def finite_values(values: Sequence[float], what: str = "values") -> np.ndarray:
    """``values`` as a one-dimensional float array, checked to hold no NaN or infinity.

    Raises:
        RankhouseError: not one-dimensional, or a value that is not a finite number.
    """
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise RankhouseError(f"{what} must be one list of numbers, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise RankhouseError(
            f"{what} must be finite numbers; drop the queries whose value is NaN first"
        )
    return array


def paired_differences(run: Sequence[float], baseline: Sequence[float]) -> np.ndarray:
    """``run - baseline``, both checked to be equally long lists of finite numbers.

    Raises:
        RankhouseError: unequal lengths or a value that is not a finite number.
    """
    x = finite_values(run, "the run's values")
    y = finite_values(baseline, "the baseline's values")
    if x.shape != y.shape:
        raise RankhouseError(
            f"paired values need two equally long lists, got {len(x)} and {len(y)} values"
        )
    return x - y


def score_matrix(scores: Sequence[Sequence[float]], systems: Sequence[str]) -> np.ndarray:
    """``scores`` as a systems x queries float array, checked against ``systems``.

    Each row is one system's values of one measure, each column one query, the same queries
    in the same order for every system (the caller keeps only the queries every system has a
    value for).

    Raises:
        RankhouseError: fewer than two systems or two queries, a row count other than
            ``len(systems)``, repeated system names, or a value that is not a finite number.
    """
    matrix = np.asarray(scores, dtype=float)
    if matrix.ndim != 2:
        raise RankhouseError(
            f"scores must be a table of systems x queries, got shape {matrix.shape}"
        )
    if matrix.shape[0] != len(systems):
        raise RankhouseError(
            f"scores has {matrix.shape[0]} rows for {len(systems)} systems; give one row per system"
        )
    if len(set(systems)) != len(systems):
        raise RankhouseError(f"the systems must have distinct names, got {list(systems)}")
    if matrix.shape[0] < 2 or matrix.shape[1] < 2:
        raise RankhouseError(
            f"comparing systems needs at least two systems and two queries, got "
            f"{matrix.shape[0]} and {matrix.shape[1]}"
        )
    if not np.isfinite(matrix).all():
        raise RankhouseError(
            "scores must be finite numbers; keep only the queries every system has a value for"
        )
    return matrix
