"""trec_eval's measure requests as rankhouse measures (canonical names, computed in SQL).

Each printed line of a request (``P_5``, ``ndcg_1=3,2=9``, ``utility``) maps to one
:class:`~rankhouse.measures.Measure`, through the registry's declaration of the trec_eval
name (:class:`~rankhouse.measures.TrecName`): the parameter a cutoff sets, the parameters a
list sets, what name=value pairs set. ``runid``, ``num_q`` and ``relstring`` are not numbers
per query and are produced by the runner itself.
"""

from __future__ import annotations

import math
from typing import Any

from ..measures import REGISTRY, Measure, make_measure
from ..measures.gain_table import format_gains
from .options import Options, Request, TrecEvalExit, parse_params
from .table import BY_NAME, OWN_LINES, Kind, TrecMeasure

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
    params: dict[str, Any] = dict(trec.fixed)
    if trec.key is not None:
        return [
            (line, make_measure(definition, **params, **{trec.key: value}))
            for line, value in zip(names, request.values, strict=True)
        ]
    if entry.kind is Kind.REAL_LIST:
        values = _list_params(entry, request.values)
        if values is None:
            return []
        params |= values
    if entry.kind is Kind.PAIRS:
        gains, persistence = request.values
        text = format_gains(gains)
        if text is not None and trec.gain_table is not None:
            definition = REGISTRY.measures[trec.gain_table]
        if definition.param("gains") is not None:
            params["gains"] = text
        if definition.param("p") is not None:
            params["p"] = persistence
    if definition.param("docs") is not None:  # the collection size is trec_eval's -N
        params["docs"] = options.num_docs_in_coll
    return [(names[0], make_measure(definition, **params))]


def _list_params(entry: TrecMeasure, values: tuple) -> dict[str, Any] | None:
    """The parameters a "real list" sets: one ``;``-separated ``str`` parameter takes the
    whole list; numbers take one value each (a single one takes the first, as trec_eval's
    set_F; several need as many values). ``None`` for a list of the wrong length."""
    names = entry.trec.values
    first = entry.definition.param(names[0])
    if len(names) == 1 and first.type is str:
        return {first.name: ";".join(repr(float(v)) for v in values)}
    if len(names) > 1 and len(values) != len(names):
        return None
    return {name: float(value) for name, value in zip(names, values, strict=False)}


def relstring_length(request: Request) -> int:
    """The number of documents ``relstring`` shows (C truncation of its parameter; at most
    2**31-1, more than any ranking holds, as SQL binds an INTEGER)."""
    value = request.values[0]
    return min(math.trunc(value), 2**31 - 1) if math.isfinite(value) else 0


def parse_trec_measure(text: str) -> list[Measure] | None:
    """Measures for trec_eval's list and pair forms the name parser does not know.

    ``set_F.0.5`` / ``set_F_0.5``, ``utility.2,-1,0,0``, ``11pt_avg.0.25,0.5``,
    ``rbp.p=0.8`` / ``rbp_p=0.8``, ``ndcg.1=3,2=9``, ``G_2=5``...: the parameter kinds
    "real list" and "name=value pairs" of spec 1.1. ``None`` when ``text`` is not one.
    """
    for name, measure in BY_NAME.items():
        if measure.kind not in (Kind.REAL_LIST, Kind.PAIRS) or measure.definition is None:
            continue
        for sep in (".", "_"):
            if text.startswith(name + sep) and len(text) > len(name) + 1:
                params = text[len(name) + 1 :]
                try:
                    values = parse_params(measure, params)
                except TrecEvalExit:
                    return None
                lines = line_measures(Request(measure, params, True, values), Options("", ""))
                return [m for _, m in lines] or None
    return None
