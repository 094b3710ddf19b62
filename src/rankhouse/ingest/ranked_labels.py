"""A ranked file with labels: a ranking and its judgments in one file, as course material and
some shared tasks hand them out.

Each line is ``qid Q0 docid rel`` (the shape of a TREC qrels line), and the order of a query's
lines is the ranking: its first line is rank 1. One file gives both inputs of an evaluation:

* the qrels: ``(qid, docid, rel)`` of every line;
* the run: each query's documents at their line position, scored so that trec_eval's order
  (score descending) is the line order (the first of a query's ``n`` lines scores ``n``, the
  last 1: no ties), tagged with the file's base name.

A document listed twice for a query is refused (it would be both ranked twice and judged
twice), as are a line without 4 fields and a label that is not an integer, each naming the
file, the line and the field.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InputError
from ..lazy import pandas as pd
from .checks import duplicate_error, integer_problem
from .sources import base_name, open_source
from .trec.exact import numbered_fields
from .trec.locate import empty_error

if TYPE_CHECKING:
    import pandas

FIELDS = 4
"""Fields of a line: ``qid Q0 docid rel``."""


@dataclass(frozen=True)
class RankedLabels:
    """What a ranked file with labels holds.

    Attributes:
        name: the file's base name: the run's tag and the qrels set's name.
        qrels: ``query_id, doc_id, relevance``, one row per line.
        run: ``query_id, doc_id, rank, score, tag``, one row per line (rank: the line's
            position among its query's lines).
    """

    name: str
    qrels: pandas.DataFrame
    run: pandas.DataFrame


def read_ranked_labels(path: str | os.PathLike[str]) -> RankedLabels:
    """Read a ranked file with labels (plain or compressed).

    Raises:
        InputError: a missing file or a folder; no data line; a line without 4 fields, a
            label that is not an integer or a document twice for a query (naming the file,
            the line and the field).
    """
    src = open_source(path, "trec")
    assert src.path is not None  # a path, not a frame
    name = base_name(src.path)
    rows: list[tuple[str, str, int]] = []
    seen: dict[tuple[str, str], int] = {}
    for number, fields in numbered_fields(src):
        if len(fields) != FIELDS:
            raise InputError(
                f"expected {FIELDS} fields, found {len(fields)}",
                source=src.label,
                line=number,
                hint=_fields_hint(len(fields)),
            )
        query, _, doc, label = fields
        problem = integer_problem(label)
        if problem:
            raise InputError(
                f"label {problem}",
                source=src.label,
                line=number,
                field="rel",
                hint="the 4th field must be an integer grade such as 0, 1, 2 or -1",
            )
        first = seen.setdefault((query, doc), number)
        if first != number:
            raise duplicate_error(src.label, "run", (query, doc), [first, number], unit="line")
        rows.append((query, doc, int(label)))
    if not rows:
        raise empty_error(src)
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    rank = frame.groupby("query_id", sort=False).cumcount() + 1
    lines = frame.groupby("query_id", sort=False)["doc_id"].transform("size")
    run = pd.DataFrame(
        {
            "query_id": frame["query_id"],
            "doc_id": frame["doc_id"],
            "rank": rank,
            "score": (lines - rank + 1).astype(float),
            "tag": name,
        }
    )
    return RankedLabels(name, frame, run)


def _fields_hint(found: int) -> str:
    hint = "a ranked line with its label is 'qid Q0 docid rel', in rank order"
    if found >= 6:
        hint += "; this looks like a run line: evaluate the run against its qrels instead"
    return hint
