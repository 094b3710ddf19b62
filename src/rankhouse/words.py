"""Counts in words, the noun agreeing with the number: ``1 query``, ``2 queries``, ``1,500 rows``.

Every message that counts something says it through :func:`count` (or :func:`noun` where
the number is written apart), so that no message reads "1 queries".
"""

from __future__ import annotations

_SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh")


def noun(number: int, singular: str, plural: str | None = None) -> str:
    """``singular`` for 1 (and -1), else ``plural`` (default: the English plural of the last
    word: ``query`` -> ``queries``, ``tied-score pair`` -> ``tied-score pairs``)."""
    if abs(number) == 1:
        return singular
    return plural if plural is not None else _plural(singular)


def count(number: int, singular: str, plural: str | None = None) -> str:
    """``number`` (thousands separated by commas) and the noun agreeing with it:
    ``count(1, "query") == "1 query"``, ``count(1500, "row") == "1,500 rows"``."""
    return f"{number:,} {noun(number, singular, plural)}"


def _plural(singular: str) -> str:
    head, space, last = singular.rpartition(" ")
    if last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        last = last[:-1] + "ies"
    elif last.endswith(_SIBILANT_ENDINGS):
        last += "es"
    else:
        last += "s"
    return head + space + last
