"""Publishing to the server what was parsed, checked and stored in a local staging warehouse.

An ingest into a server warehouse reads its source in a local in-memory DuckDB warehouse
(the same code and messages as a file warehouse), then :func:`publish` copies what it stored
to the server in one transaction. ``trec-eval --db postgresql://...`` evaluates locally too,
then :func:`publish_all` copies the qrels, the run and the evaluations.

Where each qrels set or run lands is the catalogue's question, which the ingest answers: the
caller passes ``place`` (:func:`rankhouse.ingest.reuse.placed`), which finds content already
on the server (same hash, parse options and tag: not copied again) or the same rows under a
taken name, else claims a name and writes the catalogue row; this module moves the rows.
Transaction-scoped advisory locks on each content hash and name make a concurrent ingest of
the same content wait, then find it stored; the UNIQUE constraints are the guarantee behind
them (a writer that bypassed the locks gets a ConflictError).

**Binary COPY from Arrow batches.** A server warehouse receives rows by ``COPY ... FROM
STDIN (FORMAT binary)`` (:func:`copy_into`). Binary, not text: a double crosses bit for bit
(a score changed in its last bit could reorder tied documents), and no character of an id
needs escaping. Building each row in Python costs about two seconds a million rows; here
numpy lays out a whole batch at once. The format (PostgreSQL documentation, "COPY", Binary
Format): a signature, then per row the field count (int16) and per field its byte length
(int32, -1 for NULL) and its bytes, all integers big-endian; a trailer of -1 (int16) ends the
stream.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, NamedTuple

from ...duck import load_package, register
from ...lazy import numpy as np
from ...lazy import pandas as pd
from ...lazy import pyarrow as pa
from ...lazy import pyarrow_compute as pc
from ..base import EVALUATION_ROWS, Backend, Connection
from ..duckdb_file import DuckDBFile
from .connection import lock
from .workspace import JUDGMENTS, RUN_ROWS, RowCache, row_identity, select_rows

_RUN_COPY = ("run_rows", ("run_id", "query_id", "doc_id", "rank", "score"))
_JUDGMENT_COPY = ("judgments", ("qrels_id", "query_id", "doc_id", "grade"))
#: A qrels set with intents (migration 0018) brings its intents' rows too.
_INTENT_COPY = ("judgment_intents", ("qrels_id", "query_id", "intent", "doc_id", "grade"))


class Staged(NamedTuple):
    """A qrels set or run of the staging warehouse, as :func:`publish` hands it to ``place``.

    Attributes:
        kind: ``'run'`` or ``'qrels'``.
        row: its catalogue row in the staging warehouse (``id``: its id there).
        table: the server's temporary table holding its rows (``query_id, doc_id, rank,
            score`` or ``query_id, doc_id, grade``) once ``upload`` has run.
        upload: copies its rows there, the first time it is called (before the first read).
        bring_stored: for a server whose run rows live in Iceberg, copies the rows of the
            stored run of the id it is given to a temporary ``run_rows``, which the
            comparisons read in this transaction (None otherwise).
    """

    kind: str
    row: dict
    table: str
    upload: Callable[[], None]
    bring_stored: Callable[[int], None] | None = None


#: Where a staged qrels set or run lands: ``place(conn, result, staged)`` on the server's
#: transaction returns the result as stored there, and whether it is new (its catalogue row
#: written, its rows still to copy) or content the server holds already.
Place = Callable[[Connection, Any, Staged], tuple[Any, bool]]


def publish(server: Backend, staging: DuckDBFile, results: list, place: Place) -> list:
    """Copy the qrels sets or runs ``results`` of ``staging`` to ``server`` in one transaction,
    each where ``place`` puts it (:func:`rankhouse.ingest.reuse.placed`).

    Returns:
        The results as stored on the server (``created=False`` for content found there).

    Raises:
        ConflictError: from ``place``: a name is taken by different content.
    """
    kind = results[0].kind
    table = "qrels_sets" if kind == "qrels" else "runs"
    with staging.connect() as source:
        rows = {
            r.id: dict(
                source.execute(f"SELECT * FROM {table} WHERE id = :id", {"id": r.id})
                .mappings()
                .one()
            )
            for r in results
        }
    published = []
    created: set[int] = set()
    iceberg = server.iceberg if kind == "run" else None
    appended: list[int] = []
    try:
        with server.transaction() as conn:
            lock(conn, [_content_key(kind, row) for row in rows.values()])
            lock(conn, [f"name:{table}:{row['name']}" for row in rows.values()])
            for result in results:
                staged = _staged(conn, staging, kind, result.id, rows[result.id], iceberg)
                stored, new = place(conn, result, staged)
                if new and iceberg is not None:  # committed before the catalogue row
                    appended.append(stored.id)
                    iceberg.append(_run_rows(staging, result.id, stored.id))
                elif new:
                    copy = _JUDGMENT_COPY if kind == "qrels" else _RUN_COPY
                    _copy_stored(conn, staging, copy, result.id, stored.id)
                    if kind == "qrels" and _has_intents(rows[result.id]):
                        _copy_stored(conn, staging, _INTENT_COPY, result.id, stored.id)
                if new:
                    created.add(result.id)
                published.append(stored)
    except BaseException:
        if appended:  # rows no catalogue row will name: removed (else left as orphans)
            with suppress(Exception):
                iceberg.delete(appended)
        raise
    _cache_published(staging, kind, rows, [r for r in results if r.id in created])
    return published


def _cache_published(staging: DuckDBFile, kind: str, rows: dict, results: list) -> None:
    """Keep the rows just stored on the server in the local cache (the next evaluation on
    this machine reads them from there instead of fetching them back)."""
    cache = RowCache.from_environment()
    if cache is None or not results:
        return
    stored = JUDGMENTS if kind == "qrels" else RUN_ROWS
    with staging.connect() as conn:
        for result in results:
            identity = row_identity(stored, rows[result.id])
            cache.store(conn.duck, select_rows(stored, result.id), identity)


@dataclass(frozen=True)
class _Stored:
    """A qrels set or run of the scratch warehouse, as :func:`publish` takes it."""

    kind: str
    id: int
    name: str
    created: bool = True
    num_queries: int = 0
    num_rows: int = 0


def publish_all(server: Backend, scratch: DuckDBFile, place: Place) -> None:
    """Publish every qrels set, run and evaluation of ``scratch`` to ``server`` (trec-eval's
    evaluations are computed locally), each qrels set and run where ``place`` puts it. Stored
    evaluations with the same key are replaced."""
    with scratch.connect() as conn:
        qrels = conn.execute("SELECT id, name FROM qrels_sets ORDER BY id").all()
        runs = conn.execute("SELECT id, name, system_tag FROM runs ORDER BY id").all()
        evaluations = [
            dict(row) for row in conn.execute("SELECT * FROM evaluations ORDER BY id").mappings()
        ]
    ids: dict[tuple[str, int], int] = {}
    for kind, rows in (("qrels", qrels), ("run", runs)):
        if rows:
            results = [_Stored(kind, r.id, r.name) for r in rows]
            for old, new in zip(rows, publish(server, scratch, results, place), strict=True):
                ids[(kind, old.id)] = new.id
    if not evaluations:
        return
    with server.transaction() as conn:
        pairs = [(ids[("run", r["run_id"])], ids[("qrels", r["qrels_id"])]) for r in evaluations]
        lock(conn, [f"evaluations:{run_id}:{qrels_id}" for run_id, qrels_id in pairs])
        new_ids = {}
        for row in evaluations:
            values = {k: v for k, v in row.items() if k != "id"}
            values["run_id"] = ids[("run", row["run_id"])]
            values["qrels_id"] = ids[("qrels", row["qrels_id"])]
            for table in EVALUATION_ROWS:
                conn.execute(_DELETE_SAME_ROWS.format(table=table), values)
            conn.execute(_DELETE_SAME_EVALUATION, values)
            columns = ", ".join(values)
            new_ids[row["id"]] = conn.execute(
                (
                    f"INSERT INTO evaluations ({columns}) "
                    f"VALUES ({', '.join(':' + c for c in values)}) RETURNING id"
                ),
                values,
            ).scalar_one()
        with scratch.connect() as source:
            duck = source.duck
            register(duck, "_rankhouse_ids", _id_frame(new_ids))  # loads the relation API too
            try:
                for table, columns in _EVALUATION_COPY.items():
                    rows = duck.sql(
                        f"SELECT m.new_id AS evaluation_id, {columns} "
                        f"FROM {table} AS v JOIN _rankhouse_ids AS m "
                        "ON m.old_id = v.evaluation_id"
                    )
                    copy_into(conn, table, rows.to_arrow_reader(batch_size=100_000))
            finally:
                duck.unregister("_rankhouse_ids")


_SAME_EVALUATION = (
    "SELECT id FROM evaluations WHERE run_id = :run_id AND qrels_id = :qrels_id "
    "AND measure = :measure AND relevance_level = :relevance_level "
    "AND missing_queries = :missing_queries AND options = :options"
)
_DELETE_SAME_ROWS = f"DELETE FROM {{table}} WHERE evaluation_id IN ({_SAME_EVALUATION})"
#: The rows of an evaluation (:data:`~rankhouse.backends.base.EVALUATION_ROWS`) besides its id.
_EVALUATION_COPY = {"evaluation_values": "v.query_id, v.value"}
_EVALUATION_COPY["evaluation_judged"] = "v.query_id, v.k, v.judged"
_DELETE_SAME_EVALUATION = f"DELETE FROM evaluations WHERE id IN ({_SAME_EVALUATION})"


def _id_frame(ids: dict[int, int]):
    return pd.DataFrame({"old_id": list(ids), "new_id": list(ids.values())}, dtype="int32")


def _content_key(kind: str, row: dict) -> str:
    tag = row.get("system_tag", "")
    return f"content:{kind}:{row['content_sha256']}:{row['parse_options']}:{tag}"


#: The server's temporary table holding rows to compare with stored ones (dropped at commit).
_INCOMING = "_rankhouse_incoming"
_INCOMING_COLUMNS = {
    "run": 'query_id TEXT COLLATE "C", doc_id TEXT COLLATE "C", rank INTEGER, '
    "score DOUBLE PRECISION",
    "qrels": 'query_id TEXT COLLATE "C", doc_id TEXT COLLATE "C", grade INTEGER',
}


def _staged(
    conn, staging: DuckDBFile, kind: str, staged_id: int, row: dict, iceberg=None
) -> Staged:
    """The staged qrels set or run ``row``, its rows uploaded to a temporary table of the
    server the first time a comparison needs them (and a stored run's rows from ``iceberg``,
    the store's :class:`~.iceberg.IcebergRows` if its run rows live there)."""
    table, (id_column, *columns) = _RUN_COPY if kind == "run" else _JUDGMENT_COPY
    uploaded = []

    def upload() -> None:
        if uploaded:
            return
        conn.execute(f"DROP TABLE IF EXISTS {_INCOMING}")  # another tag's, this transaction
        conn.execute(
            f"CREATE TEMPORARY TABLE {_INCOMING} ({_INCOMING_COLUMNS[kind]}) ON COMMIT DROP"
        )
        load_package()  # the rows are read through the relation API
        with staging.connect() as source:
            rows = source.duck.sql(
                f"SELECT {', '.join(columns)} FROM {table} WHERE {id_column} = $id",
                params={"id": staged_id},
            )
            copy_into(conn, _INCOMING, rows.to_arrow_reader(batch_size=100_000))
        uploaded.append(True)

    brought: set[int] = set()

    def bring_stored(stored_id: int) -> None:
        if stored_id in brought:
            return
        if not brought:  # pg_temp comes first in the search path: it shadows run_rows
            conn.execute("DROP TABLE IF EXISTS pg_temp.run_rows")
            conn.execute(
                "CREATE TEMPORARY TABLE run_rows (run_id INTEGER, "
                f"{_INCOMING_COLUMNS['run']}) ON COMMIT DROP"
            )
        with iceberg.scan(stored_id, _RUN_COPY[1]) as rows:
            copy_into(conn, "pg_temp.run_rows", rows)
        brought.add(stored_id)

    return Staged(kind, row, _INCOMING, upload, bring_stored if iceberg is not None else None)


def _has_intents(row: dict) -> bool:
    """Whether a qrels set's catalogue row is one of a set with intents (its parse options
    say so: ``rankhouse.ingest.intents``)."""
    return '"intents": true' in row["parse_options"]


def _copy_stored(conn, staging: DuckDBFile, copy: tuple, old_id: int, new_id: int) -> None:
    """COPY the rows of one qrels set or run from the staging warehouse under its new id."""
    with _stored_rows(staging, copy, old_id, new_id) as rows:
        copy_into(conn, copy[0], rows)


def _run_rows(staging: DuckDBFile, old_id: int, new_id: int) -> pa.Table:
    """The rows of one staged run under its new id, as the server's ``run_rows`` holds them."""
    with _stored_rows(staging, _RUN_COPY, old_id, new_id) as rows:
        return rows.read_all()


@contextmanager
def _stored_rows(staging: DuckDBFile, copy: tuple, old_id: int, new_id: int):
    """The rows of one staged qrels set or run under its new id, as Arrow batches."""
    table, columns = copy
    id_column, *rest = columns
    load_package()  # the rows are read through the relation API
    with staging.connect() as source:
        rows = source.duck.sql(
            f"SELECT CAST($new AS INTEGER) AS {id_column}, {', '.join(rest)} FROM {table} "
            f"WHERE {id_column} = $old",
            params={"new": new_id, "old": old_id},
        )
        yield rows.to_arrow_reader(batch_size=100_000)


# --- binary COPY from Arrow batches ---------------------------------------------------------------


#: The stream's start: signature, flags (no OIDs), header extension length.
HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
#: The stream's end.
TRAILER = (-1).to_bytes(2, "big", signed=True)

#: Arrow types sent as fixed-width values, and their big-endian numpy types.
_FIXED = {"int32": ">i4", "int64": ">i8", "double": ">f8"}


def encode(batch: pa.RecordBatch) -> bytes:
    """The rows of ``batch`` in the binary COPY format (without header and trailer).

    Columns are int32 (PostgreSQL ``integer``), int64 (``bigint``), double (``double
    precision``) or strings (``text``, UTF-8 as stored); any may hold NULLs.

    Each field becomes a binary array of its encoded bytes (length and value), and Arrow
    joins them row by row: the joined array's data is the stream.
    """
    rows = batch.num_rows
    if rows == 0:
        return b""
    count = _fixed_binary(np.full((rows, 1), batch.num_columns, dtype=">i2"))
    fields = [_encoded(column) for column in batch.columns]
    joined = pc.binary_join_element_wise(count, *fields, pa.scalar(b"", pa.binary()))
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int32)[joined.offset :]
    return joined.buffers()[2].to_pybytes()[offsets[0] : offsets[rows]]


