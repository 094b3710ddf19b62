"""Run rows in an Apache Iceberg table beside a PostgreSQL warehouse (``rankhouse[iceberg]``).

A team whose nightly runs are MS MARCO-sized outgrows run rows in PostgreSQL tables: 66.8 bytes
a row with its index, in the server's slowest and largest layout. With this option the
catalogue, evaluations, per-query values and gate checks stay in the server's tables, and the
run rows go to one Iceberg table (``rankhouse.run_rows``, Parquet files compressed with zstd,
each holding one run's rows: about 6 bytes a row, docs/scaling.md).

**Chosen when the warehouse is created.** ``?iceberg=LOCATION`` in the URL of the command that
creates the warehouse (a folder, ``file:///shared/rankhouse``, or object storage such as
``s3://bucket/prefix``: pyarrow's file systems, configured as pyiceberg reads them, e.g.
``PYICEBERG_CATALOG__RANKHOUSE__S3__REGION``) makes the table. The choice is then stored in the
warehouse: the Iceberg SQL catalog's own tables (``iceberg_tables``,
``iceberg_namespace_properties``) live in the warehouse's schema, and every later command finds
the table there, with no parameter. A warehouse that already keeps run rows in PostgreSQL is
refused the option (its rows would be split between two stores).

**One commit per run, published after it.** An ingest appends a run's rows in one Iceberg
commit while the server's transaction that writes its catalogue row is still open; the
transaction commits after the append. A writer killed before the append leaves nothing; killed
between the two, it leaves rows under a run id that no catalogue row names (ids come from a
sequence and are never reused), which no reader asks for: :meth:`IcebergRows.orphans` finds
them and :meth:`IcebergRows.delete` removes them. Data files written by an append whose commit
never happened are referenced by no snapshot: ``Table.maintenance`` and the object store's
lifecycle rules remove such files (docs/scaling.md). Concurrent writers commit through the SQL
catalog's compare-and-swap of the metadata location; one that loses
(``CommitFailedException``) rereads the table and tries again.

**Reading.** An evaluation scans one run (a filter on ``run_id``: the files' statistics leave
out every other run's files) as Arrow batches, which the workspace's DuckDB loads
(:mod:`.workspace`); measures are computed there as for any server warehouse.
"""

from __future__ import annotations

import random
import re
import time
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from importlib.util import find_spec
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ...duck import duckdb
from ...errors import DatabaseError, RankhouseError, RankhouseWarning, first_line
from ...lazy import iceberg_catalog as catalog_sql
from ...lazy import iceberg_exceptions as exceptions
from ...lazy import iceberg_expressions as expressions
from ...lazy import iceberg_schema as schema_module
from ...lazy import iceberg_types as types
from ...lazy import pyarrow as pa
from ...lazy import pyarrow_compute as pc

#: The URL's query parameter that asks for Iceberg run rows when the warehouse is created.
ICEBERG_PARAM = "iceberg"
#: The extra that installs pyiceberg.
ICEBERG_EXTRA = 'pip install "rankhouse[iceberg]"'
#: The SQL catalog's name (its rows in ``iceberg_tables``), the namespace and the table.
CATALOG = "rankhouse"
TABLE = ("rankhouse", "run_rows")
#: How many times a writer that lost a commit to another rereads the table and tries again.
COMMIT_ATTEMPTS = 12
#: A manifest entry's status for a file its snapshot removed.
_DELETED = 2

_FIND_TABLE = """
SELECT metadata_location FROM iceberg_tables
WHERE catalog_name = :catalog AND table_namespace = :namespace AND table_name = :name
"""


def require_pyiceberg() -> None:
    """Raise one clear error when pyiceberg is not installed."""
    if find_spec("pyiceberg") is None:
        raise RankhouseError(
            "this warehouse keeps its run rows in Apache Iceberg, which needs pyiceberg; "
            f"install it with: {ICEBERG_EXTRA}"
        )


