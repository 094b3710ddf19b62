"""Where data is kept and where measures are computed: the one seam between the two.

A warehouse keeps its data in one of two stores; measures are always computed by DuckDB, in
process, by the same SQL (so both stores give the same numbers by construction):

=====================  =================================  ====================================
                       DuckDB file (the default)          PostgreSQL server (shared)
=====================  =================================  ====================================
ingest                 parse, check and write in the      parse and check into a scratch
                       file, in one transaction           in-memory DuckDB warehouse, then
                                                          :func:`publish` it to the server in
                                                          one transaction (binary COPY,
                                                          :mod:`.pg_copy`) and keep its rows
                                                          in this machine's :mod:`.row_cache`
evaluation reads       the file itself                    a :class:`~.workspace.Workspace`:
                                                          in-memory DuckDB holding the rows
                                                          evaluated, from the row cache or
                                                          fetched (Arrow through ADBC)
evaluation writes      INSERT ... SELECT on the file's    binary COPY, in the transaction
                       own connection                     that stores the evaluations
queries a run          the file                           the workspace when the rows are
answered                                                  there (or cached, or about to be
                                                          evaluated), else the server
writers at once        one process (DuckDB's file lock)   many: advisory locks on content,
                                                          names and evaluations; UNIQUE
                                                          constraints behind them
``rankhouse sql``      the file opened read-only          a read-only transaction, one
                                                          statement (``db.ServerConnection``)
catalogue, history,    plain SQL on the store             the same SQL on the store
compare, regress
=====================  =================================  ====================================

Everything else in rankhouse asks this module, never the dialect, where to run.
"""

from __future__ import annotations

import hashlib
import itertools
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .duck import load_package, register
from .errors import ConflictError, RankhouseError, RankhouseWarning

if TYPE_CHECKING:
    from .db import Connection
    from .warehouse import Warehouse

#: The extra that installs the PostgreSQL drivers.
POSTGRES_EXTRA = 'pip install "rankhouse[postgres]"'

_RUN_COPY = ("run_rows", ("run_id", "query_id", "doc_id", "rank", "score"))
_JUDGMENT_COPY = ("judgments", ("qrels_id", "query_id", "doc_id", "grade"))


def require_postgres_drivers() -> None:
    """Raise one clear error when the PostgreSQL drivers are not installed."""
    from importlib.util import find_spec

    # looked up, not imported: ADBC (and pyarrow with it) is imported only to fetch rows
    for package in ("sqlalchemy", "psycopg", "adbc_driver_postgresql"):
        if find_spec(package) is None:
            raise RankhouseError(
                f"a postgresql:// warehouse needs the PostgreSQL drivers ({package} is "
                f"missing); install them with: {POSTGRES_EXTRA}"
            )


def is_server(target) -> bool:
    """True when a warehouse target (a path, URL or None for the default) names a server."""
    from .warehouse import resolve_target

    return resolve_target(target).startswith("postgresql")


def is_shared(wh: Warehouse) -> bool:
    """True when the warehouse lives on a server (computation happens in a local workspace)."""
    return wh.dialect == "postgresql"


# --- ingest: parse locally, publish to the server -----------------------------------------------


def ingest(wh: Warehouse, kind: str, source: Any, options: dict[str, Any]):
    """Ingest into a server warehouse: parse and check in a scratch DuckDB warehouse (the same
    code and messages as a file warehouse), then publish what it stored in one transaction.

    Returns what :func:`rankhouse.ingest.ingest_qrels` / ``ingest_run`` return.
    """
    from .ingest import ingest_qrels, ingest_run

    replace = bool(options.pop("replace", False))
    new_version = bool(options.pop("new_version", False))
    scratch = wh.workspace().staging
    try:
        if kind == "qrels":
            return publish(wh, scratch, [ingest_qrels(scratch, source, **options)], replace)[0]
        with warnings.catch_warnings():  # the server's copy is checked (ingest_run's warning)
            warnings.simplefilter("ignore", RankhouseWarning)
            results = ingest_run(scratch, source, **options)
        return publish(wh, scratch, results, replace, new_version=new_version)
    finally:
        with scratch.transaction() as conn:  # empty for the next ingest (cheaper than a new one)
            for table in ("judgments", "qrels_sets", "run_rows", "runs"):
                conn.execute(f"DELETE FROM {table}")


