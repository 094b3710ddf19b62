"""``rankhouse history``: stored evaluations over time, one row per run."""

from __future__ import annotations

import sys

import typer

from ...cells import is_missing
from .common import LEVEL_OPTION, MissingQueries, open_warehouse
from .output import FORMAT_OPTION, OutputFormat, print_rows


def register(app: typer.Typer) -> None:
    app.command("history")(history_command)


def history_command(
    ctx: typer.Context,
    system: str = typer.Option(None, "--system", "-s", help="Only runs with this system tag."),
    run: str = typer.Option(None, "--run", help="Only this run (name or id)."),
    qrels: str = typer.Option(None, "--qrels", help="Only evaluations against this qrels set."),
    measures: list[str] = typer.Option(
        None,
        "--measure",
        "-m",
        help="Measure columns, repeatable (default: those eval, compare, regress or trec-eval "
        "asked for).",
    ),
    all_measures: bool = typer.Option(
        False,
        "--all-measures",
        "-a",
        help="Without -m: every stored label, also the precision-recall points a report "
        "stored for its curves.",
    ),
    since: str = typer.Option(
        None,
        "--since",
        metavar="DATE",
        help="Only runs ingested at or after this date (YYYY-MM-DD, UTC).",
    ),
    relevance_level: int = typer.Option(
        1, "--relevance-level", "-l", help="The level the measures were evaluated at."
    ),
    missing_queries: MissingQueries = typer.Option(
        MissingQueries.zero,
        "--missing-queries",
        help="The missing-query policy the measures were evaluated with.",
    ),
    level: float = LEVEL_OPTION,
    drift: bool = typer.Option(
        False,
        "--drift",
        help="Also each run's newest stored order drift (compare --drift, regress "
        "--max-drift): its baseline, RBO, Kendall's tau, tau_AP and overlap.",
    ),
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Stored evaluations over time: one row per run (newest last), one column per label.

    Columns: ingest time (UTC), run, system tag, qrels set, the run's --meta keys, num_q
    (the queries the means are over), one column per label (the measure with the settings
    it was computed under: -m AP -l 2 is the column AP(rel=2)) with its interval, and gate
    (the newest regress verdict). A table shows each mean with the half-width of its
    interval (Student's t over the per-query values, --level); csv, tsv and json give the
    bounds as LABEL low and LABEL high. History reads; it never evaluates.
    """
    from ...history import history_rows

    wh = open_warehouse(ctx, write=False, reads=True)
    found, measure_columns, hidden = history_rows(
        wh,
        system=system,
        run=run,
        qrels=qrels,
        measures=measures or None,
        since=since,
        relevance_level=relevance_level,
        missing_queries=missing_queries.value,
        all_measures=all_measures,
        level=level,
        drift=drift,
    )
    if hidden:
        from ...errors import count

        print(
            f"note: {count(len(hidden), 'stored label')} not shown ({_span(hidden)}: no command "
            "asked for them, a report stored them for its curves); --all-measures shows them",
            file=sys.stderr,
        )
    if measures:
        _note_other_settings(wh, found, measures, relevance_level, missing_queries.value)
    rows = found.rows
    if fmt != OutputFormat.table:
        print_rows(found.columns, rows, fmt, keys=["run"])
        return
    from .intervals import folded, level_words

    rows = [(str(row[0])[:19], *row[1:]) for row in rows]  # to the second: the rest in csv
    columns, rows, numeric = folded(found.columns, rows, measure_columns)
    # measures are numbers even where none is stored (an empty listing aligns nothing)
    numeric = [bool(rows) and is_number for is_number in numeric]
    title = f"history: {level_words(level)}" if measure_columns else "history"
    print_rows(columns, rows, fmt, title=title, keys=["run"], numeric=numeric)


def _note_other_settings(wh, found, measures, relevance_level, missing_queries) -> None:
    """On stderr: a requested label without values whose measure is stored at other settings."""
    from ...history import other_labels
    from ...labels import requested_labels

    wanted = requested_labels(measures, relevance_level, missing_queries)
    empty = [
        w
        for w in wanted
        if w not in found.columns or all(is_missing(value) for value in found.column(w))
    ]
    for name, others in other_labels(wh, empty).items():
        print(
            f"note: no stored value of {name}; stored at other settings: {', '.join(others)} "
            "(-l / --missing-queries, or -m with the label)",
            file=sys.stderr,
        )


def _span(labels: list[str]) -> str:
    return ", ".join(labels) if len(labels) <= 3 else f"{labels[0]} ... {labels[-1]}"
