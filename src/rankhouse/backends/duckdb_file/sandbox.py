"""What a read-only DuckDB warehouse connection may do: read the warehouse, and nothing else.

``rankhouse sql`` without ``--write`` (and every command under ``--read-only``) opens the file
with :data:`READ_ONLY_CONFIG`. DuckDB then refuses, with an error the CLI prints as one line:

* any change to the file (``CREATE``, ``DROP``, ``ALTER``, ``INSERT``, ``UPDATE``, ``DELETE``):
  the connection is read-only;
* any file or network access (``COPY ... TO``, ``EXPORT DATABASE``, ``ATTACH``, ``read_csv``,
  ``read_text``, ``read_parquet``, ``glob``, ``INSTALL``, ``LOAD`` of an extension file): external
  access is off;
* any change of a setting (``SET``, ``RESET``, ``PRAGMA threads=...``), including switching the
  two above back on: the configuration is locked for the connection's life.

Temporary tables and macros (in memory, gone at exit) and DuckDB's built-in functions remain.
``--write`` opens the file as every writing command does: all of DuckDB, files included.
"""

from __future__ import annotations

#: DuckDB configuration of a read-only warehouse connection (with ``read_only=True``), on top
#: of :data:`rankhouse.defaults.DUCKDB_CONFIG` (which already keeps extensions from being
#: installed or loaded on their own, on every connection).
READ_ONLY_CONFIG: dict[str, object] = {
    "enable_external_access": False,
    "lock_configuration": True,  # last: nothing above can be switched back with SET
}
