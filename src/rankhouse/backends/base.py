"""What rankhouse asks of a store, whichever it is: the :class:`Backend` protocol.

A warehouse keeps its data in a store; measures are always computed by DuckDB, in process, by
the same SQL, so every store gives the same numbers by construction. The two stores today:

=====================  ==================================  ===================================
                       DuckDB file (the default)           PostgreSQL server (shared)
=====================  ==================================  ===================================
``local_compute``      yes: the engine reads the file      no: rows are fetched into a local
                                                           in-memory DuckDB (a workspace)
``many_writers``       no: one writing process at a time   yes: advisory locks on content,
                       (DuckDB's file lock, waited for)    names and evaluations
``enforces_unique``    no: rankhouse's checks alone        yes: UNIQUE constraints behind the
                                                           locks
ingest                 parse, check and write in the       parse and check in a staging
                       file, in one transaction            in-memory DuckDB, then publish in
                                                           one transaction (binary COPY)
evaluation writes      INSERT ... SELECT on the file's     binary COPY, in the transaction
                       own connection                      that stores the evaluations
``rankhouse sql``      the file opened read-only,          a read-only transaction, one
                       external access off                 statement at a time, rolled back;
                                                           refused to a superuser
=====================  ==================================  ===================================

Everything else (catalogue, history, compare, regress) is plain SQL on :meth:`Backend.connect`,
written once with ``:name`` binds: each store's :class:`Connection` runs it and returns a
:class:`Result` (rows fetched at once: catalogue-sized answers; bulk data moves through DuckDB
itself or PostgreSQL's COPY).
A store's driver raises its own exceptions; :func:`translated` turns them into
:class:`~rankhouse.errors.DatabaseError` where a connection is handed out, so nothing above
this package catches a driver's exception.

Adding a store is a module or folder beside these two implementing :class:`Backend`, its
migrations under ``migrations/<dialect>/``, an entry in :data:`rankhouse.backends.SCHEMES`
and one in the tests' backend fixture (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, NamedTuple, Protocol

from ..errors import DatabaseError, RankhouseError, first_line

#: The tables that hold an evaluation's rows by ``evaluation_id`` (its per-query values, its
#: judged shares: migration 0020), written with it and deleted with it.
EVALUATION_ROWS = ("evaluation_values", "evaluation_judged")


class Opening(NamedTuple):
    """How a store is opened (:func:`rankhouse.backends.open_backend`, each store's constructor).

    Attributes:
        read_only: serve what is stored, change nothing.
        create: make the warehouse when there is none.
        hold: a DuckDB file stays open until the store is closed, not only during each unit of
            work (:mod:`rankhouse.backends.duckdb_file.store`).
        upgrade: None, each store's rule for a warehouse at an older schema (a DuckDB file
            upgrades on opening, a server refuses); False opens it as it is, for
            :meth:`Backend.upgrade`; True upgrades it on opening.
    """

    read_only: bool = False
    create: bool = True
    hold: bool = False
    upgrade: bool | None = None


class Backend(Protocol):
    """A warehouse's store, opened, checked and migrated by :func:`rankhouse.backends.open_backend`.

    Attributes:
        url: the store's URL (``duckdb:///path``, ``postgresql+psycopg://...``).
        where: how messages name it (a path, or ``host:port/db``).
        dialect: the SQL dialect of its migrations and statements (``duckdb``, ``postgresql``).
        read_only: opened without the right to write.
        local_compute: its rows are in the DuckDB database that computes measures.
        many_writers: several processes may write at once (evaluations are locked before
            they are replaced).
        enforces_unique: UNIQUE constraints guard names and content against writers that
            bypass rankhouse's own checks.
    """

    url: str
    where: str
    dialect: str
    read_only: bool
    local_compute: bool
    many_writers: bool
    enforces_unique: bool

    def session(self) -> AbstractContextManager[Backend]:
        """Hold the store for a unit of work (several calls in a row): a DuckDB file stays open,
        and locked, until the outermost session ends; a server's connections are taken from
        its pool per call either way."""

    def connect(self) -> AbstractContextManager[Connection]:
        """A connection for reading (each statement commits on its own)."""

    def transaction(self) -> AbstractContextManager[Connection]:
        """A connection inside one transaction: committed on success, rolled back on error."""

    def statement(
        self, sql: str
    ) -> AbstractContextManager[tuple[list[str], Iterator[list[tuple]]] | None]:
        """One SQL statement of the user's (``rankhouse sql``), as written: its column names
        and its rows in batches, read while the block is open (None: it returns no rows). On a
        store opened read-only it can change nothing (each store says how), else it is
        committed when the block ends."""

    def engine_connection(self, run_ids, qrels_id: int) -> AbstractContextManager[Any]:
        """The DuckDB connection on which ``run_rows`` and ``judgments`` hold these rows under
        their warehouse ids (the engine computes there; its temporary tables stay on it)."""

    def rows_connection(
        self, run_ids, qrels_id: int, *, load: bool
    ) -> AbstractContextManager[Connection]:
        """A connection on which queries about these rows run best (``load``: they are about
        to be evaluated, so bring them where the engine reads them)."""

    def store_values(
        self, conn: Connection, duck, select: str, params: dict[str, Any],
        table: str = "evaluation_values",
    ) -> None:  # fmt: skip
        """Store the rows of ``select`` (``evaluation_id, query_id, value``, run with
        ``params`` on the engine's DuckDB connection ``duck``) in ``evaluation_values``, in
        the transaction of ``conn``; or in ``table``, whose columns the select names (one of
        :data:`EVALUATION_ROWS`)."""

    def lock_evaluations(self, conn: Connection, pairs) -> None:
        """Hold the evaluations of the (run id, qrels id) ``pairs`` for the rest of the
        transaction ``conn`` before replacing any (a store with many writers)."""

    def staging(self) -> AbstractContextManager[Backend]:
        """Where an ingest (or trec-eval) parses, checks and stores before :meth:`publish`:
        a store that computes locally is its own staging; another gives a local DuckDB
        warehouse, emptied when the block ends."""

    def publish(self, staging: Backend, results: list, place) -> list:
        """Copy what an ingest stored in ``staging`` into this store; the results as stored.

        Where each qrels set or run lands is the catalogue's question, which the caller
        answers: ``place(conn, result, staged)`` (:func:`rankhouse.ingest.reuse.placed`), on
        this store's transaction, finds it stored already or claims its name and writes its
        catalogue row; the store then copies the rows of the new ones."""

    def publish_all(self, scratch: Backend, place) -> None:
        """Copy every qrels set, run and evaluation of ``scratch`` into this store (each qrels
        set and run where ``place`` puts it, as :meth:`publish` does)."""

    def upgrade(self) -> list:
        """Apply the schema migrations the warehouse lacks (``rankhouse migrate``), refused to
        a login that may not; returns the :class:`~.schema.Migration` s applied."""

    def backup_command(self, version: int) -> str:
        """A shell command that copies the warehouse as it is, at schema ``version``."""

    # A run's rows taken out and put back (``rankhouse runs prune`` / ``runs restore``,
    # :mod:`rankhouse.catalog.retention`): the catalogue's side (the ``pruned_runs`` mark) is
    # the caller's, in the same transaction; a store that keeps run rows elsewhere implements
    # these three and ``run_row_bytes`` (the estimate of the space one row takes).
    run_row_bytes: float

    def run_rows_table(self, conn: Connection, run_id: int) -> Any:
        """The rows of run ``run_id`` as an Arrow table ``query_id, doc_id, rank, score``, in
        query and document byte order."""

    def delete_run_rows(self, conn: Connection, run_id: int) -> int:
        """Delete the rows of run ``run_id`` and nothing else, in the transaction of ``conn``;
        returns how many went."""

    def restore_run_rows(self, conn: Connection, run_id: int, rows: Any) -> int:
        """Insert ``rows`` (an Arrow table as :meth:`run_rows_table` gives) as the rows of run
        ``run_id``, in the transaction of ``conn``; returns how many."""

    def compact(self) -> Reclaimed:
        """Give the space of deleted rows back (a file: copied to a new one; a server: what
        it provides, a plain VACUUM)."""

    def close(self) -> None:
        """Release the store; the object cannot be used afterwards."""


class Reclaimed(NamedTuple):
    """What :meth:`Backend.compact` did: the file's size before and after (None on a server,
    whose files keep their size), and a sentence saying it."""

    before: int | None
    after: int | None
    said: str


@contextmanager
def translated(
    errors: tuple[type[BaseException], ...],
    refusal: Callable[[BaseException], RankhouseError | None] | None = None,
) -> Iterator[None]:
    """Raise a driver's exception of ``errors`` leaving the block as a RankhouseError:
    ``refusal(exc)`` when it names the problem, else a
    :class:`~rankhouse.errors.DatabaseError` with the driver's first line."""
    try:
        yield
    except errors as exc:
        named = refusal(exc) if refusal is not None else None
        raise (named or DatabaseError(first_line(exc))) from exc


