"""The local side of a server warehouse: where its evaluations compute.

A PostgreSQL warehouse keeps the data; DuckDB computes the measures, here, in process
(:mod:`rankhouse.backends.base` has the whole picture). A :class:`Workspace` is an in-memory
DuckDB warehouse holding the run rows and judgments that evaluations read, loaded once per process
from this machine's :class:`RowCache` when it has them, else fetched from the server (Arrow
through ADBC) and then cached.

**The row cache** keeps run rows and judgments of a server warehouse on this machine, as
Parquet files: fetching seven million rows takes seconds, reading them from a local Parquet
file a fraction of that. A file is named by what identifies the stored rows for their whole
life (the content hash, parse options and tag that the server's UNIQUE constraint holds, the
time they were stored, their count): a run removed and ingested again is another file, so an
entry is never stale and never needs invalidating. Ingest writes the entry of what it stored;
an evaluation that had to fetch writes what it fetched.

Where: ``$RANKHOUSE_CACHE`` (a folder, or ``off``), else ``$XDG_CACHE_HOME/rankhouse`` or
``~/.cache/rankhouse``. Size: at most ``$RANKHOUSE_CACHE_MB`` megabytes (default 2048), the
least recently used files removed first.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, urlencode

from ...duck import duckdb, register
from ...errors import RankhouseError
from ...lazy import adbc_postgresql as adbc
from ..duckdb_file import DuckDBFile

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class _StoredRows:
    """Rows the workspace fetches: a table, the id column naming one set of rows, the columns
    the engine reads, and the catalogue columns that identify the rows for the cache."""

    table: str
    id_column: str
    columns: tuple[str, ...]
    catalogue: str
    identity: tuple[str, ...]


RUN_ROWS = _StoredRows(
    "run_rows",
    "run_id",
    ("query_id", "doc_id", "score"),  # the engine ranks by score; a stored rank is not read
    "runs",
    ("content_sha256", "parse_options", "system_tag", "ingested_at", "num_rows"),
)
JUDGMENTS = _StoredRows(
    "judgments",
    "qrels_id",
    ("query_id", "doc_id", "grade"),
    "qrels_sets",
    ("content_sha256", "parse_options", "ingested_at", "num_judgments"),
)

#: The intents' rows of a qrels set with intents (migration 0018), fetched with its judgments
#: from the server (not kept in the row cache: diversity qrels are small).
INTENTS = _StoredRows(
    "judgment_intents",
    "qrels_id",
    ("query_id", "intent", "doc_id", "grade"),
    "qrels_sets",
    ("content_sha256", "parse_options", "ingested_at", "num_judgments"),
)


def libpq_url(url) -> str:
    """``url`` (SQLAlchemy's) as libpq reads a URI, for the workspace's ADBC connection.

    SQLAlchemy writes a space in the query as ``+``, which libpq keeps as a plus sign: a
    read-only warehouse's ``options`` (``-csearch_path=s -c default_transaction_read_only=on``)
    would set the search path to ``s+-c+...`` and find no table. libpq decodes ``%20``."""
    bare = url.set(drivername="postgresql", query={}).render_as_string(hide_password=False)
    query = urlencode(url.query, doseq=True, quote_via=quote)
    return f"{bare}?{query}" if query else bare


class Workspace:
    """The local side of a server warehouse: in-memory DuckDB warehouses.

    ``scratch`` holds the server rows that evaluations read, kept by id for the process: an
    id names the same content for its whole life (ids come from sequences, rows are never
    updated, ``--replace`` stores under a new id). Rows come from the local :class:`RowCache`
    when it has them, else from the server (Arrow through ADBC), and are then cached.
    ``staging`` is where ingests parse and check a source before they are published
    (:mod:`.publish`).

    Args:
        server_url: the server's libpq URL (for ADBC).
        catalogue: the server store, whose catalogue names the rows.
    """

    def __init__(self, server_url: str, catalogue) -> None:
        self.server_url = server_url
        self.catalogue = catalogue
        self.scratch = DuckDBFile(":memory:")
        self.cache = RowCache.from_environment()
        self._staging = None
        self._server = None
        self._loaded: set[tuple[str, int]] = set()

    @property
    def staging(self) -> DuckDBFile:
        """The scratch warehouse where ingests parse (made when first needed)."""
        if self._staging is None:
            self._staging = DuckDBFile(":memory:")
        return self._staging

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self.scratch.close()
        if self._staging is not None:
            self._staging.close()

    @contextmanager
    def _fetch(self, query: str) -> Iterator[pa.RecordBatchReader]:
        """The rows of ``query`` on the server as a stream of Arrow batches (ADBC), read
        while the server still sends them."""
        if self._server is None:
            self._server = adbc.connect(self.server_url, autocommit=True)
        with self._server.cursor() as cursor:
            cursor.execute(query)
            yield cursor.fetch_record_batch()

    def fetch_table(self, query: str) -> pa.Table:
        """The rows of ``query`` on the server as one Arrow table (ADBC)."""
        with self._fetch(query) as reader:
            return reader.read_all()

    def has(self, run_ids, qrels_id: int | None) -> bool:
        """Whether the rows of the runs and the qrels set are loaded, or cached here."""
        wanted = {("run_rows", int(r)) for r in run_ids}
        wanted |= {("judgments", int(qrels_id))} if qrels_id is not None else set()
        missing = wanted - self._loaded
        if not missing or self.cache is None:
            return not missing
        for rows in (RUN_ROWS, JUDGMENTS):
            ids = sorted(i for t, i in missing if t == rows.table)
            identities = self._identities(rows, ids) if ids else {}
            if len(identities) < len(ids):
                return False
            if any(self.cache.find(identity) is None for identity in identities.values()):
                return False
        return True

    def load(self, run_ids, qrels_id: int | None) -> None:
        """Load the rows of the runs and the qrels set (if any) not loaded yet."""
        qrels_ids = [] if qrels_id is None else [qrels_id]
        for rows, ids in ((RUN_ROWS, run_ids), (JUDGMENTS, qrels_ids)):
            wanted = sorted({int(i) for i in ids} - {i for t, i in self._loaded if t == rows.table})
            if not wanted:
                continue
            identities = self._identities(rows, wanted)
            for row_id in wanted:
                self._load(rows, row_id, identities.get(row_id))
                if rows is JUDGMENTS and '"intents": true' in str(identities.get(row_id)):
                    self._load_intents(row_id)
                self._loaded.add((rows.table, row_id))

    def _load_intents(self, qrels_id: int) -> None:
        with self._fetch(select_rows(INTENTS, qrels_id)) as fetched, self.scratch.connect() as conn:
            register(conn.duck, "_rankhouse_fetched", fetched)
            try:
                self._insert(INTENTS, qrels_id, "_rankhouse_fetched", None)
            finally:
                conn.duck.unregister("_rankhouse_fetched")

    def _identities(self, rows: _StoredRows, ids: list[int]) -> dict[int, tuple]:
        with self.catalogue.connect() as conn:
            found = conn.execute(
                f"SELECT id, {', '.join(rows.identity)} FROM {rows.catalogue} WHERE id = ANY(:ids)",
                {"ids": ids},
            ).mappings()
        return {row["id"]: row_identity(rows, row) for row in found}

    def _load(self, rows: _StoredRows, row_id: int, identity: tuple | None) -> None:
        if identity is not None and self.cache is not None:
            path = self.cache.find(identity)
            if path is not None:
                quoted = str(path).replace("'", "''")
                try:
                    self._insert(rows, row_id, f"read_parquet('{quoted}')", identity[-1])
                    return
                except (duckdb.Error, RankhouseError):  # unreadable: fetch it again
                    self.cache.forget(path)
        iceberg = self.catalogue.iceberg if rows is RUN_ROWS else None
        with (
            iceberg.scan(row_id, rows.columns)
            if iceberg is not None
            else self._fetch(select_rows(rows, row_id)) as fetched,
            self.scratch.connect() as conn,
        ):
            duck = conn.duck
            register(duck, "_rankhouse_fetched", fetched)
            try:
                # Iceberg rows live apart from their catalogue row: checked to be whole
                expected = identity[-1] if iceberg is not None and identity else None
                self._insert(rows, row_id, "_rankhouse_fetched", expected)
            finally:
                duck.unregister("_rankhouse_fetched")
        if identity is not None and self.cache is not None:
            with self.scratch.connect() as conn:
                self.cache.store(conn.duck, select_rows(rows, row_id), identity)

    def _insert(self, rows: _StoredRows, row_id: int, source: str, expected: int | None) -> None:
        names = ", ".join(rows.columns)
        with self.scratch.transaction() as conn:
            duck = conn.duck
            duck.execute(
                f"INSERT INTO {rows.table} ({rows.id_column}, {names}) "
                f"SELECT {row_id}, {names} FROM {source}"
            )
            if expected is not None:
                [(count,)] = duck.execute(
                    f"SELECT count(*) FROM {rows.table} WHERE {rows.id_column} = {row_id}"
                ).fetchall()
                if count != expected:
                    raise RankhouseError(
                        f"the rows of {rows.table} {row_id} are not whole: {count} of "
                        f"{expected} found"
                    )


def row_identity(rows: _StoredRows, catalogue_row: dict) -> tuple:
    """What names a set of stored rows for the cache: its table and catalogue values."""
    return (rows.table, *(catalogue_row[column] for column in rows.identity))


def select_rows(rows: _StoredRows, row_id: int) -> str:
    """The query of the rows ``row_id`` names (a run's or a qrels set's) that the engine reads."""
    return f"SELECT {', '.join(rows.columns)} FROM {rows.table} WHERE {rows.id_column} = {row_id}"


# --- the row cache --------------------------------------------------------------------------------


CACHE_ENV = "RANKHOUSE_CACHE"
CACHE_SIZE_ENV = "RANKHOUSE_CACHE_MB"
DEFAULT_SIZE_MB = 2048


def cache_folder() -> Path | None:
    """rankhouse's cache folder; None when ``$RANKHOUSE_CACHE`` is ``off``."""
    setting = os.environ.get(CACHE_ENV, "")
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "rankhouse"


class RowCache:
    """A folder of Parquet files, each the rows of one stored run or qrels set.

    Args:
        folder: where the files live (created when first written).
        max_bytes: the folder's size bound.
    """

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    @classmethod
    def from_environment(cls) -> RowCache | None:
        """The cache the environment asks for; None when ``$RANKHOUSE_CACHE`` is ``off``."""
        folder = cache_folder()
        if folder is None:
            return None
        megabytes = int(os.environ.get(CACHE_SIZE_ENV) or DEFAULT_SIZE_MB)
        return cls(folder, megabytes * 1024 * 1024)

    def path(self, identity: tuple) -> Path:
        """The file of the rows ``identity`` names (a tuple of catalogue values)."""
        key = "\x1f".join(str(part) for part in identity)
        return self.folder / f"{hashlib.sha256(key.encode()).hexdigest()}.parquet"

    def find(self, identity: tuple) -> Path | None:
        """The file of ``identity`` if it is here (marked as just used), else None."""
        path = self.path(identity)
        try:
            os.utime(path)
        except OSError:
            return None
        return path

    def store(self, duck, select: str, identity: tuple) -> None:
        """Write the rows of ``select`` (run on the DuckDB connection ``duck``) as the file
        of ``identity``. A cache that cannot be written is no error: the next evaluation
        fetches the rows again."""
        final = self.path(identity)
        partial = final.with_name(f".{final.stem}.{os.getpid()}.tmp")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            target = str(partial).replace("'", "''")
            duck.execute(f"COPY ({select}) TO '{target}' (FORMAT parquet, COMPRESSION zstd)")
            os.replace(partial, final)  # whole or absent, whoever reads it
        except (OSError, duckdb.Error):
            partial.unlink(missing_ok=True)
            return
        self.trim()

    def forget(self, path: Path) -> None:
        """Remove a file that could not be read."""
        path.unlink(missing_ok=True)

    def trim(self) -> None:
        """Remove the least recently used files until the folder fits ``max_bytes``."""
        try:
            files = [(p.stat(), p) for p in self.folder.glob("*.parquet")]
        except OSError:
            return
        total = sum(stat.st_size for stat, _ in files)
        for stat, path in sorted(files, key=lambda found: found[0].st_mtime):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= stat.st_size