def publish(
    wh: Warehouse, scratch: Warehouse, results: list, replace: bool, *, new_version: bool = False
) -> list:
    """Copy the qrels sets or runs ``results`` of ``scratch`` into ``wh`` in one transaction.

    Content already on the server (same hash, parse options and tag) is not copied again: its
    result says ``created=False``. Transaction-scoped advisory locks on each content hash and
    name make a concurrent ingest of the same content wait, then find it stored; the UNIQUE
    constraints are the guarantee behind them.

    With ``new_version``, a run whose name holds other content takes the next version name
    (``<name>@2``, ...; :func:`rankhouse.ingest.store.next_version`).

    Raises:
        ConflictError: a name is taken by different content and ``replace`` is false.
    """
    from dataclasses import replace as with_changes

    import sqlalchemy as sa

    from .ingest import store
    from .trec_eval.store import PARSE_OPTIONS as TREC_EVAL_COPY
    from .trec_eval.store import free_name

    kind = results[0].kind
    table = "qrels_sets" if kind == "qrels" else "runs"
    with scratch.connect() as source:
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
    try:
        with wh.transaction() as conn:
            _lock(conn, [_content_key(kind, row) for row in rows.values()])
            _lock(conn, [f"name:{table}:{row['name']}" for row in rows.values()])
            for result in results:
                row = rows[result.id]
                existing = _stored_content(conn, kind, row)
                if existing is not None:
                    published.append(with_changes(result, created=False, **existing))
                    continue
                if row["parse_options"] == TREC_EVAL_COPY:  # named as on a file: <tag>@<sha8>
                    name = free_name(conn, table, row["name"], row["content_sha256"])
                else:
                    name = store.claim_name(
                        conn, kind, row["name"], replace=replace, new_version=new_version
                    )
                values = {k: v for k, v in row.items() if k != "id"} | {"name": name}
                if kind == "qrels":
                    new_id = store.insert_qrels_set(conn, values)
                    _copy_stored(conn, scratch, _JUDGMENT_COPY, result.id, new_id)
                else:
                    new_id = store.insert_run(conn, values)
                    _copy_stored(conn, scratch, _RUN_COPY, result.id, new_id)
                published.append(with_changes(result, id=new_id, name=name))
                created.add(result.id)
    except sa.exc.IntegrityError as exc:  # a writer outside rankhouse's locks got there first
        raise ConflictError(f"another writer stored the same name or content: {exc.orig}") from None
    _cache_published(scratch, kind, rows, [r for r in results if r.id in created])
    return published


def _cache_published(scratch: Warehouse, kind: str, rows: dict, results: list) -> None:
    """Keep the rows just stored on the server in the local cache (the next evaluation on
    this machine reads them from there instead of fetching them back)."""
    from .row_cache import RowCache
    from .workspace import JUDGMENTS, RUN_ROWS, row_identity, select_rows

    cache = RowCache.from_environment()
    if cache is None or not results:
        return
    stored = JUDGMENTS if kind == "qrels" else RUN_ROWS
    with scratch.connect() as conn:
        duck = scratch.duckdb_connection(conn)
        for result in results:
            identity = row_identity(stored, rows[result.id])
            cache.store(duck, select_rows(stored, result.id), identity)


