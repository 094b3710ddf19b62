"""The warehouse: one database (a DuckDB file by default) holding qrels, runs and evaluations."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.pool import StaticPool

from .errors import RankhouseError, SchemaError
from .schema import migrate, pending_migrations

DEFAULT_DB = "rankhouse.duckdb"
DB_ENV_VAR = "RANKHOUSE_DB"


def resolve_target(target: str | os.PathLike[str] | None) -> str:
    """The SQLAlchemy URL for ``target``: a URL as is, a path as a DuckDB file.

    ``None`` means ``$RANKHOUSE_DB``, else ``./rankhouse.duckdb``. ``":memory:"`` is an
    in-memory DuckDB database.
    """
    if target is None:
        target = os.environ.get(DB_ENV_VAR) or DEFAULT_DB
    text = os.fspath(target)
    if "://" in text:
        return text
    if text == ":memory:":
        return "duckdb:///:memory:"
    return f"duckdb:///{Path(text).expanduser().resolve()}"


def _tune_duckdb(dbapi_connection, _record) -> None:
    # FSST string compression cost a quarter of a 7-million-row ingest and made the file no
    # smaller (document ids are short and unique; dictionary compression still applies).
    dbapi_connection.execute("SET disabled_compression_methods = 'fsst'")


class Warehouse:
    """An open warehouse. Opening applies pending schema migrations.

    Args:
        target: a DuckDB file path, an SQLAlchemy URL (``duckdb:///path``), ``":memory:"``,
            or ``None`` for ``$RANKHOUSE_DB`` / ``./rankhouse.duckdb``.
        read_only: open without the right to write (for analysts; the file must exist and
            be at the current schema version).

    Raises:
        SchemaError: the warehouse was written by a newer rankhouse, or a read-only
            warehouse needs migrations.
    """

    def __init__(self, target: str | os.PathLike[str] | None = None, *, read_only: bool = False):
        self.url = resolve_target(target)
        self.read_only = read_only
        url = sa.make_url(self.url)
        connect_args: dict[str, Any] = {}
        if url.get_backend_name() == "duckdb":
            database = url.database or ":memory:"
            if read_only:
                if database == ":memory:" or not Path(database).exists():
                    raise RankhouseError(f"cannot open {database!r} read-only: no such warehouse")
                connect_args["read_only"] = True
            else:
                if database != ":memory:":
                    Path(database).parent.mkdir(parents=True, exist_ok=True)
            # Keep DuckDB's ordering byte-wise: trec_eval breaks ties by strcmp of doc ids.
            connect_args["config"] = {"default_collation": ""}
        try:
            self.engine = sa.create_engine(
                self.url, poolclass=StaticPool, connect_args=connect_args
            )
            if url.get_backend_name() == "duckdb":
                sa.event.listen(self.engine, "connect", _tune_duckdb)
            if read_only:
                with self.engine.connect() as conn:
                    if pending_migrations(conn):
                        raise SchemaError(
                            "this warehouse needs a schema upgrade; open it once without "
                            "--read-only"
                        )
            else:
                migrate(self.engine)
        except sa.exc.DBAPIError as exc:  # e.g. a file locked by another process
            raise RankhouseError(f"cannot open warehouse {self.url}: {exc.orig}") from exc

    @property
    def dialect(self) -> str:
        """The backend's name: ``'duckdb'`` (or ``'postgresql'`` later)."""
        return self.engine.dialect.name

    def close(self) -> None:
        """Release the database; the object cannot be used afterwards."""
        self.engine.dispose()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"Warehouse({self.url!r}{mode})"

    @contextmanager
    def transaction(self) -> Iterator[sa.Connection]:
        """A connection inside one transaction: committed on success, rolled back on error."""
        with self.engine.begin() as conn:
            yield conn

    @contextmanager
    def connect(self) -> Iterator[sa.Connection]:
        """A connection for reading."""
        with self.engine.connect() as conn:
            yield conn

    @staticmethod
    def duckdb_connection(conn: sa.Connection) -> Any:
        """The DuckDB connection under an SQLAlchemy connection (for DuckDB's own readers)."""
        return conn.connection.driver_connection

    # --- catalogue -----------------------------------------------------------------------
    def runs(self):
        """All stored runs as a DataFrame (id, name, system_tag, num_queries, num_rows, ...)."""
        from .catalog import list_runs

        return list_runs(self)

    def qrels_sets(self):
        """All stored qrels sets as a DataFrame."""
        from .catalog import list_qrels

        return list_qrels(self)

    def run(self, name_or_id: str | int):
        """One run's catalogue row (a dict) by name or id; raises NotFoundError."""
        from .catalog import get_run

        return get_run(self, name_or_id)

    def qrels(self, name_or_id: str | int):
        """One qrels set's catalogue row (a dict) by name or id; raises NotFoundError."""
        from .catalog import get_qrels

        return get_qrels(self, name_or_id)

    def remove_run(self, name_or_id: str | int) -> None:
        """Delete a run, its rows and its stored evaluations."""
        from .catalog import remove_run

        remove_run(self, name_or_id)

    def remove_qrels(self, name_or_id: str | int) -> None:
        """Delete a qrels set, its judgments and the evaluations made with it."""
        from .catalog import remove_qrels

        remove_qrels(self, name_or_id)

    # --- ingest --------------------------------------------------------------------------
    def ingest_qrels(self, source, **options):
        """Ingest relevance judgments; see :func:`rankhouse.ingest.ingest_qrels`."""
        from .ingest import ingest_qrels

        return ingest_qrels(self, source, **options)

    def ingest_run(self, source, **options):
        """Ingest a run (one stored run per tag); see :func:`rankhouse.ingest.ingest_run`."""
        from .ingest import ingest_run

        return ingest_run(self, source, **options)

    # --- evaluation ----------------------------------------------------------------------
    def evaluate(self, runs, qrels, measures, **options):
        """Evaluate runs against a qrels set; see :func:`rankhouse.evaluation.evaluate`."""
        from .evaluation import evaluate

        return evaluate(self, runs, qrels, measures, **options)

    def compare(self, qrels, runs, measures, **options):
        """Compare runs with significance tests; see :func:`rankhouse.compare.compare`."""
        from .compare import compare

        return compare(self, qrels, runs, measures, **options)

    def history(self, **options):
        """Stored evaluations over time; see :func:`rankhouse.history.history`."""
        from .history import history

        return history(self, **options)
