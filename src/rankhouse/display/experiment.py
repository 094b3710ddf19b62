"""PyTerrier's Experiment table: a comparison's long rows made wide, one row per run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..lazy import pandas as pd

#: The columns :func:`experiment_rows` gives each measure after its mean when a baseline was
#: given: (suffix of the column name, the comparison's column shown, a number or not).
_TEST_CELLS = (
    (" delta", "delta", True),
    (" +", "improved", True),
    (" -", "degraded", True),
    (" p", "p_value", True),
    (" p corr", "p_corrected", True),
    (" sig", "significant", False),
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
    cells = [("", "mean", True)]
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

    Columns: ``run``, then per measure its mean, and when a baseline was given
    ``<m> delta`` (run mean - baseline mean), ``<m> +`` (queries improved), ``<m> -``
    (queries degraded), ``<m> p`` (p-value), ``<m> p corr`` (corrected p-value) and
    ``<m> sig`` (True, False, or missing for the baseline itself: the ``significant``
    column of the long form). The baseline's own cells are empty. PyTerrier calls
    the last three ``<m> p-value``, ``<m> p-value corrected`` and ``<m> reject``.

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
        columns[measure] = part["mean"].to_numpy(dtype=float)
        if has_baseline:
            columns[f"{measure} delta"] = part["delta"].to_numpy(dtype=float)
            columns[f"{measure} +"] = pd.array(part["improved"], dtype="Int64")
            columns[f"{measure} -"] = pd.array(part["degraded"], dtype="Int64")
            columns[f"{measure} p"] = part["p_value"].to_numpy(dtype=float)
            columns[f"{measure} p corr"] = part["p_corrected"].to_numpy(dtype=float)
            columns[f"{measure} sig"] = pd.array(
                [None if flag is None else bool(flag) for flag in part["significant"]],
                dtype="boolean",
            )
    # built in one step: a column at a time fragments a frame of many measures
    return pd.DataFrame(columns)
