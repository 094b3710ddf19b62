"""The gate's order-drift bounds: ``--max-drift rbo@100:0.9`` fails the gate when the mean
drift of the run from its baseline is below the bound.

A bound is ``measure@k:least``: ``rbo`` (extrapolated rank-biased overlap, persistence 0.9),
``tau`` or ``kendall_tau`` (Kendall's tau of the documents both top k hold), ``tau_ap``, or
``overlap`` (|shared| / k); ``@k`` defaults to 100. The drift is computed once and stored as
``compare --drift`` stores it (:mod:`rankhouse.compare.drift`); a mean that cannot be
computed (no query where both tau are defined) fails.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..compare.drift import run_drift
from ..errors import InputError
from ..stats import DEFAULT_DEPTH, DEFAULT_PERSISTENCE

DRIFT_GATE_COLUMNS = ("measure", "k", "p", "value", "bound", "num_q", "drift_id", "passed")
"""Columns of a gate's drift rows (``RegressResult.drift_rows``, table ``regress_drift``)."""

_NAMES = {"rbo": "rbo", "tau": "kendall_tau", "kendall_tau": "kendall_tau"}
_NAMES |= {"tau_ap": "tau_ap", "overlap": "overlap"}
_BOUND = re.compile(r"^\s*(?P<name>[a-z_]+)\s*(?:@\s*(?P<k>\d+))?\s*:\s*(?P<bound>[-+0-9.eE]+)\s*$")


@dataclass(frozen=True)
class DriftBound:
    """One ``--max-drift``: the drift measure, its depth and the least mean that passes."""

    measure: str
    k: int
    bound: float

    @property
    def text(self) -> str:
        return f"{self.measure}@{self.k}"


def drift_bounds(given: Iterable[str] | str | None) -> list[DriftBound]:
    """``rbo@100:0.9`` texts as bounds.

    Raises:
        InputError: a text that is not ``measure@k:bound`` with a known drift measure, k at
            least 1 and a bound within the measure's range.
    """
    found = []
    for text in [given] if isinstance(given, str) else list(given or []):
        match = _BOUND.match(str(text))
        name = _NAMES.get(match.group("name")) if match else None
        try:
            bound = float(match.group("bound")) if match else math.nan
        except ValueError:
            bound = math.nan
        k = int(match.group("k") or DEFAULT_DEPTH) if match else 0
        least = -1.0 if name in ("kendall_tau", "tau_ap") else 0.0
        if name is None or k < 1 or not least <= bound <= 1:
            raise InputError(
                f"--max-drift {text!r} is not a drift bound",
                hint="write measure@k:bound, e.g. rbo@100:0.9 (rbo, tau, tau_ap or overlap; "
                "bounds from 0 to 1, from -1 for the two tau)",
            )
        found.append(DriftBound(name, k, bound))
    return found


def drift_checks(store, run_id: int, baseline_id: int, bounds: list[DriftBound]) -> list[dict]:
    """One row (:data:`DRIFT_GATE_COLUMNS`) per bound: the run's mean drift from the
    baseline, computed once and stored, and whether it is at least the bound."""
    rows = []
    for bound in bounds:
        stored = run_drift(store, run_id, baseline_id, k=bound.k, p=DEFAULT_PERSISTENCE)
        means = stored.means()
        value = means.value(bound.measure)
        rows.append(
            {
                "measure": bound.text,
                "k": bound.k,
                "p": DEFAULT_PERSISTENCE,
                "value": value,
                "bound": bound.bound,
                "num_q": means.num_tau if "tau" in bound.measure else means.num_q,
                "drift_id": stored.drift_id,
                "passed": not math.isnan(value) and value >= bound.bound,
            }
        )
    return rows


def store_drift_rows(conn, check_id: int, rows: list[dict[str, Any]]) -> None:
    """The drift rows of a check into ``regress_drift`` (the caller's transaction)."""
    for row in rows:
        conn.execute(
            "INSERT INTO regress_drift (check_id, measure, k, p, value, bound, num_q, "
            "drift_id, passed) VALUES (:check_id, :measure, :k, :p, :value, :bound, :num_q, "
            ":drift_id, :passed)",
            {
                "check_id": int(check_id),
                **row,
                "value": None if math.isnan(row["value"]) else row["value"],
            },
        )