def store_of(warehouse: Any) -> Backend:
    """The store of a :class:`~rankhouse.Warehouse`, or ``warehouse`` itself when it is a
    store: every verb takes either."""
    return getattr(warehouse, "backend", warehouse)


# --- what the warehouse's SQL sees of a store -----------------------------------------------------


class Connection:
    """A connection of either backend: ``execute`` with ``:name`` binds.

    Attributes:
        dialect: ``"duckdb"`` or ``"postgresql"``.
    """

    dialect: str

    def execute(self, sql: Any, params: Mapping[str, Any] | list | None = None) -> Result:
        """Run one statement (``:name`` binds; lists bind as arrays: write ``= ANY(:ids)``).
        A list of parameter sets runs the statement once for each."""
        raise NotImplementedError

    def execute_script(self, sql: str) -> None:
        """Run several statements separated by ``;`` (no binds)."""
        raise NotImplementedError

    def delete_run_rows(self, run_id: int) -> None:
        """Delete the rows of a run that the catalogue removes in this transaction. A store
        that keeps run rows apart (PostgreSQL with Iceberg) deletes them there once the
        transaction has committed: until then the catalogue still names them."""
        self.execute("DELETE FROM run_rows WHERE run_id = :id", {"id": int(run_id)})

    def execute_raw(self, sql: str) -> Result:
        """Run one statement as written (no bind translation: a user's own SQL)."""
        raise NotImplementedError

    def stream_raw(
        self, sql: str, batch_rows: int = 10_000
    ) -> tuple[list[str], Iterator[list[tuple]]] | None:
        """Run one statement as written; its column names and its rows in lists of at most
        ``batch_rows``, fetched as they are read (None: the statement returns no rows).

        This default fetches every row first (a store whose driver cannot stream); a DuckDB
        connection fetches batch by batch, so that the first rows of a large result are
        printed at once and a caller that stops early fetches no more.
        """
        result = self.execute_raw(sql)
        if not result.keys():
            return None
        rows = [tuple(row) for row in result]
        return result.keys(), iter(
            [rows[i : i + batch_rows] for i in range(0, len(rows), batch_rows)]
        )

    def has_table(self, name: str) -> bool:
        """Whether a table or view ``name`` exists in the warehouse's schema."""
        raise NotImplementedError

    def commit(self) -> None:
        """Commit what the connection did outside a transaction (a server's reading session)."""
        raise NotImplementedError


