"""How ``rankhouse compare`` prints what it found: the compact panels (the default table),
the long and wide forms (every column; CSV and JSON), and the tables of all pairs.

``digits`` is what :func:`rankhouse.cli.commands.output.print_rows` takes (one number, or
per column); ``highlight`` is ``"bold"``, ``"color"`` or ``"none"``."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping

from .output import OutputFormat, print_rows


def print_compact(found, digits: Mapping[str | None, int], highlight: str) -> None:
    """The compact panels of a comparison (one per measure, the drift's), and the legend.

    Args:
        found: the :class:`~rankhouse.compare.Comparison`.
        digits: ``--round`` as {measure or None (all): decimals}.
        highlight: how the best mean is marked.
    """
    from ...compare.comparing import settings_shown
    from ...present.panels import COMPACT_DIGITS, comparison_legend, comparison_panels
    from ...present.panels import drift_panel as drift_table

    settings = settings_shown(found)
    default = digits.get(None, COMPACT_DIGITS)
    places = {r["measure"]: digits.get(r["measure"], default) for r in found.rows}
    panels = comparison_panels(found.rows, settings, digits=places, highlight=highlight != "none")
    if found.drift:
        panels.append(drift_table(found.drift, default))
    print_panels(panels, "bold" if highlight == "bold" else "bold green")
    sys.stdout.write("\n" + comparison_legend(found.rows, settings))


def print_panels(panels, style: str = "bold") -> None:
    """Tables one after the other, a blank line between them."""
    for number, panel in enumerate(panels):
        if number:
            print()
        print_rows(
            panel.columns,
            panel.rows,
            OutputFormat.table,
            title=panel.title,
            numeric=panel.numeric,
            emphasis=panel.emphasis or None,
            emphasis_style=style,
        )


def print_long(found, fmt: OutputFormat, digits) -> None:
    """One row per run and measure with every column (and each run's drift beside its rows
    when it was asked for)."""
    from ...compare import COLUMNS, NUMBER_COLUMNS
    from ...compare.drift import DRIFT_MEASURES

    columns = list(COLUMNS)
    rows = [[row[name] for name in COLUMNS] for row in found.rows]
    numeric = [name in NUMBER_COLUMNS for name in COLUMNS]
    if found.drift:
        extra = [*DRIFT_MEASURES, "drift_queries"]
        by_run = {row["run"]: row for row in found.drift}
        for line, row in zip(rows, found.rows, strict=True):
            drifted = by_run.get(row["run"])
            if drifted is None:
                line += [None] * len(extra)
            else:
                line += [*(drifted[name] for name in DRIFT_MEASURES), drifted["num_q"]]
        columns += extra
        numeric += [True] * len(extra)
    print_rows(
        columns, rows, fmt, title="compare", digits=digits, keys=["run", "measure"], numeric=numeric
    )


def print_wide(found, fmt: OutputFormat, digits, highlight: str) -> None:
    """PyTerrier's Experiment table: one row per run, every column."""
    from ...compare import experiment_rows
    from ...measures.model import best_positions

    columns, table, numeric = experiment_rows(found.rows)
    marked = {}
    if highlight != "none":
        for measure in dict.fromkeys(row["measure"] for row in found.rows):
            position = columns.index(measure)
            marked[measure] = best_positions([line[position] for line in table], measure)
    test = getattr(found.options.test, "__name__", found.options.test)
    baseline = found.baseline
    title = "compare" if baseline is None else f"compare against {baseline} ({test} test)"
    print_rows(
        columns,
        table,
        fmt,
        title=title,
        digits=digits,
        keys=["run"],
        numeric=numeric,
        emphasis=marked,
        emphasis_style="bold" if highlight == "bold" else "bold green",
    )


def wide_columns(found) -> list[str]:
    """The wide form's column names (for their decimals)."""
    from ...compare import experiment_rows

    return experiment_rows(found.rows)[0]


def print_all_pairs(found, fmt: OutputFormat, long: bool, digits: int | None) -> None:
    """All pairs: the tables (ANOVA, the matrix of differences and p-values, the groups), or
    the pairs one per row (``--long``, CSV, TSV), or the whole as one JSON document."""
    from ...cells import json_value
    from ...columns import PAIR_COLUMNS
    from ...present.panels import COMPACT_DIGITS, all_pairs_panels

    for measure, reason in found.skipped.items():
        print(f"note: {measure} left out of all pairs: {reason}", file=sys.stderr)
    if fmt == OutputFormat.json:
        document = {
            "alpha": found.alpha,
            "level": found.options.level,
            "interval": found.options.interval,
            "anova": found.anova_rows(),
            "pairs": found.pair_rows(),
            "groups": found.group_rows(),
        }
        for part in ("anova", "pairs", "groups"):
            document[part] = [{k: json_value(v) for k, v in r.items()} for r in document[part]]
        print(json.dumps(document, indent=2, ensure_ascii=False))
    elif long or fmt != OutputFormat.table:
        numbers = ("difference", "p_value", "num_q", "permutations", "seed")
        print_rows(
            PAIR_COLUMNS,
            [[row[c] for c in PAIR_COLUMNS] for row in found.pair_rows()],
            fmt,
            title="all pairs",
            digits=4 if digits is None else digits,
            keys=["measure", "run", "other"],
            numeric=[c in numbers for c in PAIR_COLUMNS],
        )
    else:
        print_panels(all_pairs_panels(found, COMPACT_DIGITS if digits is None else digits))
