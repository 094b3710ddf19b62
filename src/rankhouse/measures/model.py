"""The data that declares a measure: its parameters, its family, how it aggregates.

A :class:`MeasureDef` is one entry of the registry (``P``, ``AP``, ``nDCG``...); a
:class:`Measure` is one concrete request of it with every parameter filled in (``P@10``,
``AP(rel=2)``). A :class:`Family` is one SQL file under ``sql/measures/`` that computes the
values of every measure declared in it, for all their parameter values at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

AGGREGATES = ("mean", "sum", "gmean")
#: Which value of a measure is the best: the highest, the lowest, or none (a count that
#: describes the judgments or the ranking's length, not how good the ranking is).
BETTER = ("higher", "lower", "none")
#: The range of a measure whose every per-query value lies in [0, 1] (a share, a precision,
#: a normalised gain): its mean does too, and an interval of the mean is cut to it.
UNIT = (0.0, 1.0)


@dataclass(frozen=True)
class Param:
    """One parameter of a measure.

    Attributes:
        name: the name in ``Name(name=value)``; ``cutoff`` and ``recall`` are written ``@value``.
        type: ``int``, ``float`` or ``str``.
        default: the value when the parameter is not given (left out of canonical names);
            ``None`` means "none" (no cutoff, the evaluation-wide relevance level, ...).
        doc: one line for the catalogue.
        choices: the allowed values of a ``str`` parameter, or ``None`` for any.
        minimum: the smallest allowed value of a number, or ``None``.
        required: whether the parameter must be given (``P`` needs its cutoff).
        maximum: the largest allowed value of a number, or ``None``.
        check: called with a given value (not the default) to refuse what the type and the
            range cannot say (a gain table that is not ``level=gain`` pairs); raises
            MeasureError.
    """

    name: str
    type: type
    default: Any = None
    doc: str = ""
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    required: bool = False
    maximum: float | None = None
    check: Callable[[Any], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TrecName:
    """A trec_eval name that selects a measure: ``map``, ``P`` (``P_5``, ``P.5,10``), ...

    Attributes:
        name: trec_eval's measure name.
        key: the parameter its suffix sets (``cutoff`` for ``P_5``, ``recall`` for
            ``iprec_at_recall_0.50``), or ``None`` for a name without parameters.
        defaults: the values trec_eval uses when the name is given bare (``P`` alone means
            ``P_5 ... P_1000``).
        fixed: other parameters that this name implies.
        values: the parameters that trec_eval's "real list" parameter text sets, in order
            (``utility.1,-1,0,0`` sets four, ``set_F.0.5`` one); a ``str`` parameter takes
            the whole list, ``;``-separated (``11pt_avg.0.25,0.5``). Their defaults are the
            name's defaults.
        pairs: whether the name takes trec_eval's ``name=value`` pairs: ``level=gain`` pairs
            set the measure's ``gains`` and ``p=x`` its ``p`` (``rbp.p=0.8,1=2``).
        gain_table: the registry name of the measure that the name selects when pairs give a
            gain table (``ndcg.1=3`` is ``nDCG_gains``), or ``None``: the same measure.
    """

    name: str
    key: str | None = None
    defaults: tuple[Any, ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()
    values: tuple[str, ...] = ()
    pairs: bool = False
    gain_table: str | None = None


@dataclass(frozen=True)
class Family:
    """One SQL file computing one or more measures for every value of one "key" parameter.

    The engine runs the file once per group of requested measures of the family that agree on
    every parameter except ``key``; the key values are bound together as the list
    ``:<list_bind>``. The file returns columns ``run_id, query_id, key, value`` (``key`` omitted
    when ``key`` is ``None``). With ``key="measure"`` the key is the measure's registry name,
    for a file that computes several measures (``NumRet``, ``NumRel``, ...).

    Attributes:
        name: the family's name (``precision``).
        sql: the file under ``sql/``, e.g. ``measures/precision.sql``.
        key: the parameter gathered into a list, ``"measure"``, or ``None``.
        list_bind: the bind name of that list (``cutoffs``).
        prepare: called as ``prepare(conn, measures, binds, built)`` before the file runs, to
            build small helper tables the SQL cannot (trec_eval's quirky gain-table sort).
            ``built`` is a dict that the groups of one computation on ``conn`` share: a
            prepare step records in it what each table it built was built for, and leaves
            a table alone that an earlier group built for the same (nDCG's gain table is
            RBP_gains').
    """

    name: str
    sql: str
    key: str | None = None
    list_bind: str | None = None
    prepare: Callable[..., None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class MeasureDef:
    """A declared measure: what ``rankhouse measures`` lists and what names parse to.

    Attributes:
        name: the canonical (ir_measures) name without parameters: ``P``, ``nDCG``.
        family: the name of the :class:`Family` that computes it.
        params: its parameters, in the order canonical names print them.
        aggregate: ``mean``, ``sum`` or ``gmean`` (trec_eval's gm: exp(mean(ln(max(x, 1e-5))))).
        empty_value: the value of a query for which the family returns no row (a query with
            no results, or nothing relevant retrieved).
        doc: one line with the formula.
        trec: the trec_eval names that select it.
        aliases: other accepted names (case-sensitive), e.g. ``MAP`` for ``AP``.
        at: the parameter written as ``@value`` (``cutoff``, ``recall``), or ``None``.
        better: which value is the best (:data:`BETTER`): ``higher`` (the default),
            ``lower`` (the share of unjudged documents), or ``none`` for counts.
        bounds: the range (low, high) every per-query value lies in, e.g. :data:`UNIT` for
            precision, recall, AP, RR and nDCG, or ``None`` when unbounded or not declared
            (DCG, counts, utility). The report cuts a mean's interval to it.
        graded: whether the measure without its own ``rel`` uses the grades themselves
            (ir_measures' RBP), so that the evaluation's relevance level does not apply: its
            SQL gets ``:rel`` as given, NULL when not.
    """

    name: str
    family: str
    params: tuple[Param, ...] = ()
    aggregate: str = "mean"
    empty_value: float = 0.0
    doc: str = ""
    trec: tuple[TrecName, ...] = ()
    aliases: tuple[str, ...] = ()
    at: str | None = None
    better: str = "higher"
    bounds: tuple[float, float] | None = None
    graded: bool = False

    def param(self, name: str) -> Param | None:
        """The parameter called ``name``, or ``None``."""
        return next((p for p in self.params if p.name == name), None)

    @property
    def uses_relevance_level(self) -> bool:
        """Whether the evaluation's relevance level applies (a ``rel`` parameter that
        defaults to it)."""
        return self.param("rel") is not None and not self.graded


@dataclass(frozen=True)
class Measure:
    """One requested measure with every parameter filled in.

    Build it with :func:`rankhouse.measures.parse_measure`; ``str(measure)`` is its canonical
    name, which parses back to an equal measure.

    Attributes:
        name: canonical name, e.g. ``P(rel=2)@5``.
        family: the family computing it.
        params: every parameter, defaults included (``rel`` is ``None`` when the
            evaluation-wide level applies).
        aggregate: ``mean``, ``sum`` or ``gmean``.
        empty_value: value of a query with no results.
        relevance_level: the measure's own level, or ``None`` to use the evaluation's.
        definition: the registry entry.
    """

    name: str
    family: str
    params: dict[str, Any] = field(hash=False, compare=False)
    aggregate: str
    empty_value: float
    relevance_level: int | None
    definition: MeasureDef = field(repr=False, hash=False, compare=False)

    def __str__(self) -> str:
        return self.name

    def effective_level(self, default: int) -> int:
        """The relevance level the measure is computed at when the evaluation uses ``default``."""
        return default if self.relevance_level is None else self.relevance_level