#: A NULL field: its length, -1, and no bytes.
_NULL = (-1).to_bytes(4, "big", signed=True)


def _encoded(column: pa.Array) -> pa.Array:
    """One column's fields: per row its byte length (int32) and its bytes, or -1 for NULL."""
    name = str(column.type)
    if name in _FIXED:
        values = column.fill_null(0).to_numpy(zero_copy_only=False).astype(_FIXED[name])
        width = values.dtype.itemsize
        fields = np.empty((len(column), 4 + width), dtype=np.uint8)
        fields[:, :4] = np.array([width], dtype=">i4").view(np.uint8)
        fields[:, 4:] = values.view(np.uint8).reshape(-1, width)
        encoded = _fixed_binary(fields)
    else:
        text = column.cast(pa.binary())  # the UTF-8 bytes as stored
        lengths = pc.binary_length(text).fill_null(0).to_numpy(zero_copy_only=False)
        prefix = _fixed_binary(lengths.astype(">i4").reshape(-1, 1))
        encoded = pc.binary_join_element_wise(
            prefix, text.fill_null(b""), pa.scalar(b"", pa.binary())
        )
    if column.null_count:
        encoded = pc.if_else(column.is_valid(), encoded, pa.scalar(_NULL, pa.binary()))
    return encoded


