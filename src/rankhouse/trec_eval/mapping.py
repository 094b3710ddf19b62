"""trec_eval's measure requests as rankhouse measures (canonical names, computed in SQL).

Each printed line of a request (``P_5``, ``ndcg_1=3,2=9``, ``utility``) maps to one
:class:`~rankhouse.measures.Measure`, through the registry's declaration of the trec_eval
name (:class:`~rankhouse.measures.TrecName`): the parameter a cutoff sets, the parameters a
list sets, what name=value pairs set. ``runid``, ``num_q`` and ``relstring`` are not numbers
per query and are produced by the runner itself.
"""

from __future__ import annotations

import math

from ..measures import Measure, make_measure
from ..measures.trec import OWN_LINES, Kind, list_measure, pairs_measure
from .options import Options, Request

#: Requests that are not per-query numbers: handled by the runner.
SPECIAL = tuple(OWN_LINES)


def line_measures(request: Request, options: Options) -> list[tuple[str, Measure]]:
    """The printed line names of ``request`` and the measure computing each line.

    A list of the wrong length for a measure that needs each of its values (``utility.1,2``)
    gives no line: trec_eval cannot calculate it (the runner reports that).
    """
    entry = request.measure
    definition, trec = entry.definition, entry.trec
    if definition is None or trec is None:
        return []
    names = request.line_names()
    if trec.key is not None:
        return [
            (line, make_measure(definition, **dict(trec.fixed), **{trec.key: value}))
            for line, value in zip(names, request.values, strict=True)
        ]
    # the collection size is trec_eval's -N
    extra = {"docs": options.num_docs_in_coll} if definition.param("docs") is not None else {}
    if entry.kind is Kind.REAL_LIST:
        measure = list_measure(definition, trec, request.values, **extra)
        return [] if measure is None else [(names[0], measure)]
    if entry.kind is Kind.PAIRS:
        return [(names[0], pairs_measure(definition, trec, request.values, **extra))]
    return [(names[0], make_measure(definition, **dict(trec.fixed), **extra))]


def relstring_length(request: Request) -> int:
    """The number of documents ``relstring`` shows (C truncation of its parameter; at most
    2**31-1, more than any ranking holds, as SQL binds an INTEGER; none past a long's
    range, where the conversion gives trec_eval a negative length)."""
    value = request.values[0]
    if not (math.isfinite(value) and -(2.0**63) <= value < 2.0**63):
        return 0  # C's (long) of it is LONG_MIN on x86-64: a negative length, no document
    return max(0, min(math.trunc(value), 2**31 - 1))
