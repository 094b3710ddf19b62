"""HTML tables of many runs at once and of order drift, for notebooks: per measure of an
all-pairs analysis the ANOVA table, the matrix of differences with their p-values and the
letter groups (:class:`rankhouse.compare.AllPairs`), and a comparison's drift table."""

from __future__ import annotations

from typing import Any

from ..lazy import pandas as pd
from .compact import level_text, method_text, p_text
from .tables import cell, number, signed, table


def all_pairs_html(found: Any, *, round: int = 4) -> str:  # noqa: A002 (PyTerrier's name)
    """The tables of an :class:`~rankhouse.compare.AllPairs`, measure after measure."""
    parts = []
    level = level_text(found.options.level)
    for m in found.measures:
        ranked = list(m.letters)  # best first
        at = {run: i for i, run in enumerate(m.pairs.systems)}
        anova = [
            cell(row.source, classes=["text"])
            + cell(number(row.sum_of_squares, round))
            + cell(str(row.df))
            + cell(number(row.mean_square, round))
            + cell(number(row.f, 2))
            + cell(p_text(row.p_value))
            for row in m.anova.rows
        ]
        parts.append(
            table(
                ["source", "sum of squares", "df", "mean square", "F", "p"],
                anova,
                caption=f"{m.measure}: {len(ranked)} runs x {len(m.queries)} queries, "
                "two-way ANOVA",
            )
        )
        matrix = []
        for i, run in enumerate(ranked[:-1]):
            line = cell(run, classes=["text"])
            for j, other in enumerate(ranked[1:], start=1):
                if j <= i:
                    line += cell("")
                    continue
                a, b = at[run], at[other]
                p = m.pairs.p_values[a][b]
                text = f"{signed(m.pairs.differences[a][b], round)} ({p_text(p)})"
                line += cell(text, classes=["better" if p <= found.alpha else ""])
            matrix.append(line)
        parts.append(
            table(
                ["", *ranked[1:]],
                matrix,
                caption=f"{m.measure}: row minus column (p: {method_text(m.pairs)})",
            )
        )
        groups = [
            cell(run, classes=["text"])
            + cell(number(m.pairs.means[at[run]], round))
            + cell(_bounds(m.intervals[at[run]].low, m.intervals[at[run]].high, round))
            + cell(letters, classes=["text"])
            for run, letters in m.letters.items()
        ]
        parts.append(
            table(
                ["run", "mean", f"{level} CI", "group"],
                groups,
                caption=f"{m.measure}: groups at alpha {found.alpha:g} (runs sharing a letter "
                "cannot be told apart)",
            )
        )
    return "".join(parts)


def drift_html(frame: pd.DataFrame, *, round: int = 4) -> str:  # noqa: A002
    """A comparison's drift table (:data:`~rankhouse.columns.DRIFT_COLUMNS`)."""
    if frame.empty:
        return ""
    first = frame.iloc[0]
    k = int(first["k"])
    rows = [
        cell(str(row["run"]), classes=["text"])
        + "".join(
            cell(number(row[name], round)) for name in ("rbo", "kendall_tau", "tau_ap", "overlap")
        )
        + cell(str(int(row["num_q"])))
        for row in frame.to_dict("records")
    ]
    return table(
        ["run", "RBO", "tau", "tau_AP", f"overlap@{k}", "queries"],
        rows,
        caption=f"order drift from {first['baseline']}: top {k}, RBO persistence "
        f"{float(first['p']):g}",
    )


def _bounds(low: float, high: float, digits: int) -> str:
    if pd.isna(low) or pd.isna(high):
        return ""
    return f"[{number(low, digits)}, {number(high, digits)}]"
