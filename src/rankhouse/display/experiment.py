"""PyTerrier's Experiment table: a comparison's long rows made wide, one row per run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..lazy import pandas as pd

#: The columns :func:`experiment_rows` gives each measure: (suffix of the column name, the
#: comparison's column shown, a number or not); the interval of the mean always, the tests'
#: when a baseline was given.
_MEAN_CELLS = (("", "mean", True), (" low", "mean_low", True), (" high", "mean_high", True))
_TEST_CELLS = (
    (" delta", "delta", True),
    (" delta low", "delta_low", True),
    (" delta high", "delta_high", True),
    (" g_z", "hedges_gz", True),
    (" +", "improved", True),
    (" -", "degraded", True),
    (" p", "p_value", True),
    (" p corr", "p_corrected", True),
    (" verdict", "verdict", False),
    (" mde", "mde", True),
)


def experiment_rows(
    rows: Sequence[Mapping[str, Any]],
) -> tuple[list[str], list[list[Any]], list[bool]]:
    """:func:`experiment_table` of :attr:`rankhouse.compare.Comparison.rows`, as plain values:
    (the columns, one row per run, which columns hold numbers). A missing cell is None or
    NaN."""
    runs = list(dict.fromkeys(row["run"] for row in rows))
    measures = list(dict.fromkeys(row["measure"] for row in rows))
    found = {(row["run"], row["measure"]): row for row in rows}
    cells = list(_MEAN_CELLS)
    if any(row["baseline"] is not None for row in rows):
        cells += _TEST_CELLS
    columns, numeric = ["run"], [False]
    table: list[list[Any]] = [[run] for run in runs]
    for measure in measures:
        for suffix, key, is_number in cells:
            columns.append(measure + suffix)
            numeric.append(is_number)
            for run, line in zip(runs, table, strict=True):
                row = found.get((run, measure))
                line.append(None if row is None else row[key])
    return columns, table, numeric


def experiment_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The wide view of :func:`rankhouse.compare.compare`'s result, one row per run:
    PyTerrier's Experiment.

    Columns: ``run``, then per measure its mean with ``<m> low`` and ``<m> high`` (the
    bounds of its interval), and when a baseline was given ``<m> delta`` (run mean -
    baseline mean), ``<m> delta low`` and ``<m> delta high`` (the interval of the paired
    difference), ``<m> g_z`` (Hedges' g_z), ``<m> +`` (queries improved), ``<m> -`` (queries
    degraded), ``<m> p`` (p-value), ``<m> p corr`` (corrected p-value), ``<m> verdict``
    (better, worse, equivalent, inconclusive) and ``<m> mde`` (the minimum detectable
    effect). The baseline's own test cells are empty. PyTerrier calls the p-values ``<m>
    p-value`` and ``<m> p-value corrected``; its ``<m> reject`` is the long form's
    ``significant``.

    Args:
        frame: :func:`rankhouse.compare.compare`'s long result (or any frame with
            :data:`~rankhouse.columns.COMPARE_COLUMNS`).

    Returns:
        A plain DataFrame, one row per run in the order of ``frame``.
    """
    runs = list(dict.fromkeys(frame["run"]))
    measures = list(dict.fromkeys(frame["measure"]))
    indexed = pd.DataFrame(frame).set_index(["run", "measure"])
    has_baseline = frame["baseline"].notna().any()
    columns: dict[str, Any] = {"run": runs}
    for measure in measures:
        part = indexed.xs(measure, level="measure").reindex(runs)
        cells = _MEAN_CELLS + (_TEST_CELLS if has_baseline else ())
        for suffix, key, is_number in cells:
            if key in ("improved", "degraded"):
                columns[measure + suffix] = pd.array(part[key], dtype="Int64")
            elif is_number:
                columns[measure + suffix] = part[key].to_numpy(dtype=float)
            else:
                columns[measure + suffix] = part[key].astype(object).to_numpy()
    # built in one step: a column at a time fragments a frame of many measures
    return pd.DataFrame(columns)