def publish_all(wh: Warehouse, scratch: Warehouse) -> None:
    """Publish every qrels set, run and evaluation of ``scratch`` into ``wh`` (trec-eval's
    evaluations are computed locally). Stored evaluations with the same key are replaced."""
    from .ingest.api import IngestResult

    with scratch.connect() as conn:
        qrels = conn.execute("SELECT id, name FROM qrels_sets ORDER BY id").all()
        runs = conn.execute("SELECT id, name, system_tag FROM runs ORDER BY id").all()
        evaluations = [
            dict(row) for row in conn.execute("SELECT * FROM evaluations ORDER BY id").mappings()
        ]
    ids: dict[tuple[str, int], int] = {}
    for kind, rows in (("qrels", qrels), ("run", runs)):
        if rows:
            results = [IngestResult(kind, r.id, r.name, None, True, 0, 0, "") for r in rows]
            for old, new in zip(rows, publish(wh, scratch, results, False), strict=True):
                ids[(kind, old.id)] = new.id
    if not evaluations:
        return
    with wh.transaction() as conn:
        lock_evaluations(
            wh,
            conn,
            [(ids[("run", r["run_id"])], ids[("qrels", r["qrels_id"])]) for r in evaluations],
        )
        new_ids = {}
        for row in evaluations:
            values = {k: v for k, v in row.items() if k != "id"}
            values["run_id"] = ids[("run", row["run_id"])]
            values["qrels_id"] = ids[("qrels", row["qrels_id"])]
            conn.execute(_DELETE_SAME_EVALUATION_VALUES, values)
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
            duck = scratch.duckdb_connection(source)
            register(duck, "_rankhouse_ids", _id_frame(new_ids))  # loads the relation API too
            try:
                rows = duck.sql(
                    "SELECT m.new_id AS evaluation_id, v.query_id, v.value "
                    "FROM evaluation_values AS v JOIN _rankhouse_ids AS m "
                    "ON m.old_id = v.evaluation_id"
                )
                copy_into(conn, "evaluation_values", rows.to_arrow_reader(batch_size=100_000))
            finally:
                duck.unregister("_rankhouse_ids")


_SAME_EVALUATION = (
    "SELECT id FROM evaluations WHERE run_id = :run_id AND qrels_id = :qrels_id "
    "AND measure = :measure AND relevance_level = :relevance_level "
    "AND missing_queries = :missing_queries AND options = :options"
)
_DELETE_SAME_EVALUATION_VALUES = (
    f"DELETE FROM evaluation_values WHERE evaluation_id IN ({_SAME_EVALUATION})"
)
_DELETE_SAME_EVALUATION = f"DELETE FROM evaluations WHERE id IN ({_SAME_EVALUATION})"


def _id_frame(ids: dict[int, int]):
    import pandas as pd

    return pd.DataFrame({"old_id": list(ids), "new_id": list(ids.values())}, dtype="int32")


def _content_key(kind: str, row: dict) -> str:
    tag = row.get("system_tag", "")
    return f"content:{kind}:{row['content_sha256']}:{row['parse_options']}:{tag}"


def lock_evaluations(wh: Warehouse, conn: Connection, pairs) -> None:
    """On a server, lock the evaluations of the (run id, qrels id) ``pairs`` for the rest of
    the transaction ``conn``, before it replaces any: two processes storing the same
    evaluation at once then store it once (the second replaces the first). A file has one
    writer at a time and needs none."""
    if is_shared(wh):
        _lock(conn, [f"evaluations:{run_id}:{qrels_id}" for run_id, qrels_id in pairs])


def _lock(conn: Connection, keys: list[str]) -> None:
    """Transaction advisory locks on ``keys``, always taken in the same order (no deadlock)."""
    for key in sorted(set(keys)):
        number = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
        conn.execute("SELECT pg_advisory_xact_lock(:k)", {"k": number})


def _stored_content(conn: Connection, kind: str, row: dict) -> dict | None:
    from .ingest import store

    if kind == "qrels":
        found = store.same_qrels(conn, row["content_sha256"], row["parse_options"])
        keys = {"num_rows": "num_judgments"}
    else:
        found = store.same_run(conn, row["content_sha256"], row["parse_options"], row["system_tag"])
        keys = {"num_rows": "num_rows"}
    if found is None:
        return None
    return {
        "id": found["id"],
        "name": found["name"],
        "num_queries": found["num_queries"],
        "num_rows": found[keys["num_rows"]],
    }


