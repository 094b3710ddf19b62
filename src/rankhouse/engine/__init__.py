"""Compute measures in DuckDB: per-query values, then trec_eval's aggregates.

:func:`compute` (:mod:`.computing`) builds the shared ranking once, then runs each needed
family file once per group of measures that differ only in the family's key parameter. Every
value lands in the temporary table ``rh_values`` on the connection, where the caller stores
it (``INSERT ... SELECT``), aggregates it (:meth:`Values.aggregates`, adding in query-id byte
order as trec_eval does) or fetches it (:mod:`.values`).

The engine always runs on a DuckDB connection: a warehouse file itself, the local workspace
of a server warehouse, or one of its own in-memory databases (:mod:`.values`, made by
:mod:`rankhouse.scratch`).
"""

from ..duck import BOUND_VARIABLE, ENGINE_TABLES, SCRATCH_MEMORY_LIMIT, memory_limit
from .computing import MISSING_QUERIES, check_settings, compute, load_files
from .values import (
    GMEAN_FLOOR,
    PER_QUERY_COLUMNS,
    VALUES_TABLE,
    Aggregate,
    Values,
    aggregate,
    scratch_cursor,
    scratch_database,
)

__all__ = [
    "BOUND_VARIABLE",
    "ENGINE_TABLES",
    "GMEAN_FLOOR",
    "MISSING_QUERIES",
    "PER_QUERY_COLUMNS",
    "SCRATCH_MEMORY_LIMIT",
    "VALUES_TABLE",
    "Aggregate",
    "Values",
    "aggregate",
    "check_settings",
    "compute",
    "load_files",
    "memory_limit",
    "scratch_cursor",
    "scratch_database",
]
