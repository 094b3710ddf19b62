"""A gate's check stored (``regress_checks``, ``regress_verdicts``, ``regress_drift``) in one
transaction, and removed; the evaluations a gate that fails computed, removed with it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from ..backends.base import store_of
from ..columns import VERDICT_COLUMNS
from .baselines import store_reference
from .drift import store_drift_rows


def remove_check(wh, check_id: int) -> None:
    """Delete a stored check and its verdicts (``regress`` removes its own check when its
    report file cannot be written: history never shows a gate whose report CI lacked)."""
    with store_of(wh).transaction() as conn:
        for table in ("regress_verdicts", "regress_drift"):
            conn.execute(f"DELETE FROM {table} WHERE check_id = :id", {"id": int(check_id)})
        conn.execute("DELETE FROM regress_checks WHERE id = :id", {"id": int(check_id)})


@contextmanager
def forgotten_on_failure(wh) -> Iterator[list[int]]:
    """A list for the block to note the evaluations it computed (not reused) in; when the
    block raises, they are deleted and the error goes on: a gate that stops (a baseline on
    other inputs, no baseline) leaves the warehouse as it found it."""
    computed: list[int] = []
    try:
        yield computed
    except (Exception, KeyboardInterrupt):
        if computed:
            ids = {"ids": sorted(set(computed))}
            with store_of(wh).transaction() as conn:
                conn.execute("DELETE FROM evaluation_values WHERE evaluation_id = ANY(:ids)", ids)
                conn.execute("DELETE FROM evaluations WHERE id = ANY(:ids)", ids)
        raise


def computed_ids(rows: list[dict[str, Any]]) -> list[int]:
    """The evaluations of evaluate's ``rows`` that it computed rather than reused."""
    return [int(row["evaluation_id"]) for row in rows if not row["reused"]]


_CHECK_COLUMNS = (
    "run_id, baseline_run_id, baseline_spec, qrels_id, test, correction, alpha, max_drop, "
    "relative, options, passed, created_at, baseline_name, mode, level, input_change"
)
#: What ``regress_verdicts`` keeps of each verdict row: all but what follows from the rest
#: (the drop, the tolerance as given, the significance flag).
_VERDICT_STORED = [c for c in VERDICT_COLUMNS if c not in ("drop", "tolerance", "significant")]


def store_check(
    store,
    run_row: dict[str, Any],
    baseline_row: dict[str, Any] | None,
    baseline_spec: Any,
    qrels_row: dict[str, Any],
    settings: dict[str, Any],
    rows: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    passed: bool,
    input_change: str | None,
    reference: dict[str, Any] | None = None,
) -> int:
    """Store the check, its verdicts and drift rows, and the reference it pinned (one
    transaction); returns the check's id."""
    verdicts, drift = rows
    spec = baseline_spec if isinstance(baseline_spec, str | int) else "dataframe"
    kept = ("test", "correction", "alpha", "max_drop", "relative", "mode", "level")
    extra = {k: v for k, v in settings.items() if k not in kept}
    values = ", ".join(":" + name for name in _CHECK_COLUMNS.split(", "))
    with store.transaction() as conn:
        check_id = conn.execute(
            f"INSERT INTO regress_checks ({_CHECK_COLUMNS}) VALUES ({values}) RETURNING id",
            {
                "run_id": int(run_row["id"]),
                "baseline_run_id": None if baseline_row is None else int(baseline_row["id"]),
                "baseline_name": None if baseline_row is None else baseline_row["name"],
                "baseline_spec": str(spec),
                "qrels_id": int(qrels_row["id"]),
                "test": settings["test"],
                "correction": settings["correction"],
                "alpha": float(settings["alpha"]),
                # NaN: the margins were calibrated (no default margin was given)
                "max_drop": float("nan")
                if settings["max_drop"] is None
                else float(settings["max_drop"]),
                "relative": bool(settings["relative"]),
                "options": json.dumps(extra, sort_keys=True),
                "passed": bool(passed),
                "created_at": datetime.now(UTC).replace(tzinfo=None),
                "mode": settings["mode"],
                "level": float(settings["level"]),
                "input_change": input_change,
            },
        ).scalar_one()
        if verdicts:
            conn.execute(
                f"INSERT INTO regress_verdicts (check_id, {', '.join(_VERDICT_STORED)}) "
                f"VALUES (:check_id, {', '.join(':' + n for n in _VERDICT_STORED)})",
                [
                    {"check_id": check_id, **{n: row[n] for n in _VERDICT_STORED}}
                    for row in verdicts
                ],
            )
        store_drift_rows(conn, check_id, drift)
        if reference is not None:
            store_reference(conn, reference)
    return int(check_id)
