"""The direct path for the common large input: a one-tag TREC run file of regular lines.

Such a file is read by DuckDB's CSV reader straight into ``run_rows`` in one parallel pass,
with no stage table, so a 7-million-line run is parsed and written at once and held in memory
only as DuckDB's write buffers. The checks that follow (duplicates, tied scores) sort, in
numpy, each query's document hashes and scores (or 64-bit hashes of the whole run's rows when a
query's rows are not together), which is several times cheaper than a hash aggregate over
millions of distinct keys.

Any surprise (a second tag, an empty field, a score that is not a number, other whitespace)
raises :class:`~rankhouse.ingest.trec_text.FastPathFailed`; the transaction is rolled back
and the caller starts again on the stage path, which names the problem.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..background import Background
from ..catalog import writes
from ..duck import duckdb
from . import trec_text
from .hashing import (
    NUMPY_FROM,
    PAIR_HASH,
    TIE_HASH,
    BackgroundHash,
    count_repeats_each,
    counted_by_query,
    may_hold_numpy_rows,
    repeats_sql,
)
from .progress import IngestProgress
from .sources import Source

if TYPE_CHECKING:
    from ..backends.sql import Connection


@dataclass(frozen=True)
class StoredRun:
    """The run the direct path stored, or found already stored."""

    id: int
    name: str
    tag: str
    created: bool
    num_queries: int
    num_rows: int


class _AlreadyStored(Exception):
    """The same content is stored: leave the transaction (rolling back what was written)."""

    def __init__(self, run: StoredRun) -> None:
        super().__init__(run.name)
        self.run = run


def eligible(src: Source, mapping: dict[str, str]) -> tuple[str, str] | None:
    """(separator, tag) when ``src`` may take the direct path, else None."""
    if src.is_frame or src.format != "trec" or mapping:
        return None
    return trec_text.direct_run_tag(src)


def ingest(
    store,
    src: Source,
    separator: str,
    tag: str,
    *,
    name: str | None,
    order: str,
    options: str,
    compression: str,
    metadata: dict,
    replace: bool,
    new_version: bool = False,
    bar: IngestProgress,
) -> StoredRun:
    """Store the run file ``src`` (one tag ``tag``) in one transaction.

    Raises:
        FastPathFailed: the file does not fit the direct path (nothing was stored).
        InputError: a document appears twice for a query.
        ConflictError: ``name`` holds other content and ``replace`` is false.
    """
    run_name = name or tag
    try:
        with store.transaction() as conn:
            hasher = BackgroundHash(src.data_path, bar.bytes_done, src.label)
            if may_hold_numpy_rows(src.data_path):
                # its checks count in numpy, whose import (50 ms) can happen while DuckDB reads
                Background(_import_numpy, "rankhouse-numpy")
            if writes.name_taken(conn, "run", run_name):
                # same content under this name is no conflict: that needs the hash first
                _raise_if_stored(conn, hasher, options, tag)
                run_name = writes.claim_name(
                    conn, "run", run_name, replace=replace, new_version=new_version
                )
            run_id = conn.execute("SELECT nextval('run_ids')").scalar_one()
            duck = conn.duck
            bar.phase("reading and writing rows")
            try:
                trec_text.insert_run_rows(duck, src, order, compression, separator, tag, run_id)
            except duckdb.Error as exc:
                raise trec_text.FastPathFailed(str(exc)) from exc
            if not trec_text.only_separator(hasher.whitespace, separator):
                raise trec_text.FastPathFailed("whitespace other than the separator")
            sha = _raise_if_stored(conn, hasher, options, tag)
            bar.phase("validating")
            num_queries, num_rows, tied_pairs = _check_rows(duck, src, run_id, tag)
            writes.insert_run(
                conn,
                {
                    "id": run_id,
                    "name": run_name,
                    "system_tag": tag,
                    "source": str(src.path),
                    "content_sha256": sha,
                    "parse_options": options,
                    "ingested_at": writes.utc_now(),
                    "metadata": json.dumps({**metadata, "content_sha256": sha}),
                    "order_by": order,
                    "num_queries": num_queries,
                    "num_rows": num_rows,
                    "tied_pairs": tied_pairs,
                },
            )
            bar.phase("committing")
    except _AlreadyStored as stored:
        return stored.run
    return StoredRun(run_id, run_name, tag, True, num_queries, num_rows)


def _import_numpy() -> None:
    import numpy  # noqa: F401


def _raise_if_stored(conn: Connection, hasher: BackgroundHash, options: str, tag: str) -> str:
    """The file's sha256; raises _AlreadyStored when a run with that content is stored."""
    sha = hasher.result()
    existing = writes.same_run(conn, sha, options, tag)
    if existing is not None:
        raise _AlreadyStored(
            StoredRun(
                existing["id"],
                existing["name"],
                tag,
                False,
                existing["num_queries"],
                existing["num_rows"],
            )
        )
    return sha


def _check_rows(duck, src: Source, run_id: int, tag: str) -> tuple[int, int, int]:
    """(queries, rows, tied-score pairs) of the stored run; raises InputError on a duplicate.

    A repeated document is confirmed on the strings before it is reported (two documents
    whose 64-bit hashes collide are no duplicate). A large run whose queries each hold
    consecutive rows is counted query by query (:func:`count_repeats_in_segments`): repeated
    document hashes and equal scores within each query. Otherwise, and for small runs,
    repeated hashes of (query, doc) and (query, score) are counted over the whole run (a
    collision of the second could only add one tied pair).
    """
    (num_rows,) = duck.execute(
        "SELECT count(*) FROM run_rows WHERE run_id = ?", [run_id]
    ).fetchone()
    if num_rows < NUMPY_FROM:  # DuckDB counts the repeated hashes itself
        repeated, tied_pairs, num_queries = duck.execute(
            f"SELECT {repeats_sql(PAIR_HASH)}, {repeats_sql(TIE_HASH)}, "
            "count(DISTINCT query_id) FROM run_rows WHERE run_id = ?",
            [run_id],
        ).fetchone()
    else:
        num_queries, repeated, tied_pairs = _large_run_repeats(duck, run_id)
    if repeated:
        duplicate = duck.execute(
            "SELECT query_id, doc_id FROM run_rows WHERE run_id = ? GROUP BY query_id, doc_id "
            "HAVING count(*) > 1 ORDER BY query_id, doc_id LIMIT 1",
            [run_id],
        ).fetchone()
        if duplicate is not None:
            raise trec_text.locate_duplicate(src, "run", (tag, *duplicate))
    return int(num_queries), num_rows, tied_pairs


def _large_run_repeats(duck, run_id: int) -> tuple[int, int, int]:
    """(queries, repeated documents, tied pairs) of a large run, counted in numpy: query by
    query when each query's rows are consecutive (:func:`counted_by_query`), else over sorted
    hashes of the whole run."""
    num_queries, counted = counted_by_query(duck, run_id, "hash(doc_id), score")
    if counted is not None:
        return num_queries, counted[0], counted[1]
    # sorting hashes in numpy beats a hash aggregate over millions of keys
    hashes = duck.execute(
        f"SELECT {PAIR_HASH} AS pair, {TIE_HASH} AS tie FROM run_rows WHERE run_id = ?",
        [run_id],
    ).fetchnumpy()
    repeated, tied_pairs = count_repeats_each(hashes.pop("pair"), hashes.pop("tie"))
    return num_queries, repeated, tied_pairs
