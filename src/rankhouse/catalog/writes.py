"""Writing the catalogue: what an ingest needs before it writes (content stored already, a name
taken), claiming a name, recording a qrels set, a run or an alias; and removing one with
everything made from it (evaluations, gate checks, order drift).

Plain SQL on a connection of the caller's transaction (an ingest, a publish to a server,
trec-eval's copies; the ``delete_*`` functions too: a ``--replace`` ingest deletes what it
overwrites). Only the verbs ``remove_*`` and the removal of what a failed call ingested commit,
one transaction each.

A call that ingests files on its way (``eval FILE``, ``regress FILE``, ``report --run FILE``)
and then fails removes what it ingested (:func:`removed_on_failure`): a failed call leaves the
warehouse as it found it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..backends.base import EVALUATION_ROWS, store_of
from ..backends.schema import utc_now  # noqa: F401 (ingests stamp rows with it)
from ..errors import ConflictError, Message, Option, RankhouseError
from .lookup import (
    _QRELS_COLUMNS,
    _RUN_COLUMNS,
    KIND_OF_TABLE,
    TABLES,
    TREC_EVAL_COPY,
    alias_target,
    aliases_of,
    find,
)

if TYPE_CHECKING:
    from ..backends.base import Connection


def same_qrels(conn: Connection, sha: str, options: str) -> dict | None:
    """The stored qrels set with this content and parse options, if any."""
    return first_dict(
        conn,
        "SELECT id, name, num_queries, num_judgments FROM qrels_sets "
        "WHERE content_sha256 = :sha AND parse_options = :options ORDER BY id LIMIT 1",
        {"sha": sha, "options": options},
    )


def same_run(conn: Connection, sha: str, options: str, tag: str) -> dict | None:
    """The stored run with this content, parse options and tag, if any."""
    return first_dict(
        conn,
        "SELECT id, name, num_queries, num_rows FROM runs WHERE content_sha256 = :sha "
        "AND parse_options = :options AND system_tag = :tag ORDER BY id LIMIT 1",
        {"sha": sha, "options": options, "tag": tag},
    )


def first_dict(conn: Connection, sql: str, params: dict[str, Any]) -> dict | None:
    """The first row ``sql`` selects, as a dict; None when it selects none."""
    row = conn.execute(sql, params).mappings().first()
    return dict(row) if row else None


def name_taken(conn: Connection, kind: str, name: str) -> bool:
    """Whether a stored qrels set (``kind`` ``"qrels"``) or run holds the name ``name``, as
    its own name or as an alias."""
    tables = TABLES[kind]
    return bool(
        conn.execute(
            f"SELECT (SELECT count(*) FROM {tables.named} WHERE name = :n) "
            f"+ (SELECT count(*) FROM {tables.aliases} WHERE name = :n)",
            {"n": name},
        ).scalar()
    )


def content_ids(conn: Connection, kind: str, sha: str, options: str) -> list[int]:
    """Ids of the stored qrels sets or runs (in tag byte order) with this content and options."""
    if kind == "qrels":
        query = "SELECT id FROM qrels_sets WHERE content_sha256 = :sha AND parse_options = :o"
    else:
        query = (
            "SELECT id FROM runs WHERE content_sha256 = :sha AND parse_options = :o "
            "ORDER BY system_tag, id"
        )
    return [int(i) for i in conn.execute(query, {"sha": sha, "o": options}).scalars()]


def claim_name(
    conn: Connection,
    kind: str,
    name: str,
    *,
    replace: bool,
    new_version: bool = False,
    differs: Callable[[int], str] | None = None,
) -> str:
    """Make ``name`` free for a new qrels set or run; returns the name to store it under.

    A name held by other content is deleted with its holder when ``replace`` (a name that is
    an alias: the alias alone); with ``new_version`` the new run or qrels set takes the next
    version name (:func:`next_version`; a qrels set records the version it follows with
    :func:`record_lineage`). ``differs``, given the holder's id, says in a few
    words how the new content differs from it, for the error, after the holder's id
    (:func:`.lookup.how_they_differ`).

    Raises:
        ConflictError: the name holds different content and neither option is set.
    """
    tables = TABLES[kind]
    holder = conn.execute(
        f"SELECT id FROM {tables.named} WHERE name = :name", {"name": name}
    ).scalar()
    alias_of = None if holder is not None else alias_target(conn, kind, name)
    if holder is None and alias_of is None:
        return name
    if new_version and not replace:
        return next_version(conn, name, kind)
    if not replace:
        if alias_of is not None:
            holder = alias_of
            own = conn.execute(
                f"SELECT name FROM {tables.named} WHERE id = :id", {"id": holder}
            ).scalar()
            held = f"another name of {tables.label} {own!r}, id {holder}"
        else:
            held = f"id {holder}"
        how = differs(holder) if differs is not None else ""
        raise ConflictError(
            Message(
                f"{tables.label} name {name!r} is already used by different content "
                f"({held}{how}); pass ",
                Option("replace", True, cli_value=""),
                " to overwrite it, or ",
                Option("name"),
                " to choose another name",
            )
        )
    if alias_of is not None:
        drop_alias(conn, kind, name)
    else:
        (delete_qrels if kind == "qrels" else delete_run)(conn, holder)
    return name


def name_too(
    conn: Connection, kind: str, name: str, target: int, *, replace: bool, new_version: bool
) -> bool:
    """Make ``name`` name the stored run or qrels set ``target`` too, as an alias (its
    content was given again under that name); whether ``name`` now names it.

    Its own name, or an alias of it already: nothing to write. A name held by other content
    is claimed as for new content (:func:`claim_name`: deleted with ``replace``); under
    ``new_version`` (a file given to ``eval``), it is left as it is (False).

    Raises:
        ConflictError: the name holds other content and neither option is set.
    """
    tables = TABLES[kind]
    own = conn.execute(f"SELECT name FROM {tables.named} WHERE id = :id", {"id": target}).scalar()
    if own == name or alias_target(conn, kind, name) == target:
        return True
    if new_version and not replace and name_taken(conn, kind, name):
        return False
    claim_name(conn, kind, name, replace=replace)
    add_alias(conn, kind, name, target)
    return True


def add_alias(conn: Connection, kind: str, name: str, target: int) -> None:
    """Record ``name`` as an alias of the run or qrels set ``target`` (the caller made sure
    that no run or qrels set, and no other alias, holds it)."""
    tables = TABLES[kind]
    conn.execute(
        f"INSERT INTO {tables.aliases} (name, {tables.column}, created_at) "
        "VALUES (:name, :id, :at)",
        {"name": name, "id": int(target), "at": utc_now()},
    )


def next_version(conn: Connection, name: str, kind: str = "run") -> str:
    """``name`` when free, else ``name@N``: one more than its highest stored version.

    The run (``kind`` ``"run"``) or qrels set (``"qrels"``) stored as ``name`` is version 1;
    ``name@2``, ``name@3``... follow. A version number is never reused while a later version
    is stored; an alias counts as a stored version. trec-eval's copies, named
    ``<tag>@<sha8>``, are not versions (eight hex digits may all be decimal).
    """
    versions = [number for number, _ in stored_versions(conn, name, kind)]
    return f"{name}@{max(versions) + 1}" if versions else name


def stored_versions(conn: Connection, name: str, kind: str = "run") -> list[tuple[int, str]]:
    """(version, name) of each stored version of ``name`` (``name`` itself is 1, ``name@N``
    is N; own names and aliases), by version."""
    tables, prefix = TABLES[kind], f"{name}@"
    taken = conn.execute(
        (
            f"SELECT name FROM {tables.named} WHERE name = :name OR "
            "(substr(name, 1, :length) = :prefix AND parse_options <> :trec_eval_copy) "
            f"UNION ALL SELECT name FROM {tables.aliases} "
            "WHERE name = :name OR substr(name, 1, :length) = :prefix"
        ),
        {
            "name": name,
            "prefix": prefix,
            "length": len(prefix),
            "trec_eval_copy": TREC_EVAL_COPY,
        },
    ).scalars()
    found = [(1 if each == name else _version(each[len(prefix) :]), each) for each in taken]
    return sorted((number, each) for number, each in found if number is not None)


def record_lineage(conn: Connection, qrels_id: int, asked: str, stored: str) -> None:
    """Record that the qrels set ``qrels_id``, stored as ``stored`` when ``asked`` was asked
    for, follows the newest earlier version of ``asked`` (nothing when it took the name asked
    for: it is no new version)."""
    if stored == asked:
        return
    earlier = [name for _, name in stored_versions(conn, asked, "qrels") if name != stored]
    follows = conn.execute(
        "SELECT id FROM qrels_sets WHERE name = :name UNION ALL "
        "SELECT qrels_id FROM qrels_aliases WHERE name = :name",
        {"name": earlier[-1]},
    ).scalar_one()
    conn.execute(
        "INSERT INTO qrels_lineage (qrels_id, follows_id, follows_name, base_name) "
        "VALUES (:id, :follows, :follows_name, :base)",
        {"id": int(qrels_id), "follows": int(follows), "follows_name": earlier[-1], "base": asked},
    )


def _version(suffix: str) -> int | None:
    return int(suffix) if suffix.isascii() and suffix.isdigit() else None


def insert_qrels_set(conn: Connection, values: dict) -> int:
    """Insert a qrels_sets row; returns its id."""
    return conn.execute(
        (
            "INSERT INTO qrels_sets (name, source, content_sha256, parse_options, ingested_at, "
            "num_queries, num_judgments, num_relevant, min_grade, max_grade) VALUES (:name, "
            ":source, :content_sha256, :parse_options, :ingested_at, :num_queries, "
            ":num_judgments, :num_relevant, :min_grade, :max_grade) RETURNING id"
        ),
        values,
    ).scalar_one()


def insert_run(conn: Connection, values: dict) -> int:
    """Insert a runs row; returns its id.

    ``tied_pairs`` may be left out (counted later); ``id`` may be given (taken from the
    ``run_ids`` sequence beforehand, when the rows are written first).
    """
    values = {"tied_pairs": None, **values}
    columns = [column for column in _RUN_INSERT_COLUMNS if column in values]
    return conn.execute(
        (
            f"INSERT INTO runs ({', '.join(columns)}) "
            f"VALUES ({', '.join(':' + column for column in columns)}) RETURNING id"
        ),
        values,
    ).scalar_one()


_RUN_INSERT_COLUMNS = (
    "id",
    "name",
    "system_tag",
    "source",
    "content_sha256",
    "parse_options",
    "ingested_at",
    "metadata",
    "order_by",
    "num_queries",
    "num_rows",
    "tied_pairs",
)


def free_name(conn: Connection, table: str, wanted: str, sha: str) -> str:
    """``wanted``, or ``wanted@<sha8>`` when another qrels set / run holds that name (its
    own or as an alias: the names of trec-eval's copies)."""
    name = wanted or "trec_eval"
    for candidate in (name, f"{name}@{sha[:8]}", f"{name}@{sha[:16]}"):
        if not name_taken(conn, KIND_OF_TABLE[table], candidate):
            return candidate
    return f"{name}@{sha}"


# --- removing -------------------------------------------------------------------------------------


def _delete_evaluations(conn: Connection, column: str, value: int) -> None:
    for table in EVALUATION_ROWS:
        conn.execute(
            (
                f"DELETE FROM {table} WHERE evaluation_id IN "
                f"(SELECT id FROM evaluations WHERE {column} = :value)"
            ),
            {"value": value},
        )
    conn.execute(f"DELETE FROM evaluations WHERE {column} = :value", {"value": value})


def _delete_checks(conn: Connection, column: str, value: int) -> None:
    for table in ("regress_verdicts", "regress_drift"):
        conn.execute(
            (
                f"DELETE FROM {table} WHERE check_id IN "
                f"(SELECT id FROM regress_checks WHERE {column} = :value)"
            ),
            {"value": value},
        )
    conn.execute(f"DELETE FROM regress_checks WHERE {column} = :value", {"value": value})


def _delete_drift(conn: Connection, run_id: int) -> None:
    """The run's order drift, from a baseline or as another run's baseline (a drift is a
    pair of rankings: one gone, it cannot be computed again)."""
    chosen = "SELECT id FROM drift_evaluations WHERE run_id = :id OR baseline_run_id = :id"
    conn.execute(f"DELETE FROM drift_values WHERE drift_id IN ({chosen})", {"id": run_id})
    conn.execute(
        "DELETE FROM drift_evaluations WHERE run_id = :id OR baseline_run_id = :id", {"id": run_id}
    )


def drop_alias(conn: Connection, kind: str, name: str) -> None:
    """Remove the alias ``name`` (what it named stays)."""
    conn.execute(f"DELETE FROM {TABLES[kind].aliases} WHERE name = :name", {"name": name})


def drop_aliases_of(conn: Connection, kind: str, item_id: int) -> None:
    """Remove every alias of a run or qrels set (it is being deleted)."""
    tables = TABLES[kind]
    conn.execute(f"DELETE FROM {tables.aliases} WHERE {tables.column} = :id", {"id": int(item_id)})


def delete_run(conn: Connection, run_id: int) -> None:
    """Delete a run, its rows, its aliases, its evaluations, its gate checks and its order
    drift (the caller's transaction).

    Checks that used the run as their baseline belong to other runs: they stay, with the
    baseline's name (``regress_results.baseline_deleted`` is then true).
    """
    _delete_checks(conn, "run_id", run_id)
    _delete_drift(conn, run_id)
    _delete_evaluations(conn, "run_id", run_id)
    drop_aliases_of(conn, "run", run_id)
    conn.delete_run_rows(run_id)
    conn.execute("DELETE FROM pruned_runs WHERE run_id = :id", {"id": run_id})
    conn.execute("DELETE FROM runs WHERE id = :id", {"id": run_id})


def delete_qrels(conn: Connection, qrels_id: int) -> None:
    """Delete a qrels set, its judgments, its aliases, the evaluations and gate checks made
    with it, and the gate references that held for it."""
    _delete_checks(conn, "qrels_id", qrels_id)
    conn.execute("DELETE FROM gate_references WHERE qrels_id = :id", {"id": qrels_id})
    _delete_evaluations(conn, "qrels_id", qrels_id)
    drop_aliases_of(conn, "qrels", qrels_id)
    # the versions that follow it keep its name in their lineage (follows_name)
    conn.execute("DELETE FROM qrels_lineage WHERE qrels_id = :id", {"id": qrels_id})
    # the raters' judgments it was built from stay (migration 0018)
    conn.execute("DELETE FROM qrels_builds WHERE qrels_id = :id", {"id": qrels_id})
    conn.execute("DELETE FROM judgments WHERE qrels_id = :id", {"id": qrels_id})
    conn.execute("DELETE FROM judgment_intents WHERE qrels_id = :id", {"id": qrels_id})
    conn.execute("DELETE FROM qrels_sets WHERE id = :id", {"id": qrels_id})


def remove_run(wh, name_or_id: str | int) -> dict:
    """Delete a run by name or id with its rows, aliases, evaluations and checks; returns its
    row, with ``aliases`` (the aliases that went with it).

    Given an alias, only the alias is removed (the run stays): the row returned is the run's,
    with ``removed_alias`` (the alias).

    Raises:
        NotFoundError: no such run.
    """
    with store_of(wh).transaction() as conn:
        row = find(conn, "runs", _RUN_COLUMNS, name_or_id, "run")
        if _is_alias(conn, "run", name_or_id, row):
            drop_alias(conn, "run", str(name_or_id))
            return {**row, "removed_alias": str(name_or_id)}
        row["aliases"] = aliases_of(conn, "run", row["id"])
        delete_run(conn, row["id"])
    return row


def remove_qrels(wh, name_or_id: str | int) -> dict:
    """Delete a qrels set by name or id, with its judgments, aliases, evaluations and gate
    checks; returns its row with what went with it (``evaluations``, ``evaluated_runs``,
    ``checks``: :func:`qrels_dependents`; ``aliases``).

    Given an alias, only the alias is removed (the qrels set stays): the row returned is the
    set's, with ``removed_alias`` (the alias).

    Raises:
        NotFoundError: no such qrels set.
    """
    with store_of(wh).transaction() as conn:
        row = find(conn, "qrels_sets", _QRELS_COLUMNS, name_or_id, "qrels set")
        if _is_alias(conn, "qrels", name_or_id, row):
            drop_alias(conn, "qrels", str(name_or_id))
            return {**row, "removed_alias": str(name_or_id)}
        row.update(_dependents(conn, row["id"]))
        row["aliases"] = aliases_of(conn, "qrels", row["id"])
        delete_qrels(conn, row["id"])
    return row


def qrels_dependents(wh, name_or_id: str | int) -> dict:
    """A qrels set's row with what removing it deletes besides its judgments:
    ``evaluations`` (made with it), ``evaluated_runs`` (the runs they belong to; the runs
    stay), ``checks`` (the gate checks made with it) and ``aliases``; given an alias, the
    set's row with ``alias`` (removing an alias deletes only the alias).

    Raises:
        NotFoundError: no such qrels set.
    """
    with store_of(wh).connect() as conn:
        row = find(conn, "qrels_sets", _QRELS_COLUMNS, name_or_id, "qrels set")
        if _is_alias(conn, "qrels", name_or_id, row):
            return {**row, "alias": str(name_or_id)}
        row.update(_dependents(conn, row["id"]))
        row["aliases"] = aliases_of(conn, "qrels", row["id"])
    return row


def _is_alias(conn: Connection, kind: str, name_or_id: str | int, row: dict) -> bool:
    """Whether ``name_or_id`` found ``row`` as one of its aliases."""
    return str(name_or_id) != row["name"] and alias_target(conn, kind, str(name_or_id)) == int(
        row["id"]
    )


def _dependents(conn: Connection, qrels_id: int) -> dict[str, int]:
    found = (
        conn.execute(
            "SELECT (SELECT count(*) FROM evaluations WHERE qrels_id = :id) AS evaluations, "
            "(SELECT count(DISTINCT run_id) FROM evaluations WHERE qrels_id = :id) "
            "AS evaluated_runs, "
            "(SELECT count(*) FROM regress_checks WHERE qrels_id = :id) AS checks",
            {"id": int(qrels_id)},
        )
        .mappings()
        .one()
    )
    return {key: int(value) for key, value in found.items()}


@dataclass
class Ingested:
    """The runs and qrels sets one call stored as new content (ids), in order."""

    runs: list[int] = field(default_factory=list)
    qrels: list[int] = field(default_factory=list)

    def note(self, kind: str, item_id: int, created: bool) -> None:
        """Record an ingest's result (``kind`` ``'run'`` or ``'qrels'``); content that was
        stored already (``created`` false) is not the call's to remove."""
        if created:
            (self.runs if kind == "run" else self.qrels).append(int(item_id))

    def __bool__(self) -> bool:
        return bool(self.runs or self.qrels)


@contextmanager
def removed_on_failure(wh, outer: Ingested | None = None) -> Iterator[Ingested]:
    """An :class:`Ingested` for the block to fill; when the block raises, what it ingested
    is removed (one transaction) and the error goes on (an interruption too). Should the
    removal fail, the error says what stays stored. Given the ``outer`` call's record, the
    block notes what it ingests there and leaves the removal to that call."""
    if outer is not None:
        yield outer
        return
    ingested = Ingested()
    try:
        yield ingested
    except (Exception, KeyboardInterrupt) as exc:  # Ctrl-C too: the call did not finish
        if ingested:
            try:
                remove_ingested(wh, ingested)
            except Exception as failed:  # the first error is the one to report
                if isinstance(exc, RankhouseError):
                    exc.message = Message(
                        exc.message,
                        f" (what this call ingested stays stored: removing it failed: {failed})",
                    )
                    exc.args = (exc.message.render(cli=False),)
        raise


def remove_ingested(wh, ingested: Ingested) -> None:
    """Delete the runs and qrels sets of ``ingested`` with what was made from them."""
    with store_of(wh).transaction() as conn:
        for run_id in ingested.runs:
            delete_run(conn, run_id)
        for qrels_id in ingested.qrels:
            delete_qrels(conn, qrels_id)
