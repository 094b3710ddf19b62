"""trec_eval's measure requests as rankhouse measures (canonical names, computed in SQL).

Each printed line of a request (``P_5``, ``ndcg_1=3,2=9``, ``utility``) maps to one
:class:`~rankhouse.measures.Measure`; ``runid``, ``num_q`` and ``relstring`` are not
numbers per query and are produced by the runner itself.
"""

from __future__ import annotations

import math

from ..measures import REGISTRY, Measure, make_measure
from ..measures.gain_table import format_gains
from .options import BY_NAME, Kind, Options, Request, TrecEvalExit, parse_params

# trec_eval name -> registry name, for requests with no or only cutoff parameters
_PLAIN = {
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "map": "AP",
    "gm_map": "GMAP",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "gm_bpref": "GMBpref",
    "recip_rank": "RR",
    "infAP": "infAP",
    "binG": "binG",
    "set_P": "SetP",
    "set_relative_P": "SetRelP",
    "set_recall": "SetR",
    "set_map": "SetAP",
    "num_nonrel_judged_ret": "NumNonRelJudgedRet",
}
_CUTOFFS = {
    "P": ("P", "cutoff"),
    "recall": ("R", "cutoff"),
    "ndcg_cut": ("nDCG", "cutoff"),
    "map_cut": ("AP", "cutoff"),
    "relative_P": ("RelP", "cutoff"),
    "success": ("Success", "cutoff"),
    "unj": ("Unj", "cutoff"),
    "iprec_at_recall": ("IPrec", "recall"),
    "Rprec_mult": ("RprecMult", "multiple"),
}
_GAIN_MEASURES = {"G": "G", "ndcg_rel": "nDCG_rel", "Rndcg": "Rndcg"}
#: Requests that are not per-query numbers: handled by the runner.
SPECIAL = ("runid", "num_q", "relstring")


def line_measures(request: Request, options: Options) -> list[tuple[str, Measure]]:
    """The printed line names of ``request`` and the measure computing each line."""
    names = request.line_names()
    name = request.name
    if name in SPECIAL:
        return []
    if name in _PLAIN:
        return [(names[0], _make(_PLAIN[name]))]
    if name in _CUTOFFS:
        registry_name, param = _CUTOFFS[name]
        return [
            (line, _make(registry_name, **{param: value}))
            for line, value in zip(names, request.values, strict=True)
        ]
    if name == "utility":
        p1, p2, p3, p4 = request.values
        measure = _make(
            "Utility",
            rel_ret=p1,
            nonrel_ret=p2,
            rel_nonret=p3,
            nonrel_nonret=p4,
            docs=options.num_docs_in_coll,
        )
        return [(names[0], measure)]
    if name == "11pt_avg":
        points = ";".join(repr(float(p)) for p in request.values)
        return [(names[0], _make("IPrecAvg", points=points))]
    if name == "set_F":
        return [(names[0], _make("SetF", beta=float(request.values[0])))]
    gains, persistence = request.values if request.measure.kind is Kind.PAIRS else ((), 0.9)
    text = format_gains(gains)
    if name == "ndcg":
        measure = _make("nDCG") if text is None else _make("nDCG_gains", gains=text)
        return [(names[0], measure)]
    if name in _GAIN_MEASURES:
        return [(names[0], _make(_GAIN_MEASURES[name], gains=text))]
    if name == "rbp":
        return [(names[0], _make("RBP", p=persistence, gains=text))]
    if name == "rbp_resid":
        return [(names[0], _make("RBP_resid", p=persistence))]
    raise KeyError(f"no rankhouse measure for trec_eval's {name!r}")


def relstring_length(request: Request) -> int:
    """The number of documents ``relstring`` shows (C truncation of its parameter; at most
    2**31-1, more than any ranking holds, as SQL binds an INTEGER)."""
    value = request.values[0]
    return min(math.trunc(value), 2**31 - 1) if math.isfinite(value) else 0


def _make(name: str, **params) -> Measure:
    definition = REGISTRY.lookup(name)
    if definition is None:
        raise KeyError(name)
    return make_measure(definition, **params)


def parse_trec_measure(text: str) -> list[Measure] | None:
    """Measures for trec_eval's list and pair forms the name parser does not know.

    ``set_F.0.5`` / ``set_F_0.5``, ``utility.2,-1,0,0``, ``11pt_avg.0.25,0.5``,
    ``rbp.p=0.8`` / ``rbp_p=0.8``, ``ndcg.1=3,2=9``, ``G_2=5``...: the parameter kinds
    "real list" and "name=value pairs" of spec 1.1. ``None`` when ``text`` is not one.
    """
    for name, measure in BY_NAME.items():
        if measure.kind not in (Kind.REAL_LIST, Kind.PAIRS) or name == "relstring":
            continue
        for sep in (".", "_"):
            if text.startswith(name + sep) and len(text) > len(name) + 1:
                params = text[len(name) + 1 :]
                try:
                    values = parse_params(measure, params)
                except TrecEvalExit:
                    return None
                request = Request(measure, params, True, values)
                if name == "utility" and len(values) != 4:
                    return None
                return [m for _, m in line_measures(request, Options("", ""))]
    return None
