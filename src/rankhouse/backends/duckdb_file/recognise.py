"""Is a DuckDB database a whole rankhouse warehouse? Asked each time a file is opened, and cheap.

* :func:`holds_nothing`: a file DuckDB has just created (no block written, an empty log), asked of
  its storage rather than its catalogue.
* :func:`recognise`: the warehouse's tables and views, and whether they are the whole newest
  schema (every table with each of its columns, every view binding), from one statement that
  reads nothing.
* :func:`check_whole`: what a warehouse that is not whole lacks (a table, a view, a column, or
  a view that no longer reads its tables), said in one error.
"""

from __future__ import annotations

from ...duck import duckdb
from ...errors import SchemaError, first_line
from ..opening import (
    COLUMNS_QUERY,
    OBJECTS_QUERY,
    check_complete,
    expected_columns,
    expected_objects,
)
from ..sql import Connection


def object_names(conn: Connection) -> list[str]:
    """The tables and views of the warehouse's own schema, in lower case
    (:func:`recognise`)."""
    return recognise(conn)[0]


def recognise(conn: Connection) -> tuple[list[str], bool]:
    """The tables and views of the warehouse's own schema, in lower case, and whether they
    are the whole newest schema: every table with each of its columns, every view binding.

    A whole warehouse is recognised by one statement that names every object and every
    column of its tables, and reads nothing. Listing the catalogue with
    :data:`~rankhouse.backends.opening.OBJECTS_QUERY` would make DuckDB build its system
    views first: 10-15 ms at the first query of a process, a twentieth of an ``eval``
    served from storage. When that statement does not bind (a new, older, damaged or
    foreign database), the catalogue is listed.
    """
    try:
        conn.execute_raw(_WHOLE_SCHEMA)
    except duckdb.Error:
        return [row[0].lower() for row in conn.execute(OBJECTS_QUERY)], False
    return sorted(expected_objects("duckdb")), True


def _whole_schema() -> str:
    columns = ", ".join(
        f'"{table}"."{column}"'
        for table, names in expected_columns("duckdb").items()
        for column in names
    )
    return f"SELECT {columns} FROM {', '.join(sorted(expected_objects('duckdb')))} LIMIT 0"


_WHOLE_SCHEMA = _whole_schema()


def check_whole(where: str, conn: Connection, names: list[str]) -> None:
    """Name what a warehouse that :func:`recognise` did not find whole lacks: a table or view,
    a column, or a view that no longer reads its tables.

    Raises:
        SchemaError: the warehouse is damaged.
    """
    check_complete(where, names, "duckdb")
    check_complete(where, names, "duckdb", conn.execute(COLUMNS_QUERY).all())
    for view in sorted(expected_objects("duckdb") - set(expected_columns("duckdb"))):
        try:
            conn.execute_raw(f"SELECT * FROM {view} LIMIT 0")
        except duckdb.Error as exc:
            raise SchemaError(
                f"the warehouse {where} is damaged: the view {view} no longer reads its "
                f"tables ({first_line(exc)}; changed outside rankhouse?); restore the file "
                "from a copy, or ingest again into a new warehouse"
            ) from None


def holds_nothing(conn: Connection) -> bool:
    """Whether the DuckDB file under ``conn`` holds nothing at all: no block written and
    nothing in its write-ahead log, as a file DuckDB has just created.

    Asked of DuckDB's storage rather than its catalogue: on a new file, the statement that
    :func:`object_names` tries first fails, and a failed name lookup, like a first
    listing of the catalogue, costs DuckDB about 10 ms. Only for a file: an in-memory database
    reports no blocks whatever it holds.
    """
    blocks, wal = conn.execute_raw(
        "SELECT total_blocks, wal_size FROM pragma_database_size() "
        "WHERE database_name = current_database()"
    ).one()
    return blocks == 0 and wal == "0 bytes"