def split_url(url: str) -> tuple[str, str | None]:
    """``url`` without its ``iceberg`` parameter, and that parameter's location (or None)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    found = [value for key, value in query if key == ICEBERG_PARAM]
    if not found:
        return url, None
    if not found[-1]:
        raise RankhouseError(
            "the URL's iceberg parameter names no location: write ?iceberg=/shared/folder "
            "(or file:///..., s3://bucket/prefix)"
        )
    rest = urlencode([(key, value) for key, value in query if key != ICEBERG_PARAM])
    return urlunsplit(parts._replace(query=rest)), found[-1]


def location_url(location: str) -> str:
    """A location as pyiceberg's file IO reads it: a plain path becomes ``file://`` absolute."""
    if "://" in location:
        return location.rstrip("/")
    return Path(location).expanduser().resolve().as_uri()


def open_rows(store, location: str | None) -> IcebergRows | None:
    """The Iceberg table of the PostgreSQL ``store`` (just opened and checked), made when
    ``location`` is given and the warehouse holds no run rows yet; None when the warehouse
    keeps its run rows in its own tables.

    Raises:
        RankhouseError: pyiceberg is missing; ``location`` given for a warehouse that keeps
            run rows in PostgreSQL, or read-only on one without the table, or naming another
            place than the table's.
    """
    with store.connect() as conn:
        names = store.object_names(conn)
        stored = None
        if "iceberg_tables" in names:
            stored = conn.execute(
                _FIND_TABLE, {"catalog": CATALOG, "namespace": TABLE[0], "name": TABLE[1]}
            ).scalar()
        if stored is None and location is None:
            return None
        if stored is None:
            _check_may_create(store, conn)
    require_pyiceberg()
    rows = IcebergRows(store, location, create=stored is None)
    if location is not None and not rows.location.startswith(location_url(location)):
        raise RankhouseError(
            f"the warehouse {store.where} keeps its run rows in Iceberg at {rows.location}, not "
            f"at {location}: leave the iceberg parameter out of the URL (it is read from the "
            "warehouse)"
        )
    return rows


def _check_may_create(store, conn) -> None:
    if store.read_only:
        raise RankhouseError(
            f"the warehouse {store.where} keeps its run rows in PostgreSQL: an Iceberg table is "
            "made only by a command that writes, when the warehouse is created"
        )
    if conn.execute("SELECT EXISTS (SELECT 1 FROM run_rows)").scalar():
        raise RankhouseError(
            f"the warehouse {store.where} already keeps run rows in PostgreSQL: where run rows "
            "live is chosen when the warehouse is created (?iceberg=LOCATION on its first "
            "command); leave the parameter out, or create a new warehouse with it "
            "(docs/scaling.md)"
        )


def _schema():
    """The table's columns, as the server's ``run_rows`` has them."""
    field = types.NestedField
    return schema_module.Schema(
        field(1, "run_id", types.IntegerType(), required=True),
        field(2, "query_id", types.StringType(), required=True),
        field(3, "doc_id", types.StringType(), required=True),
        field(4, "rank", types.IntegerType(), required=False),
        field(5, "score", types.DoubleType(), required=True),
    )


