"""Command groups of the ``rankhouse`` CLI, one module per verb."""

from __future__ import annotations

import importlib

import typer

# Each module defines ``register(app)``. Listed here so that the order of ``--help`` is stable.
_MODULES = (
    "ingest",
    "catalog",
    "evaluate",
    "measures",
    "trec_eval",
    "history",
    "compare",
    "regress",
    "sql",
)


def register_all(app: typer.Typer) -> None:
    for name in _MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # that command group is not built yet
            raise
        module.register(app)
