"""A DuckDB connection as the warehouse's SQL sees it (a :class:`..base.Connection`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...duck import duckdb, to_duckdb
from ..base import Connection, Result, text_of


class DuckDBConnection(Connection):
    """A DuckDB connection (the warehouse file's, or an in-memory one).

    Attributes:
        duck: the ``duckdb.DuckDBPyConnection`` itself, for DuckDB's readers and bulk moves.
    """

    dialect = "duckdb"

    def __init__(self, duck) -> None:
        self.duck = duck
        self.in_transaction = False

    def execute(self, sql: Any, params: Mapping[str, Any] | None = None) -> Result:
        text, names = to_duckdb(text_of(sql))
        if isinstance(params, list):  # one statement per parameter set
            for one in params:
                self.duck.execute(text, {name: one[name] for name in names})
            return Result((), ())
        if names:
            self.duck.execute(text, {name: (params or {})[name] for name in names})
        else:
            self.duck.execute(text)
        return self._fetched()

    def _fetched(self) -> Result:
        description = self.duck.description
        if description is None:
            return Result((), ())
        return Result([column[0] for column in description], self.duck.fetchall())

    def execute_script(self, sql: str) -> None:
        self.duck.execute(sql)

    def execute_raw(self, sql: str) -> Result:
        self.duck.execute(sql)
        return self._fetched()

    def stream_raw(self, sql: str, batch_rows: int = 10_000):
        self.duck.execute(sql)  # DuckDB streams a query's result: fetchmany reads on
        description = self.duck.description
        if description is None:
            return None

        def batches() -> Iterator[list[tuple]]:
            while batch := self.duck.fetchmany(batch_rows):
                yield batch

        return [column[0] for column in description], batches()

    def has_table(self, name: str) -> bool:
        if not self.in_transaction:
            bound = self._binds(name)
            if bound is not None:
                return bound
        found = self.duck.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = $n AND NOT temporary "
            "AND database_name = current_database() AND schema_name = current_schema()",
            {"n": name},
        ).fetchone()[0]
        if found:
            return True
        return bool(
            self.duck.execute(
                "SELECT count(*) FROM duckdb_views() WHERE view_name = $n AND NOT temporary "
                "AND database_name = current_database() AND schema_name = current_schema()",
                {"n": name},
            ).fetchone()[0]
        )

    def _binds(self, name: str) -> bool | None:
        """Whether ``name`` names a table or view of the current schema, by reading none of it:
        DuckDB's catalogue functions build its system views at their first call in a process
        (10-15 ms). None when the probe cannot tell. Outside a transaction only, where a
        statement that fails aborts nothing."""
        [where] = self.duck.execute("SELECT current_database(), current_schema()").fetchall()
        quoted = ".".join('"' + part.replace('"', '""') + '"' for part in (*where, name))
        try:
            self.duck.execute(f"SELECT 1 FROM {quoted} LIMIT 0").fetchall()
        except duckdb.CatalogException:  # no table or view of that name there
            return False
        except duckdb.Error:
            return None
        return True

    def commit(self) -> None:
        """Nothing to do outside :meth:`DuckDB.transaction` (DuckDB autocommits)."""
