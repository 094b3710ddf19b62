"""The default store: a warehouse in a DuckDB file (:class:`DuckDBFile`)."""

from .store import DUCKDB_PREFIX, DuckDBFile, connect_file, database_key, duckdb_config

__all__ = ["DUCKDB_PREFIX", "DuckDBFile", "connect_file", "database_key", "duckdb_config"]
