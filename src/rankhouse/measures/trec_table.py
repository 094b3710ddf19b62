"""trec_eval 10's measure table: the measures ``-m`` names and the output prints, in its order.

The table is a view of the registry: each trec_eval name is declared by a measure
(:class:`~rankhouse.measures.TrecName`), which says how ``-m name.params`` sets its
parameters; from it come the parameter kind and default text (spec 1.1) and the summary
line (spec 6). Written out here are only what is trec_eval's own: the output order (spec 7),
the three lines it prints itself (``runid``, ``num_q``, ``relstring``) and its nicknames.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .model import MeasureDef, TrecName
from .registry import REGISTRY


class Kind(Enum):
    """How a measure's ``-m name.params`` text is parsed (spec 1.1)."""

    PLAIN = "plain"
    INT_CUTOFFS = "int_cutoffs"
    REAL_CUTOFFS = "real_cutoffs"
    REAL_LIST = "real_list"
    PAIRS = "pairs"


class Summary(Enum):
    """How the ``all`` line of a measure is formed (spec 6)."""

    MEAN = "mean"
    SUM = "sum"
    COUNT = "count"
    GMEAN = "gmean"
    NONE = "none"  # per topic only (relstring)
    RUNID = "runid"  # summary only, the run tag


@dataclass(frozen=True)
class TrecMeasure:
    """One entry of trec_eval's measure table: a view of the registry's declaration.

    Built by :func:`table_entry` from the registry entry that declares the trec_eval name;
    only the three lines trec_eval prints itself (``runid``, ``num_q``, ``relstring``) are
    written out here.

    Attributes:
        name: trec_eval's name.
        kind: how its ``-m name.params`` text is parsed.
        summary: how its ``all`` line is formed.
        default: the parameter text when ``-m`` gives none, or ``None``.
        integer: printed with ``%ld`` (the counts, which trec_eval sums).
        per_topic: printed in ``-q`` blocks (not the geometric means).
        definition: the registry entry computing it (``None`` for the lines above).
        trec: the registry's declaration of the name (``None`` likewise).
    """

    name: str
    kind: Kind = Kind.PLAIN
    summary: Summary = Summary.MEAN
    default: str | None = None
    integer: bool = False
    per_topic: bool = True
    definition: MeasureDef | None = field(default=None, repr=False)
    trec: TrecName | None = None

    @property
    def needs_ranking(self) -> bool:
        """Whether trec_eval builds the topic's ranking for it (all but runid and num_q)."""
        return self.name not in ("runid", "num_q")


#: trec_eval 10's measure table in its order, which is the output order (spec 7; it never
#: depends on the order of -m options). What each name computes is the registry's.
TABLE_ORDER = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "rbp",
    "rbp_resid",
    "unj",
)
#: The lines trec_eval prints itself, not a measure's values per query: the run tag, the
#: number of topics, and relstring's text.
OWN_LINES = {
    "runid": TrecMeasure("runid", summary=Summary.RUNID, per_topic=False),
    "num_q": TrecMeasure("num_q", summary=Summary.COUNT, integer=True, per_topic=False),
    "relstring": TrecMeasure("relstring", Kind.REAL_LIST, Summary.NONE, default="10"),
}
_SUMMARIES = {"mean": Summary.MEAN, "sum": Summary.SUM, "gmean": Summary.GMEAN}


def table_entry(name: str) -> TrecMeasure:
    """The table entry of the trec_eval name ``name``, from its registry declaration.

    Raises:
        KeyError: no registry entry declares ``name``.
    """
    if name in OWN_LINES:
        return OWN_LINES[name]
    found = REGISTRY.lookup_trec(name)
    if found is None:
        raise KeyError(f"no registry entry declares trec_eval's {name!r}")
    definition, trec = found
    default = None
    if trec.pairs:
        kind = Kind.PAIRS
    elif trec.values:
        kind = Kind.REAL_LIST
        default = ",".join(
            part
            for value in trec.values
            for part in str(definition.param(value).default).split(";")
        )
    elif trec.key is not None:
        integer = definition.param(trec.key).type is int
        kind = Kind.INT_CUTOFFS if integer else Kind.REAL_CUTOFFS
        default = ",".join(str(value) for value in trec.defaults)
    else:
        kind = Kind.PLAIN
    return TrecMeasure(
        name,
        kind,
        _SUMMARIES[definition.aggregate],
        default,
        # trec_eval sums its counts alone, and prints them as integers
        integer=definition.aggregate == "sum",
        # a geometric mean has no per-topic line of its own (gm_map's would be map's)
        per_topic=definition.aggregate != "gmean",
        definition=definition,
        trec=trec,
    )


MEASURES: tuple[TrecMeasure, ...] = tuple(table_entry(name) for name in TABLE_ORDER)
BY_NAME: dict[str, TrecMeasure] = {m.name: m for m in MEASURES}

OFFICIAL = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": OFFICIAL,
    "all_trec": tuple(m.name for m in MEASURES),
    "set": (
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ),
}
