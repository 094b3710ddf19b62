"""Compute measures in DuckDB: per-query values, then trec_eval's aggregates.

:func:`compute` (:mod:`.computing`) builds the shared ranking once, then runs each needed
family file once per group of measures that differ only in the family's key parameter. Every
value lands in the temporary table ``rh_values`` on the connection, where the caller stores
it (``INSERT ... SELECT``), aggregates it (:meth:`Values.aggregates`, adding in query-id byte
order as trec_eval does) or fetches it (:mod:`.values`).

The engine always runs on a DuckDB connection: a warehouse file itself, the local workspace
of a server warehouse, or one of its own in-memory databases (:mod:`.values`, made by
:mod:`rankhouse.duck`).

Each name below is imported from its module at its first use
(:func:`rankhouse.lazy.package_names`).
"""

from ..lazy import package_names

_MODULES = {
    "..duck": ("BOUND_VARIABLE", "ENGINE_TABLES", "SCRATCH_MEMORY_LIMIT", "memory_limit"),
    ".computing": (
        "DEFAULT_JUDGED_K",
        "JUDGED_SHARES_SQL",
        "JUDGED_TABLE",
        "MISSING_QUERIES",
        "check_settings",
        "compute",
        "judged_cutoff",
        "judged_shares",
        "load_files",
    ),
    ".values": (
        "GMEAN_FLOOR",
        "PER_QUERY_COLUMNS",
        "VALUES_TABLE",
        "Aggregate",
        "Values",
        "aggregate",
        "scratch_cursor",
        "scratch_database",
    ),
}

__getattr__ = package_names(__name__, _MODULES)
__all__ = sorted(name for names in _MODULES.values() for name in names)
