"""Measures: the registry of declared measures and their names.

``parse_measure("ndcg_cut_10")`` and ``parse_measure("nDCG@10")`` give the same
:class:`Measure`, whose ``name`` is the canonical ``nDCG@10``. ``model`` says what a measure
is, ``catalog`` declares every one (``gains``: the helper tables of trec_eval's gain
measures), ``names`` (with ``trec``, trec_eval's own) reads names, ``sqlfile`` loads the SQL
that computes them, ``docs`` lists them.
"""

from __future__ import annotations

from .model import (
    REGISTRY,
    Family,
    Measure,
    MeasureDef,
    Param,
    Registry,
    TrecName,
    format_name,
    make_measure,
)
from .names import (
    NICKNAMES,
    is_measure_object,
    measure_items,
    measure_texts,
    parse_measure,
    parse_measures,
    trec_name,
)

__all__ = [
    "NICKNAMES",
    "REGISTRY",
    "Family",
    "Measure",
    "MeasureDef",
    "Param",
    "Registry",
    "TrecName",
    "format_name",
    "is_measure_object",
    "make_measure",
    "measure_items",
    "measure_texts",
    "parse_measure",
    "parse_measures",
    "trec_name",
]
