"""The warehouse: one database (a DuckDB file by default) holding qrels, runs and evaluations."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .defaults import DB_ENV_VAR, DEFAULT_PERMUTATIONS, DEFAULT_SEED, DUCKDB_CONFIG
from .errors import NoWarehouseError, RankhouseError, SchemaError
from .opening import (
    check_complete,
    check_file,
    connect_waiting,
    holds_nothing,
    object_names,
    refuse_foreign,
)
from .sandbox import READ_ONLY_CONFIG
from .schema import migrate, pending_migrations

if TYPE_CHECKING:
    import pandas as pd

    from .db import Connection
    from .evaluation import EvaluationResult
    from .ingest import IngestResult

DEFAULT_DB = "rankhouse.duckdb"
_DUCKDB_PREFIX = "duckdb:///"
_SUPPORTED_SCHEMES = ("duckdb", "postgresql", "postgresql+psycopg")


def resolve_target(target: str | os.PathLike[str] | None) -> str:
    """The URL for ``target``: a URL as is, a path as a DuckDB file (``duckdb:///PATH``).

    ``None`` means ``$RANKHOUSE_DB``, else ``./rankhouse.duckdb``. ``":memory:"`` is an
    in-memory DuckDB database. ``postgresql://user@host:port/db`` is a PostgreSQL server,
    reached through psycopg 3 (``pip install "rankhouse[postgres]"``).
    """
    if target is None:
        target = os.environ.get(DB_ENV_VAR) or DEFAULT_DB
    text = os.fspath(target)
    if text.startswith(("postgresql://", "postgres://")):  # psycopg 3 is the driver
        return "postgresql+psycopg://" + text.split("://", 1)[1]
    if "://" in text:
        scheme = text.split("://", 1)[0]
        if scheme not in _SUPPORTED_SCHEMES:
            raise RankhouseError(
                f"unsupported warehouse URL scheme {scheme + '://'!r}: a warehouse is a DuckDB "
                "file (a path, or duckdb:///path) or a PostgreSQL server (postgresql://...)"
            )
        return text
    if text == ":memory:":
        return _DUCKDB_PREFIX + ":memory:"
    return _DUCKDB_PREFIX + str(Path(text).expanduser().resolve())


def _duckdb_path(url: str) -> str | None:
    """The file (or ``:memory:``) of a ``duckdb:///`` URL; None for another backend."""
    if url.startswith(_DUCKDB_PREFIX):
        return url[len(_DUCKDB_PREFIX) :] or ":memory:"
    if url.startswith("duckdb://"):  # duckdb://relative/path, as SQLAlchemy reads it
        return url[len("duckdb://") :] or ":memory:"
    return None


def _duckdb_config(read_only: bool) -> dict:
    # reading harms nothing: no file access, settings locked
    return DUCKDB_CONFIG | READ_ONLY_CONFIG if read_only else dict(DUCKDB_CONFIG)


def open_file_ahead(target: str | None, read_only: bool) -> tuple[tuple, Any] | None:
    """Open the warehouse file ``target`` names as :class:`Warehouse` will (for
    :func:`rankhouse.ahead.open_ahead`): (its key, the connection), or None when ``target``
    is no existing DuckDB file, or not one that opens at once (locked, damaged, foreign).

    For a file that does not exist yet, nothing is opened, but DuckDB is set up: its first
    database in a process costs 10-15 ms more than the next (a new file: 25 ms against 14),
    and the command that creates the file then pays that here, while it imports.
    """
    from .db import DuckDB
    from .duck import duckdb

    path = _duckdb_path(resolve_target(target))
    if path is None or path == ":memory:":
        return None
    file = Path(path)
    # never a file the command could refuse to create, nor an empty one DuckDB would fill
    if not file.exists():
        duckdb.connect(":memory:").close()
        return None
    if not file.is_file() or file.stat().st_size == 0:
        return None
    config = _duckdb_config(read_only)
    return DuckDB.key(path, read_only, config), DuckDB.open(path, read_only, config)


class Warehouse:
    """An open warehouse. Opening applies pending schema migrations.

    Args:
        target: a DuckDB file path, a URL (``duckdb:///path``, ``postgresql://...``),
            ``":memory:"``, or ``None`` for ``$RANKHOUSE_DB`` / ``./rankhouse.duckdb``.
        read_only: open without the right to write (for analysts; the file must exist and
            be at the current schema version). A DuckDB file is then also cut off from other
            files and its settings are locked (see :mod:`rankhouse.sandbox`).
        create: create the warehouse (and its folder) when no DuckDB file exists at
            ``target``; ``False`` raises NoWarehouseError instead (commands that only read).

    A DuckDB file held by another process is waited for, up to ``$RANKHOUSE_LOCK_TIMEOUT``
    seconds (default 30; see :mod:`rankhouse.opening`).

    Raises:
        NoWarehouseError: no warehouse file at ``target`` (``create=False`` or read-only).
        SchemaError: the file is another application's database, the warehouse is damaged or
            was written by a newer rankhouse, or a read-only warehouse needs migrations.
        WarehouseLockedError: another process held the DuckDB file for the whole wait.
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = False,
        create: bool = True,
    ):
        self.url = resolve_target(target)
        self.read_only = read_only
        self._workspace = None
        self.db, copied = self._open_database(self.url, read_only, create)
        try:
            self._prepare_schema(create=create, copied=copied)
        except BaseException:
            self.db.close()  # a refused file stays unlocked for the caller
            raise

    @staticmethod
    def _open_database(url: str, read_only: bool, create: bool = True):
        """(the database, whether it is a new file copied from the template)."""
        path = _duckdb_path(url)
        if path is not None:
            from .db import DuckDB
            from .duck import duckdb

            copied = False
            config = _duckdb_config(read_only)
            if path == ":memory:":
                if read_only:
                    raise RankhouseError("cannot open an in-memory warehouse read-only")
            else:
                check_file(Path(path), create=create and not read_only)
                if create and not read_only and not Path(path).exists():
                    from .templates import copy_to

                    copied = copy_to(Path(path), config)
            try:
                database = connect_waiting(
                    lambda: DuckDB(path, read_only=read_only, config=config), path
                )
            except duckdb.Error as exc:
                raise RankhouseError(f"cannot open warehouse {path}: {exc}") from None
            return database, copied
        if url.startswith("postgresql"):
            from .db import Server
            from .storage import require_postgres_drivers

            require_postgres_drivers()
            return Server(url, read_only=read_only), False
        scheme = url.split("://", 1)[0]
        raise RankhouseError(
            f"unsupported warehouse URL scheme {scheme + '://'!r}: a warehouse is a DuckDB "
            "file (a path, or duckdb:///path) or a PostgreSQL server (postgresql://...)"
        )

    def _prepare_schema(self, *, create: bool, copied: bool = False) -> None:
        """Check that the database is a whole rankhouse warehouse; migrate it when writable.
        ``copied``: a new file copied from the template, whose migrations are recorded as
        applied now."""
        from .db import database_errors

        path = _duckdb_path(self.url)
        is_file = path is not None and path != ":memory:"
        where = path if path is not None else self.url.split("@")[-1]
        try:
            with self.db.connect() as conn:
                new_file = is_file and self.db.dialect == "duckdb" and holds_nothing(conn)
                names = [] if new_file else object_names(conn, self.db.dialect)
                if is_file:
                    refuse_foreign(where, names)
                    if "schema_migrations" not in names and (self.read_only or not create):
                        raise NoWarehouseError(
                            f"no warehouse at {where}: the database holds no tables yet; "
                            "ingest qrels or a run to create one"
                        )
                if self.read_only and pending_migrations(conn, names):
                    raise SchemaError(
                        "this warehouse needs a schema upgrade; open it once without --read-only"
                    )
            if not self.read_only:
                try:
                    applied = migrate(self.db, names if self.db.dialect == "duckdb" else None)
                except SchemaError as exc:
                    raise SchemaError(f"cannot open the warehouse {where}: {exc}") from None
                # Another process may have migrated it while this one waited for the lock:
                # on a server, even after this one listed part of its schema.
                if applied or "schema_migrations" not in names or self.db.dialect != "duckdb":
                    with self.db.connect() as conn:
                        names = object_names(conn, self.db.dialect)
            if copied:
                from .templates import restamp

                with self.db.transaction() as conn:
                    restamp(conn)
        except database_errors(self.db.dialect) as exc:
            reason = str(getattr(exc, "orig", exc)).strip().splitlines()[0]
            raise RankhouseError(f"cannot open warehouse {where}: {reason}") from None
        check_complete(where, names, self.db.dialect)

    @property
    def dialect(self) -> str:
        """The backend's name: ``'duckdb'`` or ``'postgresql'``."""
        return self.db.dialect

    @property
    def engine(self):
        """The SQLAlchemy engine of a server warehouse (PostgreSQL only)."""
        return self.db.engine

    def workspace(self):
        """The local DuckDB where a server warehouse's evaluations compute (see storage.py)."""
        from .workspace import Workspace

        if self._workspace is None:
            server_url = self.db.engine.url.set(drivername="postgresql")
            self._workspace = Workspace(server_url.render_as_string(hide_password=False), self.db)
        return self._workspace

    def close(self) -> None:
        """Release the database; the object cannot be used afterwards."""
        if self._workspace is not None:
            self._workspace.close()
        self.db.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"Warehouse({self.url!r}{mode})"

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A connection inside one transaction: committed on success, rolled back on error."""
        with self.db.transaction() as conn:
            yield conn

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        """A connection for reading."""
        with self.db.connect() as conn:
            yield conn

    @staticmethod
    def duckdb_connection(conn: Connection) -> Any:
        """The DuckDB connection under a warehouse connection (for DuckDB's own readers)."""
        return conn.duck

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
        """Delete a run, its rows, evaluations and gate checks (checks that used it as their
        baseline stay, with its name)."""
        from .catalog import remove_run

        remove_run(self, name_or_id)

    def remove_qrels(self, name_or_id: str | int) -> None:
        """Delete a qrels set, its judgments and the evaluations and gate checks made with it."""
        from .catalog import remove_qrels

        remove_qrels(self, name_or_id)

    # --- ingest --------------------------------------------------------------------------
    def ingest_qrels(
        self,
        source: str | os.PathLike[str] | pd.DataFrame,
        *,
        name: str | None = None,
        columns: str | dict[str, str] | None = None,
        format: str | None = None,
        delimiter: str | None = None,
        replace: bool = False,
        progress: bool | None = None,
    ) -> IngestResult:
        """Ingest relevance judgments (``rankhouse ingest qrels``).

        Args:
            source: a path (plain or ``.gz``) or a DataFrame.
            name: the qrels set's name (default: from the file name).
            columns: column mapping ``"qid=Q,docid=D,rel=R"`` (or a dict) for tabular sources.
            format: trec, csv, tsv, parquet or jsonl (default: from the extension).
            delimiter: a csv/tsv file's delimiter, ``,`` ``\t`` ``|`` or ``;`` (default:
                sniffed from the header line).
            replace: overwrite a qrels set of the same name with different content.
            progress: show a progress bar (default: big files, stderr a terminal).

        See :func:`rankhouse.ingest.ingest_qrels` for the result and the errors.
        """
        from .ingest import ingest_qrels

        return ingest_qrels(
            self,
            source,
            name=name,
            columns=columns,
            format=format,
            delimiter=delimiter,
            replace=replace,
            progress=progress,
        )

    def ingest_run(
        self,
        source: str | os.PathLike[str] | pd.DataFrame,
        *,
        name: str | None = None,
        columns: str | dict[str, str] | None = None,
        format: str | None = None,
        delimiter: str | None = None,
        order: str = "score",
        meta: dict[str, str] | None = None,
        replace: bool = False,
        new_version: bool = False,
        progress: bool | None = None,
    ) -> list[IngestResult]:
        """Ingest a run, one stored run per system tag (``rankhouse ingest run``).

        Args:
            source: a path (plain or ``.gz``) or a DataFrame.
            name: the run's name (several tags: ``<name>/<tag>``; default: the tag).
            columns: column mapping ``"qid=Q,docid=D,score=S"`` (or a dict) for tabular sources.
            format: trec, csv, tsv, parquet or jsonl (default: from the extension).
            delimiter: a csv/tsv file's delimiter, ``,`` ``\t`` ``|`` or ``;`` (default:
                sniffed from the header line).
            order: ``"score"`` (rank by score) or ``"rank"`` (the given ranks are the ranking).
            meta: metadata pairs stored with every run of this ingest.
            replace: overwrite runs of the same names holding different content.
            new_version: store a run whose name holds other content as ``<name>@2``, ...
            progress: show a progress bar (default: big files, stderr a terminal).

        See :func:`rankhouse.ingest.ingest_run` for the result and the errors.
        """
        from .ingest import ingest_run

        return ingest_run(
            self,
            source,
            name=name,
            columns=columns,
            format=format,
            delimiter=delimiter,
            order=order,
            meta=meta,
            replace=replace,
            new_version=new_version,
            progress=progress,
        )

    # --- evaluation ----------------------------------------------------------------------
    def evaluate(
        self,
        qrels: Any,
        runs: Any,
        measures: Any,
        *,
        relevance_level: int = 1,
        missing_queries: str = "zero",
        recompute: bool = False,
        options: dict[str, Any] | None = None,
        with_query_counts: bool = True,
        with_per_query: bool = True,
        name: str | None = None,
        meta: dict[str, str] | None = None,
        allow_no_overlap: bool = False,
    ) -> EvaluationResult:
        """Evaluate runs against a qrels set, storing every evaluation (``rankhouse eval``).

        Args:
            qrels: a stored qrels set's name or id, a file path or a DataFrame.
            runs: one run or a list: stored names or ids, file paths or DataFrames.
            measures: one name or a list (``"nDCG@10"``, ``"P_5"``, ``"ndcg_cut.10,20"``).
            relevance_level: grade from which a judgment counts as relevant (trec_eval ``-l``).
            missing_queries: ``"zero"`` (trec_eval ``-c``) or ``"skip"``.
            recompute: compute and store again even when the evaluation is stored.
            options: further value-changing options (``{"max_rank": 100}``, ...).
            with_query_counts: fill the result's ``query_counts``.
            with_per_query: read the per-query values into the result (stored either way).
            name: the stored name of a run given as a file or DataFrame (default its tag; a
                name held by other content gives the next version, ``name@2``, ...).
            meta: metadata pairs stored with a run given as a file or DataFrame.
            allow_no_overlap: evaluate a run with no query in common with the qrels (else
                InputError).

        See :func:`rankhouse.evaluation.evaluate` for the result and the errors.
        """
        from .evaluation import evaluate

        return evaluate(
            self,
            qrels,
            runs,
            measures,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
            recompute=recompute,
            options=options,
            with_query_counts=with_query_counts,
            with_per_query=with_per_query,
            name=name,
            meta=meta,
            allow_no_overlap=allow_no_overlap,
        )

    def compare(
        self,
        qrels: Any,
        runs: Any,
        measures: Any,
        *,
        names: Any = None,
        baseline: Any = None,
        test: Any = "t",
        correction: str | None = "none",
        alpha: float = 0.05,
        correction_alpha: float | None = None,
        permutations: int = DEFAULT_PERMUTATIONS,
        seed: int = DEFAULT_SEED,
        relevance_level: int = 1,
        missing_queries: str = "zero",
        queries: Any = None,
        perquery: bool | str = False,
        round: Any = None,  # noqa: A002 (PyTerrier's name)
        highlight: str | None = "bold",
    ) -> Any:
        """Means of several runs and paired tests against a baseline (``rankhouse compare``),
        with PyTerrier's ``Experiment`` parameters (docs/compare.md).

        Args:
            qrels: a stored qrels set (name or id), a file path, or qrels data.
            runs: runs as :meth:`evaluate` takes them (a dict name -> run names them).
            measures: measure names or Measure objects.
            names: the names shown for the runs, one per run in order.
            baseline: the run the others are tested against: its position among ``runs``
                (an int, PyTerrier's ``baseline=0``), or its name or file (None: means only).
            test: ``"t"``, ``"wilcoxon"``, ``"randomization"``, ``"bootstrap"``, or a callable
                as :func:`scipy.stats.ttest_rel`.
            correction: ``"none"``, ``"bh"``, or any statsmodels multipletests method name
                or alias (``"bonferroni"``, ``"holm"``, ``"hs"``, ``"fdr_bh"``...).
            alpha: significance level of the corrected p-values.
            correction_alpha: PyTerrier's name for ``alpha``.
            permutations: resamples of the randomization and bootstrap tests.
            seed: seed of the randomization and bootstrap tests.
            relevance_level: as for :meth:`evaluate`.
            missing_queries: as for :meth:`evaluate`.
            queries: only these query ids (a list, a topics DataFrame, or a file of ids).
            perquery: True: the per-query values instead of the means; ``"both"``: both.
            round: decimals a notebook shows, a number or a dict measure -> decimals.
            highlight: how a notebook marks the best mean: ``"bold"``, ``"color"``, None.

        See :func:`rankhouse.compare.compare` for the result's columns and the errors.
        """
        from .compare import compare

        return compare(
            self,
            qrels,
            runs,
            measures,
            names=names,
            baseline=baseline,
            test=test,
            correction=correction,
            alpha=alpha,
            correction_alpha=correction_alpha,
            permutations=permutations,
            seed=seed,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
            queries=queries,
            perquery=perquery,
            round=round,
            highlight=highlight,
        )

    def history(
        self,
        *,
        system: str | None = None,
        run: str | int | None = None,
        qrels: str | int | None = None,
        measures: Any = None,
        since: Any = None,
        relevance_level: int = 1,
        missing_queries: str = "zero",
    ) -> pd.DataFrame:
        """Stored evaluations over time, one row per run (``rankhouse history``).

        Args:
            system: only runs with this system tag.
            run: only this run (name or id).
            qrels: only evaluations against this qrels set (name or id).
            measures: only these measures, as columns in this order.
            since: only runs ingested at or after this date (ISO text, date or datetime, UTC).
            relevance_level: the level ``measures`` were evaluated at (``AP`` with 2 is the
                column ``AP(rel=2)``).
            missing_queries: the policy ``measures`` were evaluated with.

        See :func:`rankhouse.history.history` for the columns and the errors.
        """
        from .history import history

        return history(
            self,
            system=system,
            run=run,
            qrels=qrels,
            measures=measures,
            since=since,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
        )

    def report(
        self,
        path: str | os.PathLike[str],
        *,
        qrels: Any = None,
        runs: Any = None,
        systems: Any = None,
        measures: Any = None,
        baseline: Any = None,
        test: str = "t",
        correction: str = "none",
        alpha: float = 0.05,
        relevance_level: int = 1,
        round: Any = 4,  # noqa: A002 (PyTerrier's name)
        highlight: str | None = "bold",
    ) -> Path:
        """Write the HTML report to ``path`` (``rankhouse report``) and return the path.

        Args:
            path: the HTML file to write.
            qrels: only this qrels set (name, id or file).
            runs: only these runs (names, ids or files).
            systems: only the runs of these system tags.
            measures: the measures shown, in this order (default: the stored ones).
            baseline: the run the others are tested against; None: means only.
            test: the paired test, as for :meth:`compare`.
            correction: the multiple-testing correction, as for :meth:`compare`.
            alpha: significance level.
            relevance_level: grade from which binary measures count a document as relevant.
            round: decimals shown, one number or a dict measure -> decimals.
            highlight: how the best mean per measure is marked: ``'bold'``, ``'color'``, None.

        See :func:`rankhouse.report.build_report` for what the report holds and the errors.
        """
        from .report import write_report

        return write_report(
            self,
            path,
            qrels=qrels,
            runs=runs,
            systems=systems,
            measures=measures,
            baseline=baseline,
            test=test,
            correction=correction,
            alpha=alpha,
            relevance_level=relevance_level,
            round=round,
            highlight=highlight,
        )
