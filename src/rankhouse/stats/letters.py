"""Compact letter display: a letter per group of systems that cannot be told apart, so that
two systems share a letter exactly when their difference is not significant.

The insert-and-absorb algorithm with the sweeping step (Piepho, "An algorithm for a
letter-based representation of all-pairwise comparisons", J. Comput. Graph. Stat. 13(2),
2004; the algorithm of R's multcompView):

1. Start with one column (letter) holding every system.
2. Insert: for each significant pair (i, j), every column holding both is replaced by two
   copies, one without i and one without j. Absorb: a column whose systems are all in
   another column is dropped.
3. Sweep: for each column in turn and each of its systems, the system leaves the column
   when it has another column and every other system of the column shares another column
   with it (the letter is redundant there); then empty and absorbed columns are dropped.
4. Letters: the columns are ordered by their best system (then their next best, ...), the
   systems ordered by mean, best first (the measure's direction decides; ties keep the
   given order), and named a, b, c, ..., z, A, ..., Z, then aa, ab, ...

Each system's letters are read in that order (``'ab'``). Two systems share a letter if and
only if the pair is not among the significant ones.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence

from ..errors import RankhouseError
from .checks import check_direction


def compact_letter_display(
    systems: Sequence[str],
    means: Sequence[float],
    separable: Iterable[tuple[str, str]],
    *,
    direction: int = 1,
) -> dict[str, str]:
    """The letters of each system, best system first (see the module).

    Args:
        systems: the systems' names.
        means: each system's mean, in the order of ``systems``.
        separable: the pairs whose difference is significant
            (:meth:`rankhouse.stats.pairwise.PairwiseResult.separable`).
        direction: +1 when higher is better, -1 when lower is.

    Returns:
        system -> its letters, in order of mean, best first.

    Raises:
        RankhouseError: a pair naming an unknown system, repeated names, means of another
            length, or a direction other than +1 or -1.
    """
    check_direction(direction)
    if len(means) != len(systems) or len(set(systems)) != len(systems):
        raise RankhouseError(
            f"compact letters need distinct systems and one mean each, got {len(systems)} "
            f"systems ({len(set(systems))} distinct) and {len(means)} means"
        )
    order = sorted(range(len(systems)), key=lambda i: -direction * means[i])
    ranked = [systems[i] for i in order]
    position = {name: k for k, name in enumerate(ranked)}
    pairs = set()
    for first, second in separable:
        if first not in position or second not in position:
            raise RankhouseError(f"the pair ({first!r}, {second!r}) names an unknown system")
        pairs.add(frozenset((position[first], position[second])))
    columns = [frozenset(range(len(ranked)))]
    for pair in sorted(tuple(sorted(p)) for p in pairs if len(p) == 2):
        columns = _insert(columns, *pair)
    columns = _sweep(_absorb(columns))
    columns.sort(key=sorted)
    letters = {name: "" for name in ranked}
    for k, column in enumerate(columns):
        for member in sorted(column):
            letters[ranked[member]] += _letter(k)
    return letters


def _insert(columns: list[frozenset[int]], i: int, j: int) -> list[frozenset[int]]:
    split = []
    for column in columns:
        if i in column and j in column:
            split += [column - {i}, column - {j}]
        else:
            split.append(column)
    return _absorb(split)


def _absorb(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    """The columns that are no subset of another (of equal columns, the first)."""
    kept: list[frozenset[int]] = []
    for k, column in enumerate(columns):
        if not column:
            continue
        inside = any(
            column < other or (column == other and m < k) for m, other in enumerate(columns)
        )
        if not inside:
            kept.append(column)
    return kept


def _sweep(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    columns = sorted(columns, key=sorted)
    for k in range(len(columns)):
        for member in sorted(columns[k]):
            others = [c for m, c in enumerate(columns) if m != k and member in c]
            if others and all(
                any(partner in c for c in others) for partner in columns[k] if partner != member
            ):
                columns[k] = columns[k] - {member}
    return _absorb(columns)


def _letter(k: int) -> str:
    """a..z, A..Z, then aa, ab, ... for the k-th column."""
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    name = alphabet[k % len(alphabet)]
    k //= len(alphabet)
    while k:
        k -= 1
        name = string.ascii_lowercase[k % 26] + name
        k //= 26
    return name
