"""Command groups of the ``rankhouse`` CLI, one module per verb."""

from __future__ import annotations

import importlib

import typer

# Each module defines ``register(app)``; this order is the order of ``rankhouse --help``.
_MODULES = (
    "ingest",
    "catalog",
    "evaluate",
    "measures",
    "trec_eval",
    "history",
    "compare",
    "regress",
    "gate",
    "report",
    "sql",
    "migrate",
)


def register_all(app: typer.Typer) -> None:
    """Attach every command group to the root app."""
    for name in _MODULES:
        importlib.import_module(f"{__name__}.{name}").register(app)