class IcebergRows:
    """The run rows of a PostgreSQL warehouse in its Iceberg table.

    Args:
        store: the PostgreSQL store whose schema holds the SQL catalog's tables.
        location: where a new table's files go (only read when ``create``).
        create: make the catalog's tables, the namespace and the table (two processes
            creating at once: the second finds the first's table).
    """

    def __init__(self, store, location: str | None, *, create: bool) -> None:
        url = store.engine.url.render_as_string(hide_password=False)
        properties = {"uri": url, "init_catalog_tables": "true" if create else "false"}
        if location is not None:
            properties["warehouse"] = location_url(location)
        self.catalog = catalog_sql.SqlCatalog(CATALOG, **properties)
        self.where = store.where
        if create:
            self._create()
        self.table = self.catalog.load_table(TABLE)

    def _create(self) -> None:
        """The namespace and the table. Not partitioned: each append writes files holding one
        run, whose column statistics (``run_id`` from min to max) let a scan or a delete skip
        every other run's files; pyiceberg's partitioned write would sort the whole run
        first (four times the time and eight times the memory of W1's append)."""
        try:
            self.catalog.create_namespace_if_not_exists(TABLE[0])
            self.catalog.create_table_if_not_exists(
                TABLE,
                _schema(),
                properties={"write.parquet.compression-codec": "zstd", "format-version": "2"},
            )
        except (exceptions.TableAlreadyExistsError, exceptions.NamespaceAlreadyExistsError):
            pass  # another process made it meanwhile

    @property
    def location(self) -> str:
        """Where the table's files live."""
        return self.table.location()

    def append(self, rows: pa.Table) -> None:
        """Add ``rows`` (``run_id, query_id, doc_id, rank, score``) in one Iceberg commit."""
        rows = rows.cast(self.table.schema().as_arrow())
        self._committed(lambda table: table.append(rows))

    def delete(self, run_ids: Iterable[int]) -> None:
        """Remove the rows of the runs ``run_ids`` in one commit (whole files: each holds one
        run, so nothing is rewritten). Their files stay on the shared path
        until :meth:`expire` forgets the snapshots that still name them."""
        ids = sorted({int(i) for i in run_ids})
        if ids:
            self._committed(lambda table: table.delete(expressions.In("run_id", ids)))

    def rows_of(self, run_id: int) -> pa.Table:
        """The rows of one run (``query_id, doc_id, rank, score``) in query and document byte
        order, as a pruned run's archive keeps them."""
        with self.scan(run_id, ("query_id", "doc_id", "rank", "score")) as batches:
            rows = batches.read_all()
        order = pc.sort_indices(
            rows, sort_keys=[("query_id", "ascending"), ("doc_id", "ascending")]
        )
        return rows.take(order)

    def count(self, run_id: int) -> int:
        """How many rows one run has in the table."""
        with self.scan(run_id, ("run_id",)) as batches:
            return batches.read_all().num_rows

    def put_back(self, rows: pa.Table) -> None:
        """Append a pruned run's ``rows`` (``run_id`` first) again, after deleting any the run
        still has: a restore made twice (the first one's catalogue change lost) stays whole."""
        run_ids = pc.unique(rows.column("run_id")).to_pylist()
        with warnings.catch_warnings():  # pyiceberg's word when there was none: as meant
            warnings.filterwarnings("ignore", "Delete operation did not match any records")
            self.delete(run_ids)
        self.append(rows)

    def delete_unnamed(self, run_ids: Iterable[int]) -> None:
        """:meth:`delete` the rows of runs that the catalogue no longer names; a failure is a
        warning (what the caller did is committed; the rows stay as orphans)."""
        try:
            self.delete(run_ids)
        except (RankhouseError, OSError, exceptions.CommitFailedException) as exc:
            warnings.warn(
                f"the rows of the runs {sorted(run_ids)} stay in the Iceberg table of "
                f"{self.where} as orphans (no run names them): {first_line(exc)}",
                RankhouseWarning,
                stacklevel=2,
            )

    def _committed(self, change) -> None:
        """Apply ``change`` to the table; on a conflict with another writer, reread the table
        and apply it again."""
        for attempt in range(COMMIT_ATTEMPTS):
            try:
                change(self.table)
                return
            except exceptions.CommitFailedException:
                if attempt == COMMIT_ATTEMPTS - 1:
                    raise RankhouseError(
                        f"the Iceberg table of {self.where} kept changing under this writer "
                        f"({COMMIT_ATTEMPTS} commits lost to other writers): run again"
                    ) from None
                time.sleep(random.uniform(0.01, 0.05) * 2 ** min(attempt, 5))
                self.table = self.catalog.load_table(TABLE)

    @contextmanager
    def scan(self, run_id: int, columns: tuple[str, ...]) -> Iterator[pa.RecordBatchReader]:
        """The rows of one run (its ``columns``) as a stream of Arrow batches."""
        self.table = self.catalog.load_table(TABLE)  # what others committed since
        scan = self.table.scan(
            row_filter=expressions.EqualTo("run_id", int(run_id)), selected_fields=columns
        )
        try:
            yield scan.to_arrow_batch_reader()
        except (OSError, duckdb.Error, DatabaseError) as exc:  # read as DuckDB takes them
            reason = re.sub(r"^.*?(?=\[Errno|Failed|No such)", "", first_line(exc))
            reason = reason.split(". Detail:")[0]
            raise RankhouseError(
                f"cannot read the rows of run {run_id} from the Iceberg table at "
                f"{self.location}: {reason} (a data file the table names is missing or "
                "unreadable: restore it from a backup of the shared path, docs/scaling.md)"
            ) from None

    def run_ids(self) -> dict[int, datetime]:
        """The run ids that have rows in the table, with when their rows were written (read
        from the data files' statistics: each file holds one run's rows)."""
        self.table = self.catalog.load_table(TABLE)
        if self.table.current_snapshot() is None:
            return {}
        written = {s.snapshot_id: s.timestamp_ms for s in self.table.snapshots()}
        entries = self.table.inspect.entries().select(["status", "snapshot_id", "readable_metrics"])
        found: dict[int, datetime] = {}
        for entry in entries.to_pylist():
            if entry["status"] == _DELETED:
                continue
            bounds = entry["readable_metrics"]["run_id"]
            moment = _aware(written.get(entry["snapshot_id"], 0))
            for run_id in {bounds["lower_bound"], bounds["upper_bound"]}:
                found[run_id] = max(moment, found.get(run_id, moment))
        return found

    def orphans(self, catalogue_ids: Iterable[int], *, age: timedelta) -> list[int]:
        """Run ids with rows in the table, named by no catalogue row, last written more than
        ``age`` ago (a writer still publishing holds its catalogue row uncommitted: its rows
        are younger than any sensible ``age``)."""
        known = {int(i) for i in catalogue_ids}
        before = datetime.now(UTC) - age
        return sorted(
            run_id
            for run_id, changed in self.run_ids().items()
            if run_id not in known and _aware(changed) < before
        )

    def expire(self, age: timedelta) -> int:
        """Forget the snapshots older than ``age`` (the current one always stays) and remove
        the data files that only they named: the rows of deleted runs. Returns how many files
        were removed. (pyiceberg's expiry rewrites the metadata only; files that no snapshot
        ever named, of a writer killed mid-append, are the object store's lifecycle rules'.)"""
        self.table = self.catalog.load_table(TABLE)
        named = self._named_files()
        older = datetime.now(UTC) - age
        self.table.maintenance.expire_snapshots().older_than(older).commit()
        self.table = self.catalog.load_table(TABLE)
        gone = sorted(named - self._named_files())
        for path in gone:
            self.table.io.delete(path)
        return len(gone)

    def _named_files(self) -> set[str]:
        """The data files some snapshot of the table names."""
        if self.table.current_snapshot() is None:
            return set()
        return set(self.table.inspect.all_data_files().column("file_path").to_pylist())

    def data_bytes(self) -> int:
        """The bytes of the data files the current snapshot reads."""
        self.table = self.catalog.load_table(TABLE)
        if self.table.current_snapshot() is None:
            return 0
        found = self.table.inspect.files()
        return int(pc.sum(found.column("file_size_in_bytes")).as_py() or 0)

    def close(self) -> None:
        engine = getattr(self.catalog, "engine", None)
        if engine is not None:
            engine.dispose()


def _aware(moment) -> datetime:
    if isinstance(moment, int | float):  # milliseconds since the epoch
        return datetime.fromtimestamp(moment / 1000, UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
