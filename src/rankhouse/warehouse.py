"""The warehouse: the Python API over one store (a DuckDB file by default) of qrels, runs and
evaluations. Each method is one verb of the library; the store is :attr:`Warehouse.backend`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .analysis import Analysis
from .backends import open_backend, resolve_target
from .backends.schema import SchemaUpgrade, upgrade
from .catalog import get_qrels, get_run, list_qrels, list_runs, remove_qrels, remove_run
from .errors import warnings_at_caller
from .tracking import Tracking

if TYPE_CHECKING:
    import pandas as pd

    from .backends import Backend
    from .backends.base import Connection
    from .ingest.sources import IngestResult
    from .results import EvaluationResult

__all__ = ["Warehouse", "resolve_target"]


class Warehouse(Analysis, Tracking):
    """An open warehouse. Opening a DuckDB file applies pending schema migrations; a server's
    warehouse at an older schema is refused until its owner runs :meth:`migrate`.

    Args:
        target: a DuckDB file path, a URL (``duckdb:///path``, ``postgresql://...``),
            ``":memory:"``, or ``None`` for ``$RANKHOUSE_DB`` / ``./rankhouse.duckdb``.
        read_only: open without the right to write (for analysts; the file must exist and
            be at the current schema version). A DuckDB file is then also cut off from other
            files and its settings are locked (see
            :data:`rankhouse.backends.duckdb_file.store.READ_ONLY_CONFIG`).
        create: create the warehouse (and its folder) when no DuckDB file exists at
            ``target``; ``False`` raises NoWarehouseError instead (commands that only read).
        hold: keep a DuckDB file open, and locked, until :meth:`close` (a script that is one
            unit of work; the command line). By default the file is open only during each
            call, or a ``with wh.session():`` block, so that the command line, another
            notebook or ``duckdb`` can use it in between.

    A DuckDB file held by another process is waited for, up to ``$RANKHOUSE_LOCK_TIMEOUT``
    seconds (default 30; see :mod:`rankhouse.backends.duckdb_file.locking`).

    Attributes:
        url: the store's URL.
        read_only: opened without the right to write.
        backend: the store (:class:`~rankhouse.backends.base.Backend`).

    Raises:
        NoWarehouseError: no warehouse file at ``target`` (``create=False`` or read-only).
        SchemaError: the file is another application's database, the warehouse is damaged or
            was written by a newer rankhouse, or a read-only warehouse (or a server's) needs
            migrations.
        WarehouseLockedError: another process held the DuckDB file for the whole wait.
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = False,
        create: bool = True,
        hold: bool = False,
    ):
        self.url = resolve_target(target)
        self.read_only = read_only
        self.backend: Backend = open_backend(
            self.url, read_only=read_only, create=create, hold=hold
        )

    @classmethod
    def migrate(
        cls, target: str | os.PathLike[str] | None = None, *, dry_run: bool = False
    ) -> SchemaUpgrade:
        """Upgrade the warehouse at ``target`` to the schema this release needs: the explicit
        step a server's warehouse takes (``rankhouse migrate``), which a DuckDB file also takes
        on opening.

        Args:
            target: as for :class:`Warehouse`; the warehouse must exist.
            dry_run: only say what would be applied.

        Returns:
            The schema version found, the migrations pending and those applied, and a
            command that backs the warehouse up first.

        Raises:
            NoWarehouseError: no warehouse at ``target``.
            SchemaError: another application's, a damaged or a newer warehouse; a login that
                may not change the schema (a server's owner migrates); a failed migration
                (rolled back).
        """
        store = open_backend(resolve_target(target), create=False, hold=True, upgrade=False)
        try:
            return upgrade(store, dry_run=dry_run)
        finally:
            store.close()

    @property
    def dialect(self) -> str:
        """The backend's name: ``'duckdb'`` or ``'postgresql'``."""
        return self.backend.dialect

    @property
    def engine(self):
        """The SQLAlchemy engine of a server warehouse (PostgreSQL only)."""
        return self.backend.engine

    def workspace(self):
        """The local DuckDB where a server warehouse's evaluations compute (PostgreSQL only;
        see :mod:`rankhouse.backends.postgresql.workspace`)."""
        return self.backend.workspace()

    def close(self) -> None:
        """Release the database; the object cannot be used afterwards."""
        self.backend.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"Warehouse({self.url!r}{mode})"

    @contextmanager
    def session(self) -> Iterator[Warehouse]:
        """Hold the warehouse for the block: the calls inside are one unit of work on one
        connection, and a DuckDB file stays open (and locked) until the block ends."""
        with self.backend.session():
            yield self

    @contextmanager
    def _call(self) -> Iterator[None]:
        """One method call: a unit of work on the store, its warnings at the caller's line."""
        with self.backend.session(), warnings_at_caller():
            yield

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A connection inside one transaction: committed on success, rolled back on error."""
        with self.backend.transaction() as conn:
            yield conn

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        """A connection for reading. A DuckDB file stays open for the block: a writable
        ``Warehouse`` keeps every other process out of it (``--read-only`` commands too) until
        the block ends; ``Warehouse(path, read_only=True)`` shares it with other readers."""
        with self.backend.connect() as conn:
            yield conn

    @staticmethod
    def duckdb_connection(conn: Connection) -> Any:
        """The DuckDB connection under a warehouse connection (for DuckDB's own readers)."""
        return conn.duck

    # --- catalogue -----------------------------------------------------------------------
    def runs(self):
        """All stored runs as a DataFrame (id, name, system_tag, num_queries, num_rows, ...)."""
        with self._call():
            return list_runs(self.backend)

    def qrels_sets(self):
        """All stored qrels sets as a DataFrame."""
        with self._call():
            return list_qrels(self.backend)

    def run(self, name_or_id: str | int):
        """One run's catalogue row (a dict) by name or id; raises NotFoundError."""
        with self._call():
            return get_run(self.backend, name_or_id)

    def qrels(self, name_or_id: str | int):
        """One qrels set's catalogue row (a dict) by name or id; raises NotFoundError."""
        with self._call():
            return get_qrels(self.backend, name_or_id)

    def remove_run(self, name_or_id: str | int) -> None:
        """Delete a run, its rows, evaluations and gate checks (checks that used it as their
        baseline stay, with its name)."""
        with self._call():
            remove_run(self.backend, name_or_id)

    def remove_qrels(self, name_or_id: str | int) -> None:
        """Delete a qrels set, its judgments and the evaluations and gate checks made with it."""
        with self._call():
            remove_qrels(self.backend, name_or_id)

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

        See :func:`rankhouse.ingest.storing.ingest_qrels` for the result and the errors.
        """
        from .ingest.storing import ingest_qrels

        with self._call():
            return ingest_qrels(
                self.backend,
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
            format: trec, csv, tsv, parquet, jsonl or msmarco (MS MARCO's headerless
                ``qid pid rank``, with ``order="rank"``; default: from the extension).
            delimiter: a csv/tsv file's delimiter, ``,`` ``\t`` ``|`` or ``;`` (default:
                sniffed from the header line).
            order: ``"score"`` (rank by score) or ``"rank"`` (the given ranks are the ranking).
            meta: metadata pairs stored with every run of this ingest.
            replace: overwrite runs of the same names holding different content.
            new_version: store a run whose name holds other content as ``<name>@2``, ...
            progress: show a progress bar (default: big files, stderr a terminal).

        See :func:`rankhouse.ingest.storing.ingest_run` for the result and the errors.
        """
        from .ingest.storing import ingest_run

        with self._call():
            return ingest_run(
                self.backend,
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
        order: str = "score",
        columns: str | dict[str, str] | None = None,
        qrels_columns: str | dict[str, str] | None = None,
        recompute: bool = False,
        options: dict[str, Any] | None = None,
        with_query_counts: bool = True,
        with_per_query: bool = True,
        name: str | None = None,
        meta: dict[str, str] | None = None,
        allow_no_overlap: bool = False,
        level: float = 0.95,
    ) -> EvaluationResult:
        """Evaluate runs against a qrels set, storing every evaluation (``rankhouse eval``).

        The keywords of :func:`rankhouse.evaluate` mean what they mean there; this one keeps
        what it is given and what it computes.

        Args:
            qrels: a stored qrels set's name or id, a file path or data in any shape
                :func:`rankhouse.evaluate` takes (a DataFrame, ``{qid: {docid: grade}}``...).
            runs: one run or a list: stored names or ids, file paths or data (DataFrames...).
            measures: one name or a list (``"nDCG@10"``, ``"P_5"``, ``"ndcg_cut.10,20"``).
            relevance_level: grade from which a judgment counts as relevant (trec_eval ``-l``).
            missing_queries: ``"zero"`` (trec_eval ``-c``) or ``"skip"``.
            order: ``"score"`` ranks a run given as a file or data by score as trec_eval
                does; ``"rank"`` takes its ranks as the ranking (stored runs keep theirs).
            columns: column mapping of runs given as frames or tabular files, e.g.
                ``{"qid": "query", "score": "sim"}`` or ``"qid=query,score=sim"``.
            qrels_columns: column mapping of qrels given as a frame or a tabular file, e.g.
                ``{"rel": "SCORE"}``: a mapped frame is taken as qrels whatever its column
                names.
            recompute: compute and store again even when the evaluation is stored.
            options: further value-changing options (``{"max_rank": 100}``, ...).
            with_query_counts: fill the result's ``query_counts``.
            with_per_query: read the per-query values into the result (stored either way).
            name: the stored name of a run given as a file or DataFrame (default its tag; a
                name held by other content gives the next version, ``name@2``, ...).
            meta: metadata pairs stored with a run given as a file or DataFrame.
            allow_no_overlap: evaluate a run with no query in common with the qrels (else
                InputError).
            level: the confidence level of each mean's interval (``aggregates``'
                ``mean_low``, ``mean_high``; Student's t over the per-query values).

        See :func:`rankhouse.evaluation.evaluate` for the result and the errors.
        """
        from .evaluation import Reading, evaluate

        with self._call():
            return evaluate(
                self.backend,
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
                level=level,
                reading=Reading(order, columns, qrels_columns),
            )

    def evaluate_ranked_labels(
        self,
        path: str | os.PathLike[str],
        measures: Any,
        *,
        relevance_level: int = 1,
        missing_queries: str = "zero",
        recompute: bool = False,
        with_per_query: bool = True,
        allow_no_overlap: bool = False,
        level: float = 0.95,
    ) -> EvaluationResult:
        """Evaluate a ranked file with labels (``rankhouse eval --ranked-labels FILE``).

        Each line is ``qid Q0 docid rel`` and the order of a query's lines is its ranking
        (:mod:`rankhouse.ingest.trec_exact`). The file's judgments are stored as a qrels
        set and its ranking as a run, both named after the file (the run tagged so), and
        the run is evaluated against the qrels as :meth:`evaluate` does.

        Args:
            path: the file (plain or compressed).
            measures: as for :meth:`evaluate`.
            relevance_level: as for :meth:`evaluate`.
            missing_queries: as for :meth:`evaluate`.
            recompute: as for :meth:`evaluate`.
            with_per_query: as for :meth:`evaluate`.
            allow_no_overlap: as for :meth:`evaluate`.
            level: as for :meth:`evaluate`.

        Raises:
            InputError: a line without 4 fields, a label that is not an integer, a document
                twice for a query (naming the file, line and field).
        """
        from .evaluation import evaluate_ranked_labels

        with self._call():
            return evaluate_ranked_labels(
                self.backend,
                path,
                measures,
                relevance_level=relevance_level,
                missing_queries=missing_queries,
                recompute=recompute,
                with_per_query=with_per_query,
                allow_no_overlap=allow_no_overlap,
                level=level,
            )
