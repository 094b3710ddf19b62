"""Which qrels sets and runs the warehouse holds: listing them, finding one by name, alias or
id, and finding the one that holds the rows about to be stored.

An alias is another name of a stored run or qrels set (``run_aliases``, ``qrels_aliases``:
migration 0014): ``ingest run FILE --name X`` of content already stored under another name
makes ``X`` one, and every lookup of a name takes it for that run. A name is a run's own name
or an alias, never both.

Content is known by its bytes' hash; a copy of a stored file with other bytes (CRLF line ends,
tabs for spaces) holds the same rows under another hash. When such content claims a name that
is taken, its rows are compared with the stored ones, in SQL, both ways (:func:`same_rows`):
the same rows are the stored run (or qrels set), and different rows are said in a few words
(:func:`how_they_differ`). The incoming rows are any ``SELECT`` of the same columns on the same
connection (the stage, a run's rows, a server's temporary table).

Plain SQL with bound parameters (no DuckDB-only syntax), so it works on any backend; nothing
here writes. Every function takes the warehouse (a :class:`~rankhouse.Warehouse`), its store
or a connection.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ..backends.base import store_of
from ..columns import Rows, fetched
from ..errors import Either, Message, NotFoundError, Option, RankhouseError, count, noun

if TYPE_CHECKING:
    import pandas as pd

    from ..backends.base import Connection


_RUN_COLUMNS = (
    "id, name, system_tag, num_queries, num_rows, order_by, ingested_at, source, "
    "content_sha256, parse_options, metadata, "
    "(SELECT pruned_at FROM pruned_runs WHERE pruned_runs.run_id = runs.id) AS pruned_at"
)
_QRELS_COLUMNS = (
    "id, name, num_queries, num_judgments, num_relevant, min_grade, max_grade, ingested_at, "
    "source, content_sha256, parse_options"
)


class _Tables(NamedTuple):
    aliases: str  # the alias table
    column: str  # its column holding the id of what it names
    named: str  # the catalogue table of what it names
    label: str  # how a message calls one of those


TABLES = {
    "run": _Tables("run_aliases", "run_id", "runs", "run"),
    "qrels": _Tables("qrels_aliases", "qrels_id", "qrels_sets", "qrels set"),
}
"""The alias table of each kind (``"run"``, ``"qrels"``) of stored content."""

KIND_OF_TABLE = {"runs": "run", "qrels_sets": "qrels"}
"""The kind whose content a catalogue table holds."""

TREC_EVAL_COPY = json.dumps({"format": "trec_eval"})
"""The parse options of the copies of files ``trec-eval`` keeps: trec_eval's rules (C ``atof``
scores, one run per file named by the last tag, ...) differ from ``rankhouse ingest``'s, so
the same file read both ways is two stored runs. Such copies are never a run's ``previous``
version nor its baseline."""


def alias_target(conn: Connection, kind: str, name: str) -> int | None:
    """The id of the run or qrels set that ``name`` is an alias of, or None."""
    tables = TABLES[kind]
    found = conn.execute(
        f"SELECT {tables.column} FROM {tables.aliases} WHERE name = :name", {"name": str(name)}
    ).scalar()
    return None if found is None else int(found)


def aliases_of(conn: Connection, kind: str, item_id: int) -> list[str]:
    """The aliases of a run or qrels set, oldest first."""
    tables = TABLES[kind]
    return [
        str(name)
        for name in conn.execute(
            f"SELECT name FROM {tables.aliases} WHERE {tables.column} = :id "
            "ORDER BY created_at, name",
            {"id": int(item_id)},
        ).scalars()
    ]


def aliases_column(kind: str, outer: str) -> str:
    """A SQL expression of the aliases of each row of the catalogue table ``outer`` (runs
    or qrels_sets, as its name in the query), joined by ``', '`` (empty: none)."""
    tables = TABLES[kind]
    return (
        f"coalesce((SELECT string_agg(a.name, ', ' ORDER BY a.created_at, a.name) "
        f"FROM {tables.aliases} a WHERE a.{tables.column} = {outer}.id), '')"
    )


def real_name(conn: Connection, kind: str, name: str) -> str:
    """The own name of the run or qrels set that ``name`` is an alias of, else ``name``."""
    target = alias_target(conn, kind, name)
    if target is None:
        return name
    tables = TABLES[kind]
    return str(
        conn.execute(f"SELECT name FROM {tables.named} WHERE id = :id", {"id": target}).scalar()
    )


def list_runs(wh, limit: int | None = None) -> pd.DataFrame:
    """All stored runs, oldest first (id, name, system_tag, num_queries, num_rows, ...,
    ``aliases``: the run's other names joined by ``', '``, empty when none); with ``limit``,
    only the ``limit`` newest (the end of the whole list)."""
    return run_rows(wh, limit).frame()


def list_qrels(wh) -> pd.DataFrame:
    """All stored qrels sets, oldest first (id, name, num_queries, num_judgments, ...,
    ``version`` and ``follows``: its version number and the version it follows when it is a
    later version of a name, ``aliases``: the set's other names joined by ``', '``, empty when
    none)."""
    return qrels_rows(wh).frame()


def run_rows(wh, limit: int | None = None) -> Rows:
    """:func:`list_runs` as plain rows."""
    return _catalogue_rows(wh, "run", _RUN_COLUMNS, limit)


def qrels_rows(wh) -> Rows:
    """:func:`list_qrels` as plain rows."""
    return _catalogue_rows(wh, "qrels", f"{_QRELS_COLUMNS}, {_LINEAGE}")


#: A qrels set's place among the versions of its name (``qrels_lineage``, migration 0017):
#: ``version`` (N of ``name@N``; 1 for a first version that others follow, else NULL) and
#: ``follows`` (the name of the version it follows, ``(removed)`` after it when that is gone).
_LINEAGE = (
    "coalesce((SELECT CAST(substr(qrels_sets.name, length(l.base_name) + 2) AS INTEGER) "
    "FROM qrels_lineage l WHERE l.qrels_id = qrels_sets.id), (SELECT min(1) FROM "
    "qrels_lineage l WHERE l.base_name = qrels_sets.name)) AS version, "
    "(SELECT coalesce(f.name, l.follows_name || ' (removed)') FROM qrels_lineage l "
    "LEFT JOIN qrels_sets f ON f.id = l.follows_id WHERE l.qrels_id = qrels_sets.id) AS follows"
)


def _catalogue_rows(wh, kind: str, columns: str, limit: int | None = None) -> Rows:
    """Every stored item of ``kind`` (its ``columns`` and its aliases), oldest first; with
    ``limit``, the ``limit`` newest, chosen by the database before anything else is read (a
    warehouse of years of nights lists its last few as fast as a new one).

    Raises:
        RankhouseError: ``limit`` below 1.
    """
    table = TABLES[kind].named
    source, params = table, {}
    if limit is not None:
        if int(limit) < 1:
            raise RankhouseError(f"the limit must be at least 1, not {limit}")
        source = f"(SELECT * FROM {table} ORDER BY id DESC LIMIT :limit) AS {table}"
        params = {"limit": int(limit)}
    with store_of(wh).connect() as conn:
        return fetched(
            conn.execute(
                f"SELECT {columns}, {aliases_column(kind, table)} AS aliases "
                f"FROM {source} ORDER BY id",
                params,
            )
        )


def other_names(wh, kind: str, item_id: int) -> list[str]:
    """The other names (aliases) of the run (``kind`` ``"run"``) or qrels set ``item_id``,
    oldest first."""
    with store_of(wh).connect() as conn:
        return aliases_of(conn, kind, item_id)


def find(conn: Connection, table: str, columns: str, name_or_id: str | int, label: str):
    """A catalogue row of ``table`` by name, else by alias, else by id (a name or alias that
    looks like a number wins); raises NotFoundError naming ``label``."""
    row = (
        conn.execute(f"SELECT {columns} FROM {table} WHERE name = :name", {"name": str(name_or_id)})
        .mappings()
        .first()
    )
    if row is None:
        tables = TABLES[KIND_OF_TABLE[table]]
        row = (
            conn.execute(
                f"SELECT {columns} FROM {table} WHERE id IN (SELECT {tables.column} FROM "
                f"{tables.aliases} WHERE name = :name)",
                {"name": str(name_or_id)},
            )
            .mappings()
            .first()
        )
    if row is None and str(name_or_id).strip().lstrip("-").isdigit():
        row = (
            conn.execute(f"SELECT {columns} FROM {table} WHERE id = :id", {"id": int(name_or_id)})
            .mappings()
            .first()
        )
    if row is None:
        listing = Either(
            python=f"Warehouse.{'runs' if label == 'run' else 'qrels_sets'}() lists",
            cli=f"'rankhouse {'runs' if label == 'run' else 'qrels'} list' shows",
        )
        raise NotFoundError(
            Message(f"no {label} named {str(name_or_id)!r}; ", listing, " what is stored")
        )
    return dict(row)


def get_run(wh, name_or_id: str | int) -> dict:
    """One run's catalogue row by name or id; ``metadata`` is decoded into a dict.

    Raises:
        NotFoundError: no such run.
    """
    with store_of(wh).connect() as conn:
        row = find(conn, "runs", _RUN_COLUMNS, name_or_id, "run")
    row["metadata"] = json.loads(row["metadata"])
    return row


def get_runs(wh, names_or_ids: Sequence[str | int]) -> list[dict]:
    """Several runs' catalogue rows, each found as :func:`get_run` finds it (by name, else by
    alias, else by id), in three statements however many are asked for (one when every run
    is named by its name).

    Raises:
        NotFoundError: a run that is not stored (the first, as :func:`get_run` says it).
    """
    keys = [str(key) for key in names_or_ids]
    numbers = sorted({int(k) for k in keys if k.strip().lstrip("-").isdigit()})
    with store_of(wh).connect() as conn:
        found = conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE name = ANY(:names)", {"names": keys}
        )
        by_name = {row["name"]: dict(row) for row in found.mappings()}
        aliases: dict[str, int] = {}
        by_id: dict[int, dict] = {}
        others = [key for key in keys if key not in by_name]
        if others:
            aliases = dict(
                conn.execute(
                    "SELECT name, run_id FROM run_aliases WHERE name = ANY(:names)",
                    {"names": others},
                ).all()
            )
            wanted = sorted({*numbers, *(int(i) for i in aliases.values())})
            found = conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ANY(:ids)", {"ids": wanted}
            )
            by_id = {int(row["id"]): dict(row) for row in found.mappings()}
    rows = []
    for key in keys:
        row = by_name.get(key) or by_id.get(int(aliases.get(key, -1)))
        if row is None and key.strip().lstrip("-").isdigit():
            row = by_id.get(int(key))
        if row is None:
            get_run(wh, key)  # raises its NotFoundError
        rows.append({**row, "metadata": json.loads(row["metadata"])})
    return rows


def get_qrels(wh, name_or_id: str | int) -> dict:
    """One qrels set's catalogue row by name or id.

    Raises:
        NotFoundError: no such qrels set.
    """
    with store_of(wh).connect() as conn:
        return find(conn, "qrels_sets", _QRELS_COLUMNS, name_or_id, "qrels set")


def run_query_counts(wh, name_or_id: str | int) -> pd.DataFrame:
    """Rows per query of one run: DataFrame[query_id, num_rows] in query byte order."""
    return query_count_rows(wh, name_or_id).frame()


def query_count_rows(wh, name_or_id: str | int) -> Rows:
    """:func:`run_query_counts` as plain rows."""
    run = get_run(wh, name_or_id)
    with store_of(wh).rows_connection([run["id"]], None, load=False) as conn:
        return fetched(
            conn.execute(
                (
                    "SELECT query_id, count(*) AS num_rows FROM run_rows WHERE run_id = :id "
                    "GROUP BY query_id ORDER BY query_id"
                ),
                {"id": run["id"]},
            )
        )


# --- runs whose rows were pruned ----------------------------------------------------------------


def pruned_runs(conn: Connection, run_ids) -> dict[int, dict]:
    """The ``pruned_runs`` row (``pruned_at``, ``num_rows``, ``rows_sha256``, ``archive``) of
    each of ``run_ids`` whose rows were pruned (migration 0016), by run id."""
    ids = sorted({int(run_id) for run_id in run_ids})
    if not ids:
        return {}
    listed = ", ".join(str(run_id) for run_id in ids)  # integers: nothing to bind
    rows = conn.execute(
        "SELECT run_id, pruned_at, num_rows, rows_sha256, archive FROM pruned_runs "
        f"WHERE run_id IN ({listed})"
    ).mappings()
    return {int(row["run_id"]): dict(row) for row in rows}


def pruned_rows(wh, run_id: int) -> dict | None:
    """The ``pruned_runs`` row of a run, or None when its rows are in the warehouse."""
    with store_of(wh).connect() as conn:
        return pruned_runs(conn, [run_id]).get(int(run_id))


def refuse_pruned(conn: Connection, run_ids, what: str | Message) -> None:
    """Refuse to read the rows of a pruned run among ``run_ids`` for ``what`` (``its order
    drift``), saying how to bring them back.

    Raises:
        NotFoundError: one of the runs was pruned.
    """
    pruned = pruned_runs(conn, run_ids)
    if not pruned:
        return
    run_id = min(pruned)
    name = conn.execute("SELECT name FROM runs WHERE id = :id", {"id": run_id}).scalar()
    raise NotFoundError(pruned_message(str(name), pruned[run_id], what))


def pruned_message(name: str, pruned: dict, what: str | Message) -> Message:
    """Why ``what`` cannot be computed for the pruned run ``name``, and how to bring its rows
    back (:func:`refuse_pruned`)."""
    said = Message(
        f"the rows of run {name!r} were pruned on {str(pruned['pruned_at'])[:10]} "
        f"({count(int(pruned['num_rows']), 'row')} removed; its stored values stay), so ",
        what,
        " cannot be computed for it; ",
    )
    if pruned["archive"] is None:
        return Message(
            said,
            "they were pruned without an archive (",
            Option("archive"),
            " keeps a pruned run restorable): ingesting the run's file again brings them back",
        )
    return Message(
        said,
        "bring them back from ",
        str(pruned["archive"]),
        " with ",
        Either(python=f"Warehouse.restore({name!r})", cli=f"`rankhouse runs restore {name}`"),
        ", then ask again",
    )


# --- rows about to be stored: the same as a stored one's, or how they differ ----------------------


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
        prepare_stored: called with a stored id before its rows are first compared (a server
            whose run rows live apart, in Iceberg, brings them beside the incoming ones).
    """

    kind: str
    select: str
    params: dict
    num_rows: int
    num_queries: int
    tag: str | None = None
    order: str | None = None
    prepare: Callable[[], None] | None = None
    prepare_stored: Callable[[int], None] | None = None


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
    _prepare(incoming, stored_id)
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
    """The stored run or qrels set (``name`` or one of its versions, ``name@2``...)
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
    _prepare(incoming, stored_id)
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
            "parse_options FROM qrels_sets WHERE (name = :name OR (substr(name, 1, :length) "
            "= :prefix AND parse_options <> :trec_eval_copy)) AND num_judgments = :rows "
            "AND num_queries = :queries ORDER BY id DESC"
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


def _prepare(incoming: Incoming, stored_id: int) -> None:
    if incoming.prepare is not None:
        incoming.prepare()
    if incoming.prepare_stored is not None:
        incoming.prepare_stored(stored_id)
