"""What this release of rankhouse is, what it ships and what it assumes unless told.

* The version (pyproject.toml reads it here; nothing looks up metadata at start-up), and the
  release that brought each schema version of the warehouse.
* The SQL files and migrations that ship inside the package. In a wheel they sit at
  ``rankhouse/sql`` and ``rankhouse/migrations``; in a source checkout (editable install,
  tests run from the repository) they are the repository's top-level ``sql/`` and
  ``migrations/`` folders.
* Default values shared by the library's signatures and the CLI, and DuckDB's settings;
  how a signature's keywords become a verb's options (:func:`packed`).

Every command imports this module (``rankhouse --version`` too): it stays light, with nothing
imported at its top but the standard library's ``functools``.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pathlib import Path

Options = TypeVar("Options")

# --- the release ------------------------------------------------------------------------------

__version__ = "0.19.0"

#: Each release, oldest first, with the newest schema version (migration number) it ships.
#: Releases before 0.15.0 all called themselves 0.1.0: they brought schemas 1 to 14.
RELEASES: tuple[tuple[str, int], ...] = (
    ("0.1.0", 14),
    ("0.15.0", 15),
    ("0.16.0", 16),
    ("0.17.0", 17),
    ("0.18.0", 19),
    ("0.19.0", 20),
)


def release_of_schema(version: int) -> str | None:
    """The release that brought schema ``version`` (the oldest rankhouse that opens a warehouse
    at it); None for a schema newer than this release knows."""
    for release, newest in RELEASES:
        if version <= newest:
            return release
    return None


# --- the files it ships -----------------------------------------------------------------------


@cache
def _folder(name: str) -> Path:
    # at first use: importing pathlib costs a few milliseconds, which `--version` need not pay.
    # Beside this file, not importlib.resources (10 ms more): the package installs as files.
    from pathlib import Path

    here = Path(__file__).resolve().parent
    packaged = here / name
    if packaged.is_dir():
        return packaged
    in_checkout = here.parents[1] / name
    if in_checkout.is_dir():
        return in_checkout
    raise FileNotFoundError(f"rankhouse is installed without its {name}/ folder")


def sql_dir() -> Path:
    """The folder holding the shared ranking SQL and ``measures/``."""
    return _folder("sql")


def migrations_dir() -> Path:
    """The folder holding the numbered ``NNNN_name.sql`` migrations."""
    return _folder("migrations")


@cache
def read_sql(relative_path: str) -> str:
    """Text of one SQL file under ``sql/``, e.g. ``read_sql("measures/precision.sql")``."""
    return (sql_dir() / relative_path).read_text(encoding="utf-8")


# --- the defaults -----------------------------------------------------------------------------

DEFAULT_PERMUTATIONS = 10_000
"""Resamples of the randomization and bootstrap tests."""

DEFAULT_SEED = 42
"""Seed of the randomization and bootstrap tests."""

MAX_PERMUTATIONS = 1_000_000
"""The most resamples a randomization or bootstrap test (or interval) takes: a p-value's
resolution is then 1e-6, finer than any correction over a few hundred measures needs, and
the resamples take seconds, not hours (each is drawn; memory is bounded by drawing them in
batches)."""

DEFAULT_LEVEL = 0.95
"""Confidence level of an interval unless one is given."""

DEFAULT_DEPTH = 100
"""The depth k of order drift unless one is given."""

DEFAULT_PERSISTENCE = 0.9
"""RBO's persistence p unless one is given: the top 10 ranks carry 86 % of the weight."""

DEFAULT_FALSE_ALARM = 0.01
"""The share of unchanged nights a whole gate check may fail (spread over its measures)."""

DEFAULT_MAX_JUDGED_DROP = 0.10
"""How far (0..1) the run's mean judged share of its top k may lie below the baseline's before
the gate warns of holes in the judgments (benchmarks/bench_holes.py chose it)."""

DEFAULT_GATE_BASELINE = "previous"
"""The gate's baseline unless one is given: the system's previous run."""

DEFAULT_GATE_MODE = "non_inferiority"
"""The gate's test unless one is given (``"significance"`` is the other)."""

RECENT_RUNS = 28
"""The newest runs of a system a person reads one by one: ``history -s SYSTEM``'s table (the
rest behind ``--limit 0``, ``--since`` or a file format) and the report's detail panel (the
rest as a trend): four weeks of nights."""

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


# --- a signature's keywords as a verb's options ---------------------------------------------


def packed(kind: type[Options], keywords: dict[str, Any], **changed: Any) -> Options:
    """A verb's options object (a dataclass) from a signature's keywords, so that each keyword
    is written once, in the signature: ``keywords`` is the caller's ``locals()``, every option
    under its field's name (other names are left out); ``changed`` gives the options named or
    converted otherwise (``depth=drift_depth``, an enum's value)."""
    fields = kind.__dataclass_fields__  # type: ignore[attr-defined]
    given = {name: value for name, value in keywords.items() if name in fields}
    return kind(**(given | changed))
