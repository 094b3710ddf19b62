"""Rankings as the drift measures take them: lists of document ids, best first, each id once.

The caller orders each ranking as the run ranks it: by score descending, then by document id
descending, as trec_eval breaks ties (rankhouse's shared ranking, ``sql/ranking.sql``). Tied
scores are thereby broken before any drift measure sees them; no measure here treats ties
itself.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from ..errors import Message, Option, RankhouseError


def ranking(
    documents: Sequence[Hashable], depth: int | None = None, what: str = "a ranking"
) -> list[Hashable]:
    """The top ``depth`` of ``documents`` (all without a depth) as a list, checked to hold
    each document once (only the part compared is checked).

    Raises:
        RankhouseError: a document that appears twice.
    """
    listed = list(documents[:depth])
    if len(set(listed)) != len(listed):
        seen: set[Hashable] = set()
        twice = next(d for d in listed if d in seen or seen.add(d))
        raise RankhouseError(
            f"{what} lists the document {twice!r} twice; a ranking holds each document once"
        )
    return listed


def check_depth(depth: int | None, name: str = "k") -> None:
    """Raise RankhouseError unless ``depth`` is None or a positive whole number."""
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise RankhouseError(
            Message(Option(name), f" must be a whole number from 1, got {depth!r}")
        )


def check_persistence(p: float) -> None:
    """Raise RankhouseError unless ``0 < p < 1``."""
    if not 0.0 < p < 1.0:
        raise RankhouseError(
            Message(Option("p"), f" (the persistence) must lie strictly between 0 and 1, got {p}")
        )
