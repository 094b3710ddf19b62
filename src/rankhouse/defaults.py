"""Default values shared by the library's signatures and the CLI (light: no heavy imports)."""

DEFAULT_PERMUTATIONS = 10_000
"""Resamples of the randomization and bootstrap tests."""

DEFAULT_SEED = 42
"""Seed of the randomization and bootstrap tests."""

MAX_PERMUTATIONS = 1_000_000
"""The most resamples a randomization or bootstrap test (or interval) takes: a p-value's
resolution is then 1e-6, finer than any correction over a few hundred measures needs, and
the resamples take seconds, not hours (each is drawn; memory is bounded by drawing them in
batches)."""

DB_ENV_VAR = "RANKHOUSE_DB"
"""The environment variable that names the warehouse when ``--db`` does not."""

DUCKDB_CONFIG = {
    "default_collation": "",
    "disabled_compression_methods": "fsst",
    "checkpoint_threshold": "1MB",
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}
"""DuckDB settings of every database rankhouse opens (warehouse files and the engine's
in-memory ones). DuckDB never installs or loads an extension on its own: a statement or a
file that needs one it does not hold (a SQLite file given as a warehouse wants
``sqlite_scanner``) fails instead of fetching code from the network; the extensions rankhouse
uses (parquet, json, icu) are built into DuckDB's Python package. Ordering stays byte-wise
(trec_eval breaks ties by strcmp of doc ids); FSST string compression cost a quarter of a
7-million-row ingest and made the file no smaller (document ids are short; dictionary
compression stays). A commit of more than 1 MB of changes
(DuckDB's default: 16 MB) is written into the file at once rather than into the write-ahead
log first and into the file when the warehouse closes: a DL19-size run is then written once
(``eval`` into a new file, 21 alternated pairs: 0.414 s -> 0.401 s; unchanged on the
7-million-line run, whose rows DuckDB writes into the file directly either way)."""
