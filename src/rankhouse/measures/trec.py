"""trec_eval's own: its parameter texts of the "real list" and "name=value pairs" kinds (spec
1.1), as measures (``set_F.0.5``, ``utility.2,-1,0,0``, ``11pt_avg.0.25,0.5``, ``rbp.p=0.8``,
``ndcg.1=3,2=9``, ``G_2=5``), and trec_eval 10's measure table: the measures ``-m`` names and
the output prints, in its order, and its nicknames.

What a name's text sets is the registry's declaration of the name
(:class:`~rankhouse.measures.TrecName`: ``values`` for a list, ``pairs`` and ``gain_table``
for pairs). ``rankhouse trec-eval -m`` and the measure name parser read them alike.

The table is a view of the registry too: each trec_eval name is declared by a measure, which
says how ``-m name.params`` sets its parameters; from it come the parameter kind and default
text (spec 1.1) and the summary line (spec 6). Written out here are only what is trec_eval's
own: the output order (spec 7), the three lines it prints itself (``runid``, ``num_q``,
``relstring``) and its nicknames.

Numbers in those texts, and in trec_eval's qrels and run files (:mod:`rankhouse.trec_eval.files`),
are read as C's ``atol`` and ``atof`` read them (:func:`atol`, :func:`atof`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .catalog import TREC_POINTS  # noqa: F401 (importing the catalogue declares the measures)
from .gains import format_gains
from .model import REGISTRY, Measure, MeasureDef, TrecName, make_measure

#: The persistence of a pair text that sets no ``p`` (trec_eval's default).
DEFAULT_PERSISTENCE = 0.9
_INTEGER_KEY = re.compile(r"[+-]?[0-9]+\Z")

Pairs = tuple[tuple[tuple[int, float], ...], float]

# --- numbers as C reads them ---------------------------------------------------------------

_ATOL = re.compile(r"[ \t\n\r\f\v]*([+-]?[0-9]+)")
_ATOF_DEC = re.compile(r"[ \t\n\r\f\v]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_ATOF_HEX = re.compile(
    r"[ \t\n\r\f\v]*([+-]?)0[xX]"
    r"((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
)
_ATOF_SPECIAL = re.compile(r"[ \t\n\r\f\v]*([+-]?)(inf(?:inity)?|nan)", re.IGNORECASE)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def atol(text: str) -> int:
    """C ``atol`` (glibc ``strtol``): leading digits with an optional sign, else 0.

    ``"1.7"`` gives 1, ``"2e1"`` 2, ``"abc"`` 0; out-of-range values saturate.
    """
    match = _ATOL.match(text)
    if not match:
        return 0
    return max(_LONG_MIN, min(_LONG_MAX, int(match.group(1))))


def atof(text: str) -> float:
    """C ``atof`` (glibc ``strtod``): the longest numeric prefix, else 0.0.

    Accepts decimal and hexadecimal forms, ``inf``/``infinity``/``nan`` in any case;
    ``"1.5abc"`` gives 1.5, ``"0x10"`` 16.0, ``"1e400"`` inf, ``"abc"`` 0.0.
    """
    match = _ATOF_HEX.match(text)
    if match:
        value = float.fromhex("0x" + match.group(2))
        return -value if match.group(1) == "-" else value
    match = _ATOF_SPECIAL.match(text)
    if match:
        value = math.inf if match.group(2).lower().startswith("inf") else math.nan
        return -value if match.group(1) == "-" else value
    match = _ATOF_DEC.match(text)
    if not match:
        return 0.0
    return float(match.group(1))


class TrecParamError(ValueError):
    """A parameter text trec_eval refuses while it initializes the measure ``name`` (the
    caller says it in its own words: trec-eval's exit, or no measure)."""

    def __init__(self, name: str, detail: str) -> None:
        self.name = name
        self.detail = detail
        super().__init__(f"{name}: {detail}")


def parse_real_list(text: str) -> tuple[float, ...]:
    """A "real list": comma-separated numbers read by ``atof``."""
    return tuple(atof(part) for part in text.split(","))


def parse_pairs(name: str, text: str | None) -> Pairs:
    """``k=v`` pairs: integer keys are (level, gain) pairs in given order, ``p`` the persistence.

    Returns ``(gains, p)`` with p defaulting to 0.9. Other keys are ignored, as by trec_eval.

    Raises:
        TrecParamError: an item without ``=``.
    """
    gains: list[tuple[int, float]] = []
    persistence = DEFAULT_PERSISTENCE
    for item in (text or "").split(",") if text else []:
        key, sep, value = item.partition("=")
        if not sep:
            raise TrecParamError(name, f"parameter '{item}' is not of the form name=value")
        if _INTEGER_KEY.match(key):
            gains.append((atol(key), atof(value)))
        elif key == "p":
            persistence = atof(value)
    return tuple(gains), persistence


def list_measure(
    definition: MeasureDef, trec: TrecName, values: tuple, **extra: Any
) -> Measure | None:
    """The measure a "real list" sets: one ``;``-separated ``str`` parameter takes the whole
    list; numbers take one value each (a single one takes the first, as trec_eval's set_F;
    several need as many values). ``None`` for a list of the wrong length. ``extra``: other
    parameters to set."""
    params: dict[str, Any] = dict(trec.fixed) | extra
    names = trec.values
    first = definition.param(names[0])
    if len(names) == 1 and first.type is str:
        params[first.name] = ";".join(repr(float(v)) for v in values)
    elif len(names) > 1 and len(values) != len(names):
        return None
    else:
        params |= {name: float(value) for name, value in zip(names, values, strict=False)}
    return make_measure(definition, **params)


def pairs_measure(definition: MeasureDef, trec: TrecName, pairs: Pairs, **extra: Any) -> Measure:
    """The measure name=value pairs set: ``level=gain`` pairs its gain table (and the name's
    ``gain_table`` measure, when it has one), ``p`` its persistence. ``extra``: other
    parameters to set."""
    gains, persistence = pairs
    params: dict[str, Any] = dict(trec.fixed) | extra
    text = format_gains(gains)
    if text is not None and trec.gain_table is not None:
        definition = REGISTRY.measures[trec.gain_table]
    if definition.param("gains") is not None:
        params["gains"] = text
    if definition.param("p") is not None:
        params["p"] = persistence
    return make_measure(definition, **params)


def parse_trec_measure(text: str) -> list[Measure] | None:
    """The measure of a list or pair text (``name.params`` or ``name_params``), or ``None``
    when ``text`` is not one of those forms. The longest name that the text starts with is
    the one meant (``ndcg_rel.1=3`` is ndcg_rel's, not ndcg's ``rel.1=3``)."""
    found = [
        (trec.name, definition, trec, text[len(trec.name) + 1 :])
        for definition in REGISTRY.measures.values()
        for trec in definition.trec
        if (trec.values or trec.pairs)
        and len(text) > len(trec.name) + 1
        and text.startswith((trec.name + ".", trec.name + "_"))
    ]
    if not found:
        return None
    _, definition, trec, params = max(found, key=lambda item: len(item[0]))
    if trec.pairs:
        try:
            pairs = parse_pairs(trec.name, params)
        except TrecParamError:
            return None
        return [pairs_measure(definition, trec, pairs)]
    measure = list_measure(definition, trec, parse_real_list(params))
    return None if measure is None else [measure]


# --- trec_eval's measure table --------------------------------------------------------------------


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


#: trec_eval's official measures (its nickname ``official``), which open its table.
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
#: trec_eval 10's measure table in its order, which is the output order (spec 7; it never
#: depends on the order of -m options). What each name computes is the registry's.
TABLE_ORDER = (
    *OFFICIAL,
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