def _fixed_binary(values: np.ndarray) -> pa.Array:
    """A binary array whose row i holds the bytes of ``values[i]`` (one fixed width)."""
    raw = np.ascontiguousarray(values).view(np.uint8).reshape(len(values), -1)
    width = raw.shape[1]
    offsets = np.arange(0, (len(raw) + 1) * width, width, dtype=np.int32)
    return pa.Array.from_buffers(
        pa.binary(), len(raw), [None, pa.py_buffer(offsets), pa.py_buffer(raw)]
    )


def copy_into(conn: Connection, table: str, batches) -> None:
    """Binary COPY of Arrow record batches into ``table`` on the connection's transaction
    (doubles cross bit for bit, ids as stored)."""
    batches = iter(batches)
    first = next(batches, None)
    if first is None:
        return
    names = ", ".join(first.schema.names)
    raw = conn.driver_connection
    with (
        raw.cursor() as cursor,
        cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT binary)") as copy,
    ):
        copy.write(HEADER)
        for batch in itertools.chain([first], batches):
            copy.write(encode(batch))
        copy.write(TRAILER)


# --- a run's rows taken out and put back (retention) ------------------------------------------

#: Bytes a run row takes on a server, its index included (issue 37: 66.8 on DL19 nights).
RUN_ROW_BYTES = 66.8


