"""A DataFrame straight into a bare engine database's table: no stage, no copy.

``rankhouse.evaluate`` loads its two frames into the engine's ``run_rows`` and ``judgments``
at every call. The general path reads a source into the stage, checks it there and copies it
into the table: every row is written twice, and the checks take three statements. A frame's
values have already been checked in Python (:func:`frames.canonical`: ids present, non-empty
text; grades and ranks integers; scores numbers), so a frame of one run goes straight into
the table, and one statement checks what Python leaves to SQL (a NaN score, a repeated query
and document) while it counts what the load reports. When it finds anything wrong, or the
table refuses a row, nothing of the frame stays in the table and the caller takes the
general path, which names the problem.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from ..background import Background
from ..duck import duckdb
from . import frames, tabular
from .hashing import frame_sha256
from .repeats import PAIR_HASH, TIE_HASH, repeats_sql
from .sources import Source, resolve_columns

_TABLES = {
    "qrels": ("judgments", "qrels_id", "query_id, doc_id, grade"),
    "run": ("run_rows", "run_id", "query_id, doc_id, rank, score"),
}
# One pass over the rows just inserted: rows, refused rows, queries, tied scores, repeats.
_INSPECT = {
    "qrels": "count(*), count(*) FILTER (WHERE query_id = '' OR doc_id = ''), "
    f"count(DISTINCT query_id), 0, {repeats_sql(PAIR_HASH)}",
    "run": "count(*), count(*) FILTER (WHERE query_id = '' OR doc_id = '' OR isnan(score)), "
    f"count(DISTINCT query_id), {repeats_sql(TIE_HASH)}, {repeats_sql(PAIR_HASH)}",
}


class Inserted(NamedTuple):
    """A frame inserted as qrels set or run ``id``: its identity and what it holds."""

    sha256: str
    columns: dict[str, str]
    num_queries: int
    num_rows: int
    tied_pairs: int
    has_ranks: bool


def insert(
    duck, src: Source, kind: str, table_id: int, mapping: dict[str, str], order: str
) -> Inserted | None:
    """Insert the frame ``src`` into the engine table of ``kind`` as id ``table_id``; None
    (nothing inserted) when the general path must read it: a frame with a tag column (several
    runs), or one a check refuses.

    Raises:
        InputError: a column cannot be found, or Python's checks refuse a value (as the
            general path would).
    """
    frame = src.frame
    found = resolve_columns([str(c) for c in frame.columns], mapping, kind, order, src.label)
    if "tag" in found:
        return None
    canonical = frames.canonical(frame, found, order)
    sha256 = _hashing(canonical)
    normalized = Source(src.label, None, canonical, "dataframe")
    identity = {field: field for field in canonical.columns}
    types = tabular.describe(duck, normalized, "none")
    select, params, _ = tabular.selection(normalized, kind, order, identity, types, "none", "-")
    table, key, columns = _TABLES[kind]
    try:
        duck.execute(
            f"INSERT INTO {table} SELECT ?, {columns} FROM ({select}) AS rows",
            [table_id, *params],
        )
    except duckdb.Error:  # a value the table refuses (the statement inserted nothing)
        return None
    total, refused, queries, ties, repeats = _inspected(duck, kind, table, key, table_id)
    if not total or refused or repeats:
        duck.execute(f"DELETE FROM {table} WHERE {key} = ?", [table_id])
        return None
    return Inserted(sha256(), identity, queries, total, ties, has_ranks="rank" in found)


#: A frame of this many rows or more is hashed on a thread while DuckDB reads it; a smaller
#: one when its hash is asked for (starting a thread costs more than hashing it).
HASH_BESIDE_FROM = 5_000


def _hashing(canonical) -> Callable[[], str]:
    """A function that gives the frame's hash: worked out on a thread from now on (Arrow and
    hashlib let go of the GIL: 5 ms of a 95 ms ``rankhouse.evaluate`` call on DL19), or, for a
    frame of fewer than :data:`HASH_BESIDE_FROM` rows, when called."""
    work = partial(frame_sha256, canonical)
    if len(canonical) < HASH_BESIDE_FROM:
        return work
    return Background(work, "rankhouse-frame-hash", daemon=True).result


def _inspected(duck, kind: str, table: str, key: str, table_id: int) -> tuple[Any, ...]:
    [row] = duck.execute(
        f"SELECT {_INSPECT[kind]} FROM {table} WHERE {key} = ?", [table_id]
    ).fetchall()
    return row
