"""trec_eval's parameter texts of the "real list" and "name=value pairs" kinds (spec 1.1), as
measures: ``set_F.0.5``, ``utility.2,-1,0,0``, ``11pt_avg.0.25,0.5``, ``rbp.p=0.8``,
``ndcg.1=3,2=9``, ``G_2=5``.

What a name's text sets is the registry's declaration of the name
(:class:`~rankhouse.measures.TrecName`: ``values`` for a list, ``pairs`` and ``gain_table``
for pairs). ``rankhouse trec-eval -m`` and the measure name parser read them alike.
"""

from __future__ import annotations

import re
from typing import Any

from ..c_numbers import atof, atol
from .gain_table import format_gains
from .make import make_measure
from .model import Measure, MeasureDef, TrecName
from .registry import REGISTRY

#: The persistence of a pair text that sets no ``p`` (trec_eval's default).
DEFAULT_PERSISTENCE = 0.9
_INTEGER_KEY = re.compile(r"[+-]?[0-9]+\Z")

Pairs = tuple[tuple[tuple[int, float], ...], float]


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
