"""Removing a run or a qrels set with everything made from it (evaluations, gate checks,
order drift).

The ``delete_*`` functions work inside the caller's transaction (a ``--replace`` ingest
deletes what it overwrites); ``remove_*`` are the verbs, one transaction each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..backends.base import store_of
from .lookup import _QRELS_COLUMNS, _RUN_COLUMNS, find

if TYPE_CHECKING:
    from ..backends.sql import Connection


def _delete_evaluations(conn: Connection, column: str, value: int) -> None:
    conn.execute(
        (
            "DELETE FROM evaluation_values WHERE evaluation_id IN "
            f"(SELECT id FROM evaluations WHERE {column} = :value)"
        ),
        {"value": value},
    )
    conn.execute(f"DELETE FROM evaluations WHERE {column} = :value", {"value": value})


def _delete_checks(conn: Connection, column: str, value: int) -> None:
    conn.execute(
        (
            "DELETE FROM regress_verdicts WHERE check_id IN "
            f"(SELECT id FROM regress_checks WHERE {column} = :value)"
        ),
        {"value": value},
    )
    conn.execute(f"DELETE FROM regress_checks WHERE {column} = :value", {"value": value})


def _delete_drift(conn: Connection, run_id: int) -> None:
    """The run's order drift, from a baseline or as another run's baseline (a drift is a
    pair of rankings: one gone, it cannot be computed again)."""
    chosen = "SELECT id FROM drift_evaluations WHERE run_id = :id OR baseline_run_id = :id"
    conn.execute(f"DELETE FROM drift_values WHERE drift_id IN ({chosen})", {"id": run_id})
    conn.execute(
        "DELETE FROM drift_evaluations WHERE run_id = :id OR baseline_run_id = :id", {"id": run_id}
    )


def delete_run(conn: Connection, run_id: int) -> None:
    """Delete a run, its rows, its evaluations, its gate checks and its order drift (the
    caller's transaction).

    Checks that used the run as their baseline belong to other runs: they stay, with the
    baseline's name (``regress_results.baseline_deleted`` is then true).
    """
    _delete_checks(conn, "run_id", run_id)
    _delete_drift(conn, run_id)
    _delete_evaluations(conn, "run_id", run_id)
    conn.execute("DELETE FROM run_rows WHERE run_id = :id", {"id": run_id})
    conn.execute("DELETE FROM runs WHERE id = :id", {"id": run_id})


def delete_qrels(conn: Connection, qrels_id: int) -> None:
    """Delete a qrels set, its judgments, and the evaluations and gate checks made with it."""
    _delete_checks(conn, "qrels_id", qrels_id)
    _delete_evaluations(conn, "qrels_id", qrels_id)
    conn.execute("DELETE FROM judgments WHERE qrels_id = :id", {"id": qrels_id})
    conn.execute("DELETE FROM qrels_sets WHERE id = :id", {"id": qrels_id})


def remove_run(wh, name_or_id: str | int) -> dict:
    """Delete a run by name or id with its rows, evaluations and checks; returns its row.

    Raises:
        NotFoundError: no such run.
    """
    with store_of(wh).transaction() as conn:
        row = find(conn, "runs", _RUN_COLUMNS, name_or_id, "run")
        delete_run(conn, row["id"])
    return row


def remove_qrels(wh, name_or_id: str | int) -> dict:
    """Delete a qrels set by name or id, with its judgments and evaluations; returns its row.

    Raises:
        NotFoundError: no such qrels set.
    """
    with store_of(wh).transaction() as conn:
        row = find(conn, "qrels_sets", _QRELS_COLUMNS, name_or_id, "qrels set")
        delete_qrels(conn, row["id"])
    return row
