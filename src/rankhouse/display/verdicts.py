"""A regression check in a notebook: ``Warehouse.regress``'s result shown as its verdicts.

One row per measure (the baseline's mean, the run's, the difference with the interval of the
paired difference, the non-inferiority bound, Hedges' g_z, the queries paired, improved and
degraded, the p-value and the corrected one, the verdict word and the status), a regressed
measure in red, under a caption that gives the verdict as ``rankhouse regress`` prints it
(``PASS``/``FAIL`` with the measures that failed and why) and what its margins mean.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .tables import DEFAULT_ROUND, cell, check_display, digits_for, number, p_value, signed, table

_HEADER = (
    "measure",
    "baseline",
    "run",
    "delta",
    "interval",
    "bound",
    "g_z",
    "n",
    "+",
    "-",
    "p",
    "p corr",
    "verdict",
    "status",
)
_TEXT = {"measure", "verdict", "status"}


def verdicts_html(
    result: Any,
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002 (PyTerrier's name)
) -> str:
    """:class:`~rankhouse.regress.RegressResult` as an HTML table (its verdict as caption)."""
    check_display(round, None)
    caption = " ".join([result.headline, *result.meaning])
    rows = []
    for row in result.verdict_rows:
        digits = digits_for(round, str(row["measure"]))
        tone = ["fail"] if row["fails"] else []
        rows.append(
            "".join(
                [
                    cell(str(row["measure"]), classes=["text"]),
                    cell(number(row["baseline_value"], digits)),
                    cell(number(row["run_value"], digits)),
                    cell(signed(row["delta"], digits), classes=tone),
                    cell(_interval(row, digits)),
                    cell(signed(_shown(row.get("bound")), digits)),
                    cell(signed(_shown(row.get("hedges_gz")), 2)),
                    cell(number(row.get("num_q"), digits)),
                    cell(number(row["improved"], digits)),
                    cell(number(row["degraded"], digits)),
                    cell(p_value(row["p_value"])),
                    cell(p_value(row["p_corrected"])),
                    cell(str(row.get("verdict") or ""), classes=["text"]),
                    cell(str(row["status"]), classes=["text", *tone]),
                ]
            )
        )
    header = "<tr>" + "".join(
        cell(h, tag="th", classes=["text"] if h in _TEXT else []) for h in _HEADER
    )
    return table(header + "</tr>", rows, caption=caption)


def _interval(row: Mapping[str, Any], digits: int) -> str:
    """``[low, high]`` of the paired difference, empty when it has none."""
    low, high = row.get("delta_low"), row.get("delta_high")
    if low is None or high is None or low != low or high != high:  # None or NaN
        return ""
    return f"[{signed(low, digits)}, {signed(high, digits)}]"


def _shown(value: Any) -> Any:
    """None for a value the check has not (NaN: the significance mode has no bound)."""
    return None if value is None or value != value else value