def with_run_id(rows: pa.Table, run_id: int) -> pa.Table:
    """``rows`` (``query_id, doc_id, rank, score``) under the ``run_id`` column the server's
    table has first, in the types its COPY takes."""
    ids = pa.array([int(run_id)] * rows.num_rows, type=pa.int32())
    return pa.table(
        [
            ids,
            rows.column("query_id").cast(pa.string()),
            rows.column("doc_id").cast(pa.string()),
            rows.column("rank").cast(pa.int32()),
            rows.column("score").cast(pa.float64()),
        ],
        names=list(_RUN_COPY[1]),
    )


def vacuum_run_rows(engine) -> str:
    """Plain ``VACUUM`` of ``run_rows`` (outside a transaction, as the server requires): the
    space of deleted rows is marked reusable by the table (the files keep their size; ``VACUUM
    FULL``, the owner's, rewrites them under an exclusive lock). A login that does not own the
    table may not vacuum it: autovacuum then does it, in its own time. What happened, said."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        owner = conn.exec_driver_sql(
            "SELECT pg_has_role(current_user, relowner, 'USAGE') FROM pg_class "
            "WHERE oid = to_regclass('run_rows')"
        ).scalar()
        if not owner:
            return (
                "not vacuumed: this login does not own run_rows (autovacuum makes the space "
                "reusable; the owner may run VACUUM run_rows)"
            )
        conn.exec_driver_sql("VACUUM run_rows")
    return "VACUUM run_rows: the space of the deleted rows is reusable by new rows"
