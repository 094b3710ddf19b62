"""Rows about to be stored beside a stored run's or qrels set's: the same, or how they differ.

Content is known by its bytes' hash; a copy of a stored file with other bytes (CRLF line ends,
tabs for spaces) holds the same rows under another hash. When such content claims a name that
is taken, its rows are compared with the stored ones, in SQL, both ways: the same rows are the
stored run (or qrels set), and different rows are said in a few words. Plain SQL with bound
parameters, so it runs on every store; the incoming rows are any ``SELECT`` of the same
columns on the same connection (the stage, a run's rows, a server's temporary table).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..words import count, noun
from .lookup import real_name
from .writes import TREC_EVAL_COPY

if TYPE_CHECKING:
    from ..backends.base import Connection

#: The columns a row is compared on, per kind (a run's tag is its own column in the catalogue).
COLUMNS = {"run": "query_id, doc_id, rank, score", "qrels": "query_id, doc_id, grade"}
_STORED = {
    "run": "SELECT query_id, doc_id, rank, score FROM run_rows WHERE run_id = :stored_id",
    "qrels": "SELECT query_id, doc_id, grade FROM judgments WHERE qrels_id = :stored_id",
}
_UNIT = {"run": "row", "qrels": "judgment"}


@dataclass(frozen=True)
class Incoming:
    """Rows about to be stored, as a ``SELECT`` of :data:`COLUMNS` on the store's connection.

    Attributes:
        kind: ``'run'`` or ``'qrels'``.
        select: the statement giving the rows (its binds in ``params``).
        params: its bound parameters (none named ``stored_id``).
        num_rows: how many rows it gives.
        num_queries: how many queries they hold.
        tag: the run's tag (None for qrels).
        order: ``'score'`` or ``'rank'`` (None for qrels).
        prepare: called once before ``select`` first runs (a server uploads the rows then).
    """

    kind: str
    select: str
    params: dict
    num_rows: int
    num_queries: int
    tag: str | None = None
    order: str | None = None
    prepare: Callable[[], None] | None = None


@dataclass(frozen=True)
class Difference:
    """How two sets of rows differ: the (query, document) pairs whose rows are not the same
    (in one set only, or with other values), the queries they are in, and the first pair."""

    pairs: int
    queries: int
    first: tuple[str, str] | None

    def describe(self, unit: str) -> str:
        """``2 rows differ, in 1 query, first at query '1', document 'd2'``."""
        if not self.pairs:
            return f"the same {noun(2, unit)}"
        query, doc = self.first
        verb = "differs" if self.pairs == 1 else "differ"
        return (
            f"{count(self.pairs, unit)} {verb}, in {count(self.queries, 'query')}, "
            f"first at query {query!r}, document {doc!r}"
        )


def difference(conn: Connection, incoming: Incoming, stored_id: int) -> Difference:
    """Compare ``incoming`` with the rows of the stored run or qrels set ``stored_id``."""
    _prepare(incoming)
    columns = COLUMNS[incoming.kind]
    sql = f"""
        WITH incoming AS ({incoming.select}),
        stored AS ({_STORED[incoming.kind]}),
        changed AS (
            SELECT query_id, doc_id FROM (
                SELECT {columns} FROM incoming EXCEPT ALL SELECT {columns} FROM stored
            ) AS only_incoming
            UNION
            SELECT query_id, doc_id FROM (
                SELECT {columns} FROM stored EXCEPT ALL SELECT {columns} FROM incoming
            ) AS only_stored
        )
        SELECT (SELECT count(*) FROM changed) AS pairs,
               (SELECT count(DISTINCT query_id) FROM changed) AS queries,
               first.query_id, first.doc_id
        FROM (SELECT 1 AS one) AS anchor
        LEFT JOIN (
            SELECT query_id, doc_id FROM changed ORDER BY query_id, doc_id LIMIT 1
        ) AS first ON true
        """
    row = conn.execute(sql, {**incoming.params, "stored_id": stored_id}).one()
    first = None if row.query_id is None else (row.query_id, row.doc_id)
    return Difference(int(row.pairs), int(row.queries), first)


def same_rows(conn: Connection, name: str, incoming: Incoming) -> dict | None:
    """The stored run (``name`` or one of its versions, ``name@2``...) or qrels set (``name``)
    holding exactly the rows of ``incoming``, if any (``name`` may be an alias: then of the
    run or qrels set it names); its catalogue row
    (``id, name, num_queries, num_rows`` or ``num_judgments``, ``source``, ``content_sha256``,
    ``parse_options``).

    Only a holder with the same tag, order and counts is compared row by row, newest first.
    """
    for candidate in _candidates(conn, name, incoming):
        stored_id = candidate["id"]
        if (
            _summaries_agree(conn, incoming, stored_id)
            and difference(conn, incoming, stored_id).pairs == 0
        ):
            return candidate
    return None


#: Exact summaries that equal rows share (no floating sum: its order may change its last bit).
_SUMMARY = {
    "run": "count(*), min(score), max(score), sum(rank), sum(length(doc_id))",
    "qrels": "count(*), min(grade), max(grade), sum(grade), sum(length(doc_id))",
}


def _summaries_agree(conn: Connection, incoming: Incoming, stored_id: int) -> bool:
    """Whether both sets of rows have the same exact summaries: one scan each, so that a
    run regenerated with new scores (a nightly's next version) skips the row comparison."""
    _prepare(incoming)
    summary = _SUMMARY[incoming.kind]
    params = {**incoming.params, "stored_id": stored_id}
    new = conn.execute(f"SELECT {summary} FROM ({incoming.select}) AS incoming", params).one()
    old = conn.execute(f"SELECT {summary} FROM ({_STORED[incoming.kind]}) AS stored", params).one()
    return tuple(new) == tuple(old)


def how_they_differ(conn: Connection, holder_id: int, incoming: Incoming) -> str:
    """A few words on how ``incoming`` differs from the stored run or qrels set
    ``holder_id``, to follow its id: ``, tag 'x': 2 rows differ, in 1 query, ...`` (its tag
    and order when they are not the new rows', then the rows)."""
    said = ""
    if incoming.kind == "run":
        tag, order = conn.execute(
            "SELECT system_tag, order_by FROM runs WHERE id = :id", {"id": holder_id}
        ).one()
        if tag != incoming.tag:
            said += f", tag {tag!r}"
        if order != incoming.order:
            said += f", ranked by {order}"
    rows = difference(conn, incoming, holder_id).describe(_UNIT[incoming.kind])
    return f"{said}: {rows}"


def _candidates(conn: Connection, name: str, incoming: Incoming) -> list[dict]:
    name = real_name(conn, incoming.kind, name)
    if incoming.kind == "qrels":
        sql = (
            "SELECT id, name, num_queries, num_judgments, source, content_sha256, "
            "parse_options FROM qrels_sets WHERE name = :name AND num_judgments = :rows "
            "AND num_queries = :queries"
        )
    else:
        sql = (
            "SELECT id, name, num_queries, num_rows, source, content_sha256, parse_options "
            "FROM runs WHERE (name = :name OR (substr(name, 1, :length) = :prefix "
            "AND parse_options <> :trec_eval_copy)) AND system_tag = :tag AND order_by = :order "
            "AND num_rows = :rows AND num_queries = :queries ORDER BY id DESC"
        )
    params = {
        "name": name,
        "length": len(name) + 1,
        "prefix": f"{name}@",
        "trec_eval_copy": TREC_EVAL_COPY,
        "tag": incoming.tag,
        "order": incoming.order,
        "rows": incoming.num_rows,
        "queries": incoming.num_queries,
    }
    used = {key: value for key, value in params.items() if f":{key}" in sql}
    return [dict(row) for row in conn.execute(sql, used).mappings()]


def _prepare(incoming: Incoming) -> None:
    if incoming.prepare is not None:
        incoming.prepare()
