"""The catalogue: which qrels sets and runs the warehouse holds, and removing them.

Plain SQL with bound parameters (no DuckDB-only syntax), so it works on any backend.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .errors import Either, Message, NotFoundError
from .rows import Rows, fetched

if TYPE_CHECKING:
    import pandas as pd

    from .db import Connection
    from .warehouse import Warehouse

_RUN_COLUMNS = (
    "id, name, system_tag, num_queries, num_rows, order_by, ingested_at, source, "
    "content_sha256, parse_options, metadata"
)
_QRELS_COLUMNS = (
    "id, name, num_queries, num_judgments, num_relevant, min_grade, max_grade, ingested_at, "
    "source, content_sha256, parse_options"
)


def list_runs(wh: Warehouse) -> pd.DataFrame:
    """All stored runs, oldest first (id, name, system_tag, num_queries, num_rows, ...)."""
    return run_rows(wh).frame()


def run_rows(wh: Warehouse) -> Rows:
    """:func:`list_runs` as plain rows."""
    with wh.connect() as conn:
        return fetched(conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY id"))


def list_qrels(wh: Warehouse) -> pd.DataFrame:
    """All stored qrels sets, oldest first (id, name, num_queries, num_judgments, ...)."""
    return qrels_rows(wh).frame()


def qrels_rows(wh: Warehouse) -> Rows:
    """:func:`list_qrels` as plain rows."""
    with wh.connect() as conn:
        return fetched(conn.execute(f"SELECT {_QRELS_COLUMNS} FROM qrels_sets ORDER BY id"))


def _find(conn: Connection, table: str, columns: str, name_or_id: str | int, label: str):
    """A catalogue row by name, else by id (a name that looks like a number wins)."""
    row = (
        conn.execute(f"SELECT {columns} FROM {table} WHERE name = :name", {"name": str(name_or_id)})
        .mappings()
        .first()
    )
    if row is None and str(name_or_id).strip().lstrip("-").isdigit():
        row = (
            conn.execute(f"SELECT {columns} FROM {table} WHERE id = :id", {"id": int(name_or_id)})
            .mappings()
            .first()
        )
    if row is None:
        listing = Either(
            python=f"Warehouse.{'runs' if label == 'run' else 'qrels_sets'}() lists",
            cli=f"'rankhouse {'runs' if label == 'run' else 'qrels'} list' shows",
        )
        raise NotFoundError(
            Message(f"no {label} named {str(name_or_id)!r}; ", listing, " what is stored")
        )
    return dict(row)


def get_run(wh: Warehouse, name_or_id: str | int) -> dict:
    """One run's catalogue row by name or id; ``metadata`` is decoded into a dict.

    Raises:
        NotFoundError: no such run.
    """
    with wh.connect() as conn:
        row = _find(conn, "runs", _RUN_COLUMNS, name_or_id, "run")
    row["metadata"] = json.loads(row["metadata"])
    return row


def get_qrels(wh: Warehouse, name_or_id: str | int) -> dict:
    """One qrels set's catalogue row by name or id.

    Raises:
        NotFoundError: no such qrels set.
    """
    with wh.connect() as conn:
        return _find(conn, "qrels_sets", _QRELS_COLUMNS, name_or_id, "qrels set")


def run_query_counts(wh: Warehouse, name_or_id: str | int) -> pd.DataFrame:
    """Rows per query of one run: DataFrame[query_id, num_rows] in query byte order."""
    return query_count_rows(wh, name_or_id).frame()


def query_count_rows(wh: Warehouse, name_or_id: str | int) -> Rows:
    """:func:`run_query_counts` as plain rows."""
    run = get_run(wh, name_or_id)
    with wh.connect() as conn:
        return fetched(
            conn.execute(
                (
                    "SELECT query_id, count(*) AS num_rows FROM run_rows WHERE run_id = :id "
                    "GROUP BY query_id ORDER BY query_id"
                ),
                {"id": run["id"]},
            )
        )


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


def delete_run(conn: Connection, run_id: int) -> None:
    """Delete a run, its rows, its evaluations and its gate checks (caller's transaction).

    Checks that used the run as their baseline belong to other runs: they stay, with the
    baseline's name (``regress_results.baseline_deleted`` is then true).
    """
    _delete_checks(conn, "run_id", run_id)
    _delete_evaluations(conn, "run_id", run_id)
    conn.execute("DELETE FROM run_rows WHERE run_id = :id", {"id": run_id})
    conn.execute("DELETE FROM runs WHERE id = :id", {"id": run_id})


def delete_qrels(conn: Connection, qrels_id: int) -> None:
    """Delete a qrels set, its judgments, and the evaluations and gate checks made with it."""
    _delete_checks(conn, "qrels_id", qrels_id)
    _delete_evaluations(conn, "qrels_id", qrels_id)
    conn.execute("DELETE FROM judgments WHERE qrels_id = :id", {"id": qrels_id})
    conn.execute("DELETE FROM qrels_sets WHERE id = :id", {"id": qrels_id})


def remove_run(wh: Warehouse, name_or_id: str | int) -> dict:
    """Delete a run by name or id with its rows, evaluations and checks; returns its row.

    Raises:
        NotFoundError: no such run.
    """
    with wh.transaction() as conn:
        row = _find(conn, "runs", _RUN_COLUMNS, name_or_id, "run")
        delete_run(conn, row["id"])
    return row


def remove_qrels(wh: Warehouse, name_or_id: str | int) -> dict:
    """Delete a qrels set by name or id, with its judgments and evaluations; returns its row.

    Raises:
        NotFoundError: no such qrels set.
    """
    with wh.transaction() as conn:
        row = _find(conn, "qrels_sets", _QRELS_COLUMNS, name_or_id, "qrels set")
        delete_qrels(conn, row["id"])
    return row
