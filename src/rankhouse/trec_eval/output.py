"""trec_eval's output lines (TREC_EVAL_SEMANTICS section 7)."""

from __future__ import annotations

import math


def format_value(value: float | int | str, *, integer: bool = False, quoted: bool = False) -> str:
    """One value as trec_eval prints it: ``%ld`` for counts, ``%6.4f`` (NaN as ``  -nan``)."""
    if quoted:
        return f"'{value}'"
    if isinstance(value, str):
        return value
    if integer:
        return "%ld" % int(value)  # noqa: UP031 - C's format is the specification
    if math.isnan(value):
        return "  -nan"
    return "%6.4f" % value  # noqa: UP031


def format_line(name: str, qid: str, value: str) -> str:
    """``printf("%-22s\\t%s\\t%s\\n", name, qid, value)``."""
    return f"{name:<22}\t{qid}\t{value}\n"
