"""``rankhouse measures``: the catalogue of measures, from the registry."""

from __future__ import annotations

import typer

from .output import FORMAT_OPTION, OutputFormat, print_rows


def register(app: typer.Typer) -> None:
    @app.command("measures")
    def measures(
        name: str = typer.Argument(
            None, help="Show only this measure (any accepted name, e.g. ndcg_cut_10)."
        ),
        fmt: OutputFormat = FORMAT_OPTION,
    ) -> None:
        """List the measures rankhouse computes, their parameters and trec_eval names."""
        from ...measures import parse_measures
        from ...measures.docs import COLUMNS, catalogue_rows

        rows = catalogue_rows()
        if name:
            wanted = {m.definition.name for m in parse_measures([name])}
            rows = [row for row in rows if row[0] in wanted]
        print_rows(COLUMNS, rows, fmt, title="Measures")
