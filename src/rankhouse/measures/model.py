"""What a measure is: its declaration, the registry of declarations, a measure made from one,
and which of its values is best.

A :class:`MeasureDef` is one entry of the registry (``P``, ``AP``, ``nDCG``...); a
:class:`Measure` is one concrete request of it with every parameter filled in (``P@10``,
``AP(rel=2)``), made by :func:`make_measure`: checked, defaults filled in, and named
canonically as ir_measures prints it (``Name(k=v,...)@at``, defaults left out). A
:class:`Family` is one SQL file under ``sql/measures/`` that computes the values of every
measure declared in it, for all their parameter values at once. :data:`REGISTRY` holds the
families and measures that ``catalog.py`` declares.

Which value of a measure is the best is its entry's ``better``: the largest for most, the
smallest for the shares of unjudged documents and RBP's residual, none for counts (they
describe the judgments, not the ranking). Tables mark it (:func:`best_positions`); this
module imports nothing heavy, so the command line uses it too.
"""

from __future__ import annotations

import contextvars
import math
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..cells import is_missing
from ..errors import MeasureError

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
        unset: parameters the file declares that not every measure of the family has (the
            C/W/L file's ``T``, ``p`` and ``cutoff``): bound NULL for a measure without one.
        absent: binds offered, as ``(name, value)`` pairs, to a measure of the family that
            has no such parameter (one file for measures of different parameters: ERR_IA
            has no ``alpha``, and its file reads ndeval's 0.5).
    """

    name: str
    sql: str
    key: str | None = None
    list_bind: str | None = None
    prepare: Callable[..., None] | None = field(default=None, compare=False)
    unset: tuple[str, ...] = ()
    absent: tuple[tuple[str, Any], ...] = ()


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
        check: called with every parameter's value (defaults filled in) to refuse a
            combination that no single parameter can (C/W/L's ``min_rel`` not below
            ``max_rel``); raises MeasureError.
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
    check: Callable[[dict[str, Any]], None] | None = field(default=None, compare=False)

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


# --- the registry ---------------------------------------------------------------------------------


class Registry:
    """Declared families and measures, looked up by name, alias or trec_eval name.

    ``catalog.py`` declares into the one :data:`REGISTRY`: the core measures, then the rest of
    trec_eval's catalogue.
    """

    def __init__(self) -> None:
        self.families: dict[str, Family] = {}
        self.measures: dict[str, MeasureDef] = {}
        self._aliases: dict[str, str] = {}
        self._trec: dict[str, tuple[MeasureDef, int]] = {}

    def family(self, family: Family) -> Family:
        """Declare a family; its name must be new."""
        if family.name in self.families:
            raise MeasureError(f"family {family.name!r} is declared twice")
        self.families[family.name] = family
        return family

    def declare(self, definition: MeasureDef) -> MeasureDef:
        """Declare a measure; its name, aliases and trec_eval names must be new."""
        if definition.family not in self.families:
            raise MeasureError(f"measure {definition.name!r}: unknown family {definition.family!r}")
        if definition.aggregate not in AGGREGATES:
            raise MeasureError(
                f"measure {definition.name!r}: bad aggregate {definition.aggregate!r}"
            )
        if definition.better not in BETTER:
            raise MeasureError(
                f"measure {definition.name!r}: better must be one of "
                f"{', '.join(map(repr, BETTER))}, not {definition.better!r}"
            )
        for name in (definition.name, *definition.aliases):
            if name in self.measures or name in self._aliases:
                raise MeasureError(f"measure name {name!r} is declared twice")
        for index, trec in enumerate(definition.trec):
            if trec.name in self._trec:
                raise MeasureError(f"trec_eval name {trec.name!r} is declared twice")
            for param in (trec.key, *trec.values):
                if param is not None and definition.param(param) is None:
                    raise MeasureError(
                        f"trec_eval name {trec.name!r}: {definition.name} has no parameter "
                        f"{param!r}"
                    )
            self._trec[trec.name] = (definition, index)
        self.measures[definition.name] = definition
        for alias in definition.aliases:
            self._aliases[alias] = definition.name
        return definition

    def lookup(self, name: str) -> MeasureDef | None:
        """The measure called ``name`` (canonical or alias), or ``None``."""
        return self.measures.get(self._aliases.get(name, name))

    def lookup_trec(self, name: str):
        """``(definition, TrecName)`` for a trec_eval name, or ``None``."""
        found = self._trec.get(name)
        if found is None:
            return None
        definition, index = found
        return definition, definition.trec[index]

    def trec_names(self) -> list[str]:
        """Every declared trec_eval name, in declaration order."""
        return list(self._trec)

    def known_names(self) -> list[str]:
        """Every accepted bare name: canonical names, aliases, trec_eval names."""
        return list(dict.fromkeys([*self.measures, *self._aliases, *self._trec]))

    def __iter__(self) -> Iterator[MeasureDef]:
        return iter(self.measures.values())

    def __len__(self) -> int:
        return len(self.measures)


#: Every declared family and measure (``catalog.py`` declares them).
REGISTRY = Registry()


# --- a measure made from its declaration ----------------------------------------------------------


#: The range of an ``int`` parameter: SQL binds it as INTEGER.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


_STORED = contextvars.ContextVar("stored_names", default=False)


@contextmanager
def stored_names() -> Iterator[None]:
    """Within it, names are read as the labels of stored values: a parameter out of its
    range still names what an older release stored (``RBP(p=1.5)``), so that it can be shown
    and chosen; types and choices are still checked."""
    token = _STORED.set(True)
    try:
        yield
    finally:
        _STORED.reset(token)


def make_measure(definition: MeasureDef, **params: Any) -> Measure:
    """The measure ``definition`` with ``params`` set (validated) and defaults filled in."""
    values: dict[str, Any] = {}
    for param in definition.params:
        value = params.pop(param.name, param.default)
        values[param.name] = check_value(definition, param, value)
    if params:
        raise MeasureError(
            f"{definition.name} has no parameter {sorted(params)[0]!r}; "
            f"it takes: {', '.join(p.name for p in definition.params) or 'none'}"
        )
    if definition.check is not None and not _STORED.get():
        definition.check(values)
    return Measure(
        name=format_name(definition, values),
        family=definition.family,
        params=values,
        aggregate=definition.aggregate,
        empty_value=definition.empty_value,
        relevance_level=values.get("rel"),
        definition=definition,
    )


def format_name(definition: MeasureDef, values: dict[str, Any]) -> str:
    """The canonical name: ``Name(k=v,...)@at`` with defaults left out, as ir_measures prints."""
    shown = [
        f"{p.name}={repr(values[p.name])}"
        for p in definition.params
        if p.name != definition.at and values[p.name] != p.default
    ]
    name = definition.name + (f"({','.join(shown)})" if shown else "")
    if definition.at is not None and values.get(definition.at) is not None:
        name += f"@{repr(values[definition.at])}"
    return name


def check_value(definition: MeasureDef, param: Param, value: Any) -> Any:
    """``value`` for ``param`` of ``definition`` (an int as float for a float parameter);
    raises MeasureError naming what is wrong (missing, type, choice, minimum, range)."""
    if value is None:
        if param.required:
            example = (
                f"{definition.name}@10"
                if param.name == definition.at
                else f"{definition.name}({param.name}=...)"
            )
            raise MeasureError(
                f"{definition.name} needs its {param.name} parameter, e.g. {example}"
            )
        return None
    if param.type is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, param.type) or isinstance(value, bool) != (param.type is bool):
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be {kind_of(param.type)}, "
            f"not {_shown(value)}"
        )
    if param.choices is not None and value not in param.choices:
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be one of "
            f"{', '.join(map(repr, param.choices))}, not {value!r}"
        )
    if _STORED.get():
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be a finite number, not {value!r}"
        )
    if param.type in (int, float) and not _in_range(param, value):
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be {_range(param)}, not {value!r}"
        )
    if param.type is int and not INT32_MIN <= value <= INT32_MAX:  # SQL binds it as INTEGER
        raise MeasureError(
            f"{definition.name}: parameter {param.name} must be a 32-bit integer "
            f"({INT32_MIN} to {INT32_MAX}), not {value!r}"
        )
    if param.check is not None:
        param.check(value)
    return value


def _in_range(param: Param, value: float) -> bool:
    return (param.minimum is None or value >= param.minimum) and (
        param.maximum is None or value <= param.maximum
    )


def _range(param: Param) -> str:
    """How a message says the allowed range: ``>= 1`` or ``in [0, 1]``."""
    if param.maximum is None:
        return f">= {param.minimum:g}"
    if param.minimum is None:
        return f"<= {param.maximum:g}"
    return f"in [{param.minimum:g}, {param.maximum:g}]"


_KINDS = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def kind_of(type_: type) -> str:
    """How a message names a parameter's type: ``an integer``, ``a number``..."""
    return _KINDS.get(type_, f"a {type_.__name__}")


def _shown(value: Any) -> str:
    if isinstance(value, tuple):  # `P@5,` reads as the tuple (5,): show what was written
        return repr(",".join(map(str, value)) + ("," if len(value) == 1 else ""))
    return repr(value)


# --- which value is best --------------------------------------------------------------------------


_SIGN = {"higher": 1, "lower": -1, "none": 0}
# A label's measure name: what precedes its parameters, cutoff and settings ("AP(rel=2)@5",
# "nDCG@10 [max_rank=100]").
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def direction(measure: str) -> int:
    """+1 when larger is better, -1 when smaller is, 0 when the measure ranks nothing.

    Args:
        measure: a canonical name or a label (``AP(rel=2)``, ``nDCG@10 [max_rank=100]``).
            A name the registry does not know counts as larger-is-better.
    """
    match = _NAME.match(measure.strip())
    definition = REGISTRY.lookup(match.group(0)) if match else None
    return 1 if definition is None else _SIGN[definition.better]


def best_positions(values: Sequence[Any], measure: str) -> set[int]:
    """Positions of the best value(s) of ``measure`` among ``values`` (ties all win; a
    missing value never does)."""
    sign = direction(measure)
    numbers = [None if is_missing(v) else float(v) for v in values]
    present = [v for v in numbers if v is not None]
    if sign == 0 or len(present) < 2:
        return set()
    best = max(present) if sign > 0 else min(present)
    return {i for i, v in enumerate(numbers) if v == best}


def value_range(measure: str) -> tuple[float, float] | None:
    """The range every value of ``measure`` lies in, as its registry entry declares it
    (``bounds``: (0, 1) for precision, recall, AP, RR, nDCG...), or None when unbounded or
    unknown.

    Args:
        measure: a canonical name or a label (``AP(rel=2)``, ``nDCG@10 [max_rank=100]``).
    """
    match = _NAME.match(measure.strip())
    definition = REGISTRY.lookup(match.group(0)) if match else None
    return None if definition is None else definition.bounds
