"""Default values shared by the library's signatures and the CLI (light: no heavy imports)."""

DEFAULT_PERMUTATIONS = 10_000
"""Resamples of the randomization and bootstrap tests."""

DEFAULT_SEED = 42
"""Seed of the randomization and bootstrap tests."""

DB_ENV_VAR = "RANKHOUSE_DB"
"""The environment variable that names the warehouse when ``--db`` does not."""

DUCKDB_CONFIG = {"default_collation": "", "disabled_compression_methods": "fsst"}
"""DuckDB settings of every database rankhouse opens (warehouse files and the engine's
in-memory ones). Ordering stays byte-wise (trec_eval breaks ties by strcmp of doc ids); FSST
string compression cost a quarter of a 7-million-row ingest and made the file no smaller
(document ids are short; dictionary compression stays)."""