class Result:
    """The rows of one statement, fetched."""

    def __init__(self, keys: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        self._keys = tuple(keys)
        row_type = type("Row", (Row,), {"_keys": self._keys, "__slots__": ()})
        self._rows = [row_type(row) for row in rows]

    def keys(self) -> list[str]:
        """The column names."""
        return list(self._keys)

    def __iter__(self) -> Iterator[Row]:
        return iter(self._rows)

    def all(self) -> list[Row]:
        """Every row."""
        return list(self._rows)

    fetchall = all

    def first(self) -> Row | None:
        """The first row, or None."""
        return self._rows[0] if self._rows else None

    def one(self) -> Row:
        """The one row; raises LookupError when there are none or several."""
        if len(self._rows) != 1:
            raise LookupError(f"expected one row, got {len(self._rows)}")
        return self._rows[0]

    def one_or_none(self) -> Row | None:
        """The one row or None; raises LookupError when there are several."""
        if len(self._rows) > 1:
            raise LookupError(f"expected at most one row, got {len(self._rows)}")
        return self.first()

    def scalar(self) -> Any:
        """The first column of the first row, or None."""
        return self._rows[0][0] if self._rows else None

    def scalar_one(self) -> Any:
        """The first column of the one row."""
        return self.one()[0]

    def scalars(self) -> Items:
        """The first column of every row."""
        return Items(row[0] for row in self._rows)

    def mappings(self) -> Items:
        """The rows as dicts."""
        return Items(row._mapping for row in self._rows)


class Row(tuple):
    """A result row: a tuple whose items are also attributes named after the columns."""

    _keys: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[self._keys.index(name)]
        except ValueError:
            raise AttributeError(name) from None

    @property
    def _mapping(self) -> dict[str, Any]:
        return dict(zip(self._keys, self, strict=True))


class Items(list):
    """Values or dicts of a result: a list, with ``all``/``first``/``one`` as :class:`Result`
    has them."""

    def all(self) -> list[Any]:
        return list(self)

    def first(self) -> Any:
        return self[0] if self else None

    def one(self) -> Any:
        if len(self) != 1:
            raise LookupError(f"expected one row, got {len(self)}")
        return self[0]


def text_of(sql: Any) -> str:
    """The text of a statement: a string, or an SQLAlchemy ``text()`` clause (tests and
    scripts write them)."""
    return sql if isinstance(sql, str) else sql.text
