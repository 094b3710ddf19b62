"""Measures: the registry of declared measures and their names.

``parse_measure("ndcg_cut_10")`` and ``parse_measure("nDCG@10")`` give the same
:class:`Measure`, whose ``name`` is the canonical ``nDCG@10``.
"""

from __future__ import annotations

import importlib

from .given import NICKNAMES, is_measure_object, measure_items, measure_texts
from .make import format_name, make_measure
from .model import Family, Measure, MeasureDef, Param, TrecName
from .names import parse_measure, parse_measures, trec_name
from .registry import REGISTRY, Registry

# Modules that declare measures into REGISTRY; a module not written yet is skipped.
CATALOG_MODULES = ("catalog", "catalog_trec")

for _module in CATALOG_MODULES:
    try:
        importlib.import_module(f"{__name__}.{_module}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{_module}":
            raise

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
