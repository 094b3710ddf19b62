"""``rankhouse qrels diff``, ``rankhouse qrels agreement`` and ``rankhouse pool``: judgments as
data (:mod:`rankhouse.judgments`). The first two join the ``qrels`` group that
:mod:`.catalog` makes."""

from __future__ import annotations

from enum import StrEnum

import typer

from ...cells import json_text, json_value
from .common import open_warehouse
from .output import FORMAT_OPTION, OutputFormat, print_rows


def register(app: typer.Typer) -> None:
    """Attach the judgment commands: two to the ``qrels`` group, ``pool`` to the root."""
    qrels = next(group.typer_instance for group in app.registered_groups if group.name == "qrels")
    _register_versions(qrels)
    _register_agreement(qrels)
    _register_pool(app)


# --- versions and diffs ----------------------------------------------------------------------


def _register_versions(qrels: typer.Typer) -> None:
    """``qrels diff`` (and what versions add to the qrels group)."""

    @qrels.command("diff")
    def qrels_diff(
        ctx: typer.Context,
        a: str = typer.Argument(..., help="The qrels set compared from (name, alias or id)."),
        b: str = typer.Argument(..., help="The qrels set compared to (e.g. dl19@2)."),
        section: _Section = typer.Option(
            None,
            "--section",
            help="Print this section alone (csv and tsv print one: queries by default).",
        ),
        changes: bool = typer.Option(
            False, "--changes", help="Also list each judgment added, removed or changed."
        ),
        fmt: OutputFormat = FORMAT_OPTION,
    ) -> None:
        """What changed from qrels set A to B: per query the judgments added, removed and
        changed, the totals, the grade transitions (rows: A, columns: B), and the stored
        evaluations that used A (docs/judgments.md)."""
        wh = open_warehouse(ctx, write=False, reads=True)
        found = wh.qrels_diff(a, b)
        if section is not None:
            shown = [section.value]
        elif fmt in (OutputFormat.csv, OutputFormat.tsv):
            shown = ["queries"]
        else:
            shown = [s for s in _SECTION_TITLES if changes or s != "changes"]
        if fmt == OutputFormat.json and len(shown) > 1:
            document = {"a": found.a, "b": found.b}
            for name in shown:
                rows = found.rows(name)
                document[name] = [
                    {c: json_value(v) for c, v in zip(rows.columns, row, strict=True)}
                    for row in rows.rows
                ]
            document["totals"] = document["totals"][0]
            print(json_text(document))
            return
        for name in shown:
            rows = found.rows(name)
            title = _SECTION_TITLES[name].format(a=found.a, b=found.b)
            print_rows(rows.columns, rows.rows, fmt, title=title)


class _Section(StrEnum):
    queries = "queries"
    totals = "totals"
    transitions = "transitions"
    evaluations = "evaluations"
    changes = "changes"


#: Each section of ``qrels diff`` and its table's title.
_SECTION_TITLES = {
    "queries": "judgments per query, {a} -> {b}",
    "totals": "totals, {a} -> {b}",
    "transitions": "grade transitions (rows: grade in {a}, columns: grade in {b})",
    "evaluations": "stored evaluations that used {a} (value_b: with {b})",
    "changes": "judgments added, removed and changed, {a} -> {b}",
}


# --- agreement ---------------------------------------------------------------------------------


def _register_agreement(qrels: typer.Typer) -> None:
    """``qrels agreement``."""


# --- pools -------------------------------------------------------------------------------------


def _register_pool(app: typer.Typer) -> None:
    """``pool``."""
