"""``rankhouse qrels diff``, ``rankhouse qrels agreement`` and ``rankhouse pool``: judgments as
data (:mod:`rankhouse.judgments`). The first two join the ``qrels`` group that
:mod:`.catalog` makes."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Attach the judgment commands: two to the ``qrels`` group, ``pool`` to the root."""
    qrels = next(group.typer_instance for group in app.registered_groups if group.name == "qrels")
    _register_versions(qrels)
    _register_agreement(qrels)
    _register_pool(app)


# --- versions and diffs ----------------------------------------------------------------------


def _register_versions(qrels: typer.Typer) -> None:
    """``qrels diff`` (and what versions add to the qrels group)."""


# --- agreement ---------------------------------------------------------------------------------


def _register_agreement(qrels: typer.Typer) -> None:
    """``qrels agreement``."""


# --- pools -------------------------------------------------------------------------------------


def _register_pool(app: typer.Typer) -> None:
    """``pool``."""