def _copy_stored(conn, scratch: Warehouse, copy: tuple, old_id: int, new_id: int) -> None:
    """COPY the rows of one qrels set or run from the scratch warehouse under its new id."""
    table, columns = copy
    id_column, *rest = columns
    load_package()  # the rows are read through the relation API
    with scratch.connect() as source:
        rows = scratch.duckdb_connection(source).sql(
            f"SELECT CAST($new AS INTEGER) AS {id_column}, {', '.join(rest)} FROM {table} "
            f"WHERE {id_column} = $old",
            params={"new": new_id, "old": old_id},
        )
        copy_into(conn, table, rows.to_arrow_reader(batch_size=100_000))


def copy_into(conn: Connection, table: str, batches) -> None:
    """Binary COPY of Arrow record batches into ``table`` on the connection's transaction
    (:mod:`rankhouse.pg_copy`: doubles cross bit for bit, ids as stored)."""
    from .pg_copy import HEADER, TRAILER, encode

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


# --- evaluation: compute in a local DuckDB ---------------------------------------------------


@contextmanager
def engine_connection(wh: Warehouse, run_ids, qrels_id: int) -> Iterator[Any]:
    """The DuckDB connection on which ``run_rows`` and ``judgments`` hold the given run and
    qrels rows (under their warehouse ids): the file's own, or the server's workspace."""
    if not is_shared(wh):
        with wh.connect() as conn:
            yield wh.duckdb_connection(conn)
            # keep the engine's temporary tables (rh_values, the ranking) on the connection
            # rather than rolling them back with this reading transaction
            conn.commit()
        return
    workspace = wh.workspace()
    workspace.load(run_ids, qrels_id)
    with workspace.scratch.connect() as conn:
        yield workspace.scratch.duckdb_connection(conn)
        conn.commit()


@contextmanager
def rows_connection(wh: Warehouse, run_ids, qrels_id: int, *, load: bool) -> Iterator[Connection]:
    """A connection on which ``run_rows`` and ``judgments`` hold the given rows, for queries
    about them (the queries each run answered): the file's own; for a server, the workspace
    when the rows are loaded there (or ``load``: they will be, for an evaluation), else the
    server itself, which counts a stored run's queries faster than it sends the rows."""
    if is_shared(wh):
        workspace = wh.workspace()
        if load or workspace.has(run_ids, qrels_id):  # loaded, or cheap to load
            workspace.load(run_ids, qrels_id)
            with workspace.scratch.connect() as conn:
                yield conn
            return
    with wh.connect() as conn:
        yield conn


def store_values(wh: Warehouse, conn: Connection, duck, ids: dict[tuple[int, int], int]) -> None:
    """Store the engine's values (``rh_values`` on ``duck``) of the evaluations ``ids``
    ((run id, measure index) -> evaluation id), in the transaction of ``conn``."""
    from .engine import VALUES_TABLE

    if not ids:
        return
    keys = list(ids)
    params = {
        "runs": [run_id for run_id, _ in keys],
        "idx": [idx for _, idx in keys],
        "ids": list(ids.values()),
    }
    select = (
        f"SELECT e.evaluation_id, v.query_id, v.value FROM {VALUES_TABLE} AS v JOIN "
        "(SELECT unnest($runs) AS run_id, unnest($idx) AS measure_idx, "
        "CAST(unnest($ids) AS INTEGER) AS evaluation_id) AS e "
        "ON e.run_id = v.run_id AND e.measure_idx = v.measure_idx"
    )
    if not is_shared(wh):  # the same connection: DuckDB moves the rows itself
        duck.execute(
            f"INSERT INTO evaluation_values (evaluation_id, query_id, value) {select}", params
        )
        return
    load_package()  # the rows are read through the relation API
    rows = duck.sql(select, params=params).to_arrow_reader(batch_size=100_000)
    copy_into(conn, "evaluation_values", rows)
