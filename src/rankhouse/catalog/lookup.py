"""Which qrels sets and runs the warehouse holds: listing them and finding one by name, alias
or id.

An alias is another name of a stored run or qrels set (``run_aliases``, ``qrels_aliases``:
migration 0014): ``ingest run FILE --name X`` of content already stored under another name
makes ``X`` one, and every lookup of a name takes it for that run. A name is a run's own name
or an alias, never both.

Plain SQL with bound parameters (no DuckDB-only syntax), so it works on any backend. Every
function takes the warehouse (a :class:`~rankhouse.Warehouse`) or its store.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

from ..backends.base import store_of
from ..errors import Either, Message, NotFoundError
from ..rows import Rows, fetched

if TYPE_CHECKING:
    import pandas as pd

    from ..backends.base import Connection

_RUN_COLUMNS = (
    "id, name, system_tag, num_queries, num_rows, order_by, ingested_at, source, "
    "content_sha256, parse_options, metadata"
)
_QRELS_COLUMNS = (
    "id, name, num_queries, num_judgments, num_relevant, min_grade, max_grade, ingested_at, "
    "source, content_sha256, parse_options"
)


class _Tables(NamedTuple):
    aliases: str  # the alias table
    column: str  # its column holding the id of what it names
    named: str  # the catalogue table of what it names
    label: str  # how a message calls one of those


TABLES = {
    "run": _Tables("run_aliases", "run_id", "runs", "run"),
    "qrels": _Tables("qrels_aliases", "qrels_id", "qrels_sets", "qrels set"),
}
"""The alias table of each kind (``"run"``, ``"qrels"``) of stored content."""

KIND_OF_TABLE = {"runs": "run", "qrels_sets": "qrels"}
"""The kind whose content a catalogue table holds."""


def alias_target(conn: Connection, kind: str, name: str) -> int | None:
    """The id of the run or qrels set that ``name`` is an alias of, or None."""
    tables = TABLES[kind]
    found = conn.execute(
        f"SELECT {tables.column} FROM {tables.aliases} WHERE name = :name", {"name": str(name)}
    ).scalar()
    return None if found is None else int(found)


def aliases_of(conn: Connection, kind: str, item_id: int) -> list[str]:
    """The aliases of a run or qrels set, oldest first."""
    tables = TABLES[kind]
    return [
        str(name)
        for name in conn.execute(
            f"SELECT name FROM {tables.aliases} WHERE {tables.column} = :id "
            "ORDER BY created_at, name",
            {"id": int(item_id)},
        ).scalars()
    ]


def aliases_column(kind: str, outer: str) -> str:
    """A SQL expression of the aliases of each row of the catalogue table ``outer`` (runs
    or qrels_sets, as its name in the query), joined by ``', '`` (empty: none)."""
    tables = TABLES[kind]
    return (
        f"coalesce((SELECT string_agg(a.name, ', ' ORDER BY a.created_at, a.name) "
        f"FROM {tables.aliases} a WHERE a.{tables.column} = {outer}.id), '')"
    )


def real_name(conn: Connection, kind: str, name: str) -> str:
    """The own name of the run or qrels set that ``name`` is an alias of, else ``name``."""
    target = alias_target(conn, kind, name)
    if target is None:
        return name
    tables = TABLES[kind]
    return str(
        conn.execute(f"SELECT name FROM {tables.named} WHERE id = :id", {"id": target}).scalar()
    )


def list_runs(wh) -> pd.DataFrame:
    """All stored runs, oldest first (id, name, system_tag, num_queries, num_rows, ...,
    ``aliases``: the run's other names joined by ``', '``, empty when none)."""
    return run_rows(wh).frame()


def run_rows(wh) -> Rows:
    """:func:`list_runs` as plain rows."""
    with store_of(wh).connect() as conn:
        return fetched(
            conn.execute(
                f"SELECT {_RUN_COLUMNS}, {aliases_column('run', 'runs')} AS aliases "
                "FROM runs ORDER BY id"
            )
        )


def list_qrels(wh) -> pd.DataFrame:
    """All stored qrels sets, oldest first (id, name, num_queries, num_judgments, ...,
    ``aliases``: the set's other names joined by ``', '``, empty when none)."""
    return qrels_rows(wh).frame()


def qrels_rows(wh) -> Rows:
    """:func:`list_qrels` as plain rows."""
    with store_of(wh).connect() as conn:
        return fetched(
            conn.execute(
                f"SELECT {_QRELS_COLUMNS}, {aliases_column('qrels', 'qrels_sets')} AS aliases "
                "FROM qrels_sets ORDER BY id"
            )
        )


def other_names(wh, kind: str, item_id: int) -> list[str]:
    """The other names (aliases) of the run (``kind`` ``"run"``) or qrels set ``item_id``,
    oldest first."""
    with store_of(wh).connect() as conn:
        return aliases_of(conn, kind, item_id)


def find(conn: Connection, table: str, columns: str, name_or_id: str | int, label: str):
    """A catalogue row of ``table`` by name, else by alias, else by id (a name or alias that
    looks like a number wins); raises NotFoundError naming ``label``."""
    row = (
        conn.execute(f"SELECT {columns} FROM {table} WHERE name = :name", {"name": str(name_or_id)})
        .mappings()
        .first()
    )
    if row is None:
        tables = TABLES[KIND_OF_TABLE[table]]
        row = (
            conn.execute(
                f"SELECT {columns} FROM {table} WHERE id IN (SELECT {tables.column} FROM "
                f"{tables.aliases} WHERE name = :name)",
                {"name": str(name_or_id)},
            )
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
