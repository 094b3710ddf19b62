"""Which qrels sets and runs the warehouse holds: listing them and finding one by name or id.

Plain SQL with bound parameters (no DuckDB-only syntax), so it works on any backend. Every
function takes the warehouse (a :class:`~rankhouse.Warehouse`) or its store.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..backends.base import store_of
from ..errors import Either, Message, NotFoundError
from ..rows import Rows, fetched

if TYPE_CHECKING:
    import pandas as pd

    from ..backends.sql import Connection

_RUN_COLUMNS = (
    "id, name, system_tag, num_queries, num_rows, order_by, ingested_at, source, "
    "content_sha256, parse_options, metadata"
)
_QRELS_COLUMNS = (
    "id, name, num_queries, num_judgments, num_relevant, min_grade, max_grade, ingested_at, "
    "source, content_sha256, parse_options"
)


def list_runs(wh) -> pd.DataFrame:
    """All stored runs, oldest first (id, name, system_tag, num_queries, num_rows, ...)."""
    return run_rows(wh).frame()


def run_rows(wh) -> Rows:
    """:func:`list_runs` as plain rows."""
    with store_of(wh).connect() as conn:
        return fetched(conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY id"))


def list_qrels(wh) -> pd.DataFrame:
    """All stored qrels sets, oldest first (id, name, num_queries, num_judgments, ...)."""
    return qrels_rows(wh).frame()


def qrels_rows(wh) -> Rows:
    """:func:`list_qrels` as plain rows."""
    with store_of(wh).connect() as conn:
        return fetched(conn.execute(f"SELECT {_QRELS_COLUMNS} FROM qrels_sets ORDER BY id"))


def find(conn: Connection, table: str, columns: str, name_or_id: str | int, label: str):
    """A catalogue row of ``table`` by name, else by id (a name that looks like a number
    wins); raises NotFoundError naming ``label``."""
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


def get_run(wh, name_or_id: str | int) -> dict:
    """One run's catalogue row by name or id; ``metadata`` is decoded into a dict.

    Raises:
        NotFoundError: no such run.
    """
    with store_of(wh).connect() as conn:
        row = find(conn, "runs", _RUN_COLUMNS, name_or_id, "run")
    row["metadata"] = json.loads(row["metadata"])
    return row


def get_qrels(wh, name_or_id: str | int) -> dict:
    """One qrels set's catalogue row by name or id.

    Raises:
        NotFoundError: no such qrels set.
    """
    with store_of(wh).connect() as conn:
        return find(conn, "qrels_sets", _QRELS_COLUMNS, name_or_id, "qrels set")


def run_query_counts(wh, name_or_id: str | int) -> pd.DataFrame:
    """Rows per query of one run: DataFrame[query_id, num_rows] in query byte order."""
    return query_count_rows(wh, name_or_id).frame()


def query_count_rows(wh, name_or_id: str | int) -> Rows:
    """:func:`run_query_counts` as plain rows."""
    run = get_run(wh, name_or_id)
    with store_of(wh).connect() as conn:
        return fetched(
            conn.execute(
                (
                    "SELECT query_id, count(*) AS num_rows FROM run_rows WHERE run_id = :id "
                    "GROUP BY query_id ORDER BY query_id"
                ),
                {"id": run["id"]},
            )
        )
