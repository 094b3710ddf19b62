"""A delimited file's first line: its header, data where the header is missing, or MS MARCO's
headerless ``qid pid rank`` run; and the hint for a number written with a decimal comma.

A CSV or TSV file names its columns on its first line. A first line of data (every field a
number or an id, one at least a number, none a column name rankhouse knows) is a missing
header, and the error says so. One shape of data is a format of its own: MS MARCO's runs are
three tab-separated integers, query, passage and rank, without a header; such a file (or any
file under ``--format msmarco``) is read as ``qid, docid, rank``, ranked by the given rank.
"""

from __future__ import annotations

import re

from ..errors import InputError, Message, Option
from .sources import FIELD_ALIASES

#: The columns of MS MARCO's run format, in its order: query, passage, rank.
MSMARCO_COLUMNS = ["qid", "docid", "rank"]

_INTEGER = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"\s*[+-]?([0-9]+([.,][0-9]*)?|[.,][0-9]+)([eE][+-]?[0-9]+)?\s*")
_ID = re.compile(r"[\w.:/@#+-]+")
_DECIMAL_COMMA = re.compile(r"\s*([+-]?[0-9]+),([0-9]+)\s*")
_KNOWN = {alias for aliases in FIELD_ALIASES.values() for alias in aliases}
_SHOWN = {"\t": "<tab>"}


def is_msmarco(fields: list[str], delimiter: str | None) -> bool:
    """Whether a first line is MS MARCO's run format: three integers separated by tabs."""
    return delimiter == "\t" and len(fields) == 3 and all(_INTEGER.fullmatch(f) for f in fields)


def msmarco_needs_rank(label: str, fields: list[str], order: str, given: bool) -> None:
    """Refuse MS MARCO's run format ranked by score: it has no scores.

    Raises:
        InputError: ``order`` is not ``'rank'``.
    """
    if order == "rank":
        return
    line = "\t".join(fields)
    what = (
        "MS MARCO's run format"
        if given
        else f"the file looks like MS MARCO's run format without a header ({line!r})"
    )
    raise InputError(
        f"{what}: query id, passage id and rank, no score",
        source=label,
        line=None if given else 1,
        hint=Message("pass ", Option("order", "rank"), " to rank each query by the given rank"),
    )


def looks_like_data(fields: list[str]) -> bool:
    """Whether a header line looks like a line of data: every field a number or an id, at
    least one a number, and none a column name rankhouse knows."""
    if any(f.strip().lower() in _KNOWN for f in fields):
        return False
    numbers = [f for f in fields if _NUMBER.fullmatch(f)]
    return bool(numbers) and all(_NUMBER.fullmatch(f) or _ID.fullmatch(f) for f in fields)


def missing_header(exc: InputError, fields: list[str], delimiter: str, kind: str) -> InputError:
    """``exc`` (no column for a field) with the hint that the header is missing."""
    shown = delimiter.join(fields)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    names = ["qid", "docid", "rel"] if kind == "qrels" else ["qid", "docid", "score"]
    example = _SHOWN.get(delimiter, delimiter).join(names)
    return InputError(
        f"no header: line 1 holds data ({shown!r}), not column names",
        source=exc.source,
        hint=Message(
            "add a first line naming the columns, e.g. ",
            example,
            " (the names docs/ingest.md lists), or other names mapped with ",
            Option("columns"),
        ),
    )


def decimal_comma_hint(text: object) -> str | None:
    """The hint for a number written with a decimal comma (``1,5``), else None."""
    found = _DECIMAL_COMMA.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        return None
    return (
        "a decimal comma? rankhouse reads numbers with a decimal point: "
        f"{found.group(1)}.{found.group(2)}"
    )
