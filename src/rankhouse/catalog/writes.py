"""Writing the catalogue: claiming a name, recording a qrels set or a run, finding content.

Plain SQL on a connection of the caller's transaction (an ingest, a publish to a server,
trec-eval's copies); nothing here commits.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..backends.schema import utc_now  # noqa: F401 (ingests stamp rows with it)
from ..errors import ConflictError, Message, Option
from .lookup import KIND_OF_TABLE, TABLES, alias_target
from .removal import delete_qrels, delete_run, drop_alias

if TYPE_CHECKING:
    from ..backends.base import Connection

TREC_EVAL_COPY = json.dumps({"format": "trec_eval"})
"""The parse options of the copies of files ``trec-eval`` keeps: trec_eval's rules (C ``atof``
scores, one run per file named by the last tag, ...) differ from ``rankhouse ingest``'s, so
the same file read both ways is two stored runs. Such copies are never a run's ``previous``
version nor its baseline."""


def same_qrels(conn: Connection, sha: str, options: str) -> dict | None:
    """The stored qrels set with this content and parse options, if any."""
    row = (
        conn.execute(
            (
                "SELECT id, name, num_queries, num_judgments FROM qrels_sets "
                "WHERE content_sha256 = :sha AND parse_options = :options ORDER BY id LIMIT 1"
            ),
            {"sha": sha, "options": options},
        )
        .mappings()
        .first()
    )
    return dict(row) if row else None


def same_run(conn: Connection, sha: str, options: str, tag: str) -> dict | None:
    """The stored run with this content, parse options and tag, if any."""
    row = (
        conn.execute(
            (
                "SELECT id, name, num_queries, num_rows FROM runs WHERE content_sha256 = :sha "
                "AND parse_options = :options AND system_tag = :tag ORDER BY id LIMIT 1"
            ),
            {"sha": sha, "options": options, "tag": tag},
        )
        .mappings()
        .first()
    )
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
    an alias: the alias alone); with ``new_version`` (runs only) the new run takes the next
    version name (:func:`next_version`). ``differs``, given the holder's id, says in a few
    words how the new content differs from it, for the error, after the holder's id
    (:func:`.same_rows.how_they_differ`).

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
    if new_version and kind == "run" and not replace:
        return next_version(conn, name)
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


def next_version(conn: Connection, name: str) -> str:
    """``name`` when free, else ``name@N``: one more than its highest stored version.

    The run stored as ``name`` is version 1; ``name@2``, ``name@3``... follow. A version
    number is never reused while a later version is stored; an alias counts as a stored
    version. trec-eval's copies, named ``<tag>@<sha8>``, are not versions (eight hex digits
    may all be decimal).
    """
    prefix = f"{name}@"
    taken = conn.execute(
        (
            "SELECT name FROM runs WHERE name = :name OR (substr(name, 1, :length) = :prefix "
            "AND parse_options <> :trec_eval_copy) UNION ALL SELECT name FROM run_aliases "
            "WHERE name = :name OR substr(name, 1, :length) = :prefix"
        ),
        {
            "name": name,
            "prefix": prefix,
            "length": len(prefix),
            "trec_eval_copy": TREC_EVAL_COPY,
        },
    ).scalars()
    versions = [1 if found == name else _version(found[len(prefix) :]) for found in taken]
    versions = [v for v in versions if v is not None]
    return f"{prefix}{max(versions) + 1}" if versions else name


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
    columns = [column for column in _RUN_COLUMNS if column in values]
    return conn.execute(
        (
            f"INSERT INTO runs ({', '.join(columns)}) "
            f"VALUES ({', '.join(':' + column for column in columns)}) RETURNING id"
        ),
        values,
    ).scalar_one()


_RUN_COLUMNS = (
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
