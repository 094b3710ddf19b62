"""Content an ingest need not store again: known from a file's hash without reading it, found
as the same rows under other bytes, and named again when it comes under another name.

Content already stored was checked when it was ingested, so a file that comes again need not
be parsed: its sha256 and the parse options an ingest would record (its identity) find it.

A CRLF copy of a stored run file hashes differently but holds the same rows. When it claims a
name that is taken, the rows are compared (:func:`rankhouse.catalog.lookup.same_rows`); the
same rows are the stored run, and a :class:`~rankhouse.errors.RankhouseWarning` says so, and
which bytes differ when that is cheap to tell: the first MiB of both files shows their line
ends, the whitespace between fields and a byte order mark (the stored run's file only when it
is still there with the bytes it had).

Given again under a new name (``--name``), the stored content takes that name too, as an
alias (:func:`named_too`).

The stored content may have lost its rows to ``runs prune``: the source given again brings
them back (:func:`pruned_back`), checked as ``runs restore`` checks an archive.

A store that stages an ingest elsewhere (a server: parsed and checked in a local DuckDB
warehouse) is given what was staged by :func:`publish`, and each qrels set or run lands where
:func:`placed` puts it: on content the store holds already, on the same rows under other
bytes, or under its name, claimed as for new content. The store moves the rows.
"""

from __future__ import annotations

import codecs
import os
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import replace as with_changes
from functools import partial
from pathlib import Path
from typing import Any

from ..backends.base import Backend, Connection, store_of
from ..backends.duckdb_file import DuckDBFile
from ..catalog import removed_on_failure, writes
from ..catalog.lookup import (
    COLUMNS,
    TREC_EVAL_COPY,
    Incoming,
    how_they_differ,
    pruned_runs,
    same_rows,
)
from ..catalog.retention import put_back
from ..errors import RankhouseError, RankhouseWarning
from .files import file_sha256, open_decompressed
from .sources import IngestResult, Source, already_stored, base_name, open_source, parse_options
from .staging import STAGE


def file_identity(src: Source, kind: str) -> tuple[str, str]:
    """(content sha256, parse options) of a file read with the default options, as an ingest
    would record them, from its hash alone."""
    return file_sha256(src.data_path, label=src.label), parse_options(src, kind, "score", None)


def stored_ids(wh, source: str | os.PathLike[str], kind: str) -> list[int]:
    """What ingesting the file ``source`` with the default options would find stored.

    Reads only (a read-only warehouse serves a file it already holds this way).

    Args:
        wh: the warehouse.
        source: a file path.
        kind: ``"qrels"`` or ``"run"``.

    Returns:
        The id of the qrels set, or of the runs (one per tag, in tag byte order), holding the
        file's content; empty when the content is new to the warehouse.
    """
    src = open_source(source, None)
    if src.is_frame:
        return []
    identity = file_identity(src, kind)
    with store_of(wh).connect() as conn:
        return writes.content_ids(conn, kind, *identity)


def stored_trec_qrels(
    store: Backend, src: Source, name: str | None, mapping: dict[str, str]
) -> IngestResult | None:
    """The stored qrels set holding a TREC qrels file's content, found by its hash alone.

    A file whose name is taken (the usual case: the same qrels given again) is hashed before
    it is read. A new name goes straight to the parse, which hashes as it reads.
    """
    if src.is_frame or src.format != "trec" or mapping:
        return None
    with store.connect() as conn:
        if not writes.name_taken(conn, "qrels", name or base_name(src.path)):
            return None
        existing = writes.same_qrels(conn, *file_identity(src, "qrels"))
    return None if existing is None else already_stored("qrels", existing, src)


def named_too(
    store: Backend,
    results: list[IngestResult],
    name: str | None,
    *,
    replace: bool,
    new_version: bool = False,
) -> list[IngestResult]:
    """``results`` of an ingest asked to store its source under ``name``, where the content
    already stored under another name takes the name asked for too, as an alias (then
    ``alias`` says it); in one transaction, after the ingest's.

    The name asked for is ``name`` (one result), or ``<name>/<tag>`` (a run file of several
    tags). A name held by other content is claimed as for new content: deleted with
    ``replace`` (an alias alone), left as it is under ``new_version`` (``eval FILE``), else
    an error; the runs the ingest stored as new are then removed, so that the warehouse holds
    what it held before.

    Raises:
        ConflictError: a name asked for holds other content and ``replace`` is false.
    """
    if name is None:
        return results
    asked = {
        r.id: name if len(results) == 1 else f"{name}/{r.system_tag}"
        for r in results
        if not r.created
    }
    if all(asked[r.id] == r.name for r in results if not r.created):
        return results
    with removed_on_failure(store) as ingested:
        for result in results:
            ingested.note(result.kind, result.id, result.created)
        with store.transaction() as conn:
            named = {
                item_id: writes.name_too(
                    conn,
                    results[0].kind,
                    wanted,
                    item_id,
                    replace=replace,
                    new_version=new_version,
                )
                for item_id, wanted in asked.items()
            }
    return [
        with_changes(r, alias=asked[r.id])
        if not r.created and named[r.id] and asked[r.id] != r.name
        else r
        for r in results
    ]


# --- the rows of a pruned run, from its source again ----------------------------------------------


def pruned_back(
    store: Backend,
    staged: Backend,
    results: list[IngestResult],
    read_again: Callable[[Backend], object],
) -> list[IngestResult]:
    """``results`` of an ingest, with the rows of each run among them whose content was found
    stored but whose rows were pruned put back from the source (``restored_rows``).

    The rows are the ingest's own reading of the source: a server's stage holds them (the
    ingest read the source there before it found the content stored); a file's ingest found
    the run stored and wrote nothing, so ``read_again(scratch)`` ingests the source into an
    empty warehouse in memory. They are checked against the rows' hash recorded when they
    were pruned and put back, the marks cleared, in one transaction, as ``runs restore``
    does (:func:`rankhouse.catalog.retention.put_back`); refused, the runs this ingest
    stored are removed again, so that nothing changes.

    Raises:
        RankhouseError: the source's rows of a pruned run hash to other than was recorded.
    """
    found = [r.id for r in results if not r.created]
    if not found:
        return results
    with store.connect() as conn:
        marks = pruned_runs(conn, found)
        if not marks:
            return results
        runs = conn.execute(
            "SELECT id, name, system_tag, content_sha256, parse_options FROM runs "
            f"WHERE id IN ({', '.join(str(run_id) for run_id in sorted(marks))}) ORDER BY id"
        ).mappings()
    with removed_on_failure(store) as ingested:
        for result in results:
            ingested.note(result.kind, result.id, result.created)
        with _read(store, staged, read_again) as holder, holder.connect() as conn:
            back = [(dict(run), marks[run["id"]], _rows_read(holder, conn, run)) for run in runs]
        label = results[0].source
        origin = "the DataFrame" if label == "DataFrame" else f"the file {label}"
        restored = dict(zip(sorted(marks), put_back(store, back, origin), strict=True))
    return [with_changes(r, restored_rows=restored.get(r.id, 0)) for r in results]


@contextmanager
def _read(store: Backend, staged: Backend, read_again: Callable[[Backend], object]):
    """The DuckDB warehouse that holds the source's runs as the ingest read them."""
    if staged is not store:
        yield staged
        return
    scratch = DuckDBFile(":memory:")
    try:
        read_again(scratch)
        yield scratch
    finally:
        scratch.close()


def _rows_read(holder: Backend, conn: Connection, run: dict):
    """The rows of the stored ``run`` as ``holder`` read them: its run of the same content."""
    same = writes.same_run(conn, run["content_sha256"], run["parse_options"], run["system_tag"])
    return holder.run_rows_table(conn, same["id"])


# --- publishing what was staged -----------------------------------------------------------------


def publish(
    store: Backend, staged: Backend, results: list, replace: bool, new_version: bool = False
) -> list:
    """``results``, stored by an ingest in ``staged`` (``store.staging()``), as ``store``
    holds them: a file wrote them itself; a server copies them in one transaction, each where
    :func:`placed` puts it.

    With ``new_version``, a run or qrels set whose name holds other content takes the next
    version name (``<name>@2``, ...; :func:`rankhouse.catalog.writes.next_version`).

    Raises:
        ConflictError: a name is taken by different content and ``replace`` is false.
    """
    place = partial(placed, replace=replace, new_version=new_version)
    return store.publish(staged, results, place)


def publish_all(store: Backend, scratch: Backend) -> None:
    """Every qrels set, run and evaluation of ``scratch`` into ``store`` (trec-eval's local
    work; a file's warehouse moved to a server): content already there is skipped, a name
    held by other content stops it."""
    store.publish_all(scratch, partial(placed, replace=False, new_version=False))


def placed(
    conn: Connection, result: Any, staged, *, replace: bool, new_version: bool
) -> tuple[Any, bool]:
    """Where the staged qrels set or run ``result`` lands in the store of ``conn`` (in its
    transaction): ``staged`` gives its catalogue row and its rows (``staged.table`` once
    ``staged.upload()`` ran; :class:`rankhouse.backends.postgresql.publish.Staged`).

    Returns:
        The result as stored, and True when it is new there: its name claimed and its
        catalogue row written (its rows are the store's to copy); False for content found
        stored (same hash and options, or the same rows under other bytes).
    """
    kind, row = staged.kind, staged.row
    existing = _stored_content(conn, kind, row)
    if existing is not None:
        return with_changes(result, **existing), False
    if row["parse_options"] == TREC_EVAL_COPY:  # named as on a file: <tag>@<sha8>
        table = "qrels_sets" if kind == "qrels" else "runs"
        name = writes.free_name(conn, table, row["name"], row["content_sha256"])
    else:
        incoming = None
        if writes.name_taken(conn, kind, row["name"]):  # the same rows, other bytes?
            incoming = _incoming(staged)
            same = same_rows(conn, row["name"], incoming)
            if same is not None:
                _say_reused(kind, result, row, same)
                return with_changes(result, **_described(kind, same)), False
        name = writes.claim_name(
            conn,
            kind,
            row["name"],
            replace=replace,
            new_version=new_version,
            differs=incoming and (lambda holder, i=incoming: how_they_differ(conn, holder, i)),
        )
    values = {k: v for k, v in row.items() if k != "id"} | {"name": name}
    if kind == "run":
        return with_changes(result, id=writes.insert_run(conn, values), name=name), True
    qrels_id = writes.insert_qrels_set(conn, values)
    writes.record_lineage(conn, qrels_id, row["name"], name)
    return with_changes(result, id=qrels_id, name=name), True


def _stored_content(conn: Connection, kind: str, row: dict) -> dict | None:
    if kind == "qrels":
        found = writes.same_qrels(conn, row["content_sha256"], row["parse_options"])
    else:
        found = writes.same_run(
            conn, row["content_sha256"], row["parse_options"], row["system_tag"]
        )
    return None if found is None else _described(kind, found)


def _described(kind: str, found: dict) -> dict:
    """The fields of a result that a stored qrels set's or run's catalogue row gives."""
    return {
        "id": found["id"],
        "name": found["name"],
        "created": False,
        "num_queries": found["num_queries"],
        "num_rows": found["num_judgments" if kind == "qrels" else "num_rows"],
    }


def _incoming(staged) -> Incoming:
    """The staged rows as the store will compare them: uploaded the first time a comparison
    needs them."""
    row = staged.row
    return Incoming(
        staged.kind,
        f"SELECT {COLUMNS[staged.kind]} FROM {staged.table}",
        {},
        row["num_judgments" if staged.kind == "qrels" else "num_rows"],
        row["num_queries"],
        row.get("system_tag"),
        row.get("order_by"),
        staged.upload,
        staged.bring_stored,
    )


def _say_reused(kind: str, result, row: dict, same: dict) -> None:
    """Warn that the ingested source holds the rows of the stored ``same``."""
    path = None if row["source"] == "dataframe" else Path(row["source"])
    label = getattr(result, "source", row["source"])
    say_reused(kind, label, path, row["content_sha256"], same)


# --- the same rows under other bytes --------------------------------------------------------------


#: Bytes read from the head of each file to tell how it is written.
_HEAD = 1 << 20


def staged(kind: str, num_rows: int, num_queries: int, tag=None, order=None) -> Incoming:
    """The rows of the stage (of one tag, for a run), for a comparison."""
    where = " WHERE tag = :incoming_tag" if kind == "run" else ""
    return Incoming(
        kind,
        f"SELECT {COLUMNS[kind]} FROM {STAGE}{where}",
        {"incoming_tag": tag} if kind == "run" else {},
        num_rows,
        num_queries,
        tag,
        order,
    )


def run_rows(run_id: int, num_rows: int, num_queries: int, tag: str, order: str) -> Incoming:
    """The rows just written to ``run_rows`` under ``run_id``, for a comparison."""
    return Incoming(
        "run",
        f"SELECT {COLUMNS['run']} FROM run_rows WHERE run_id = :incoming_id",
        {"incoming_id": run_id},
        num_rows,
        num_queries,
        tag,
        order,
    )


def path_of(src: Source) -> Path | None:
    """The file ``src`` reads, None for a DataFrame."""
    return None if src.is_frame else src.data_path


def say_reused(kind: str, label: str, path: Path | None, sha: str, stored: dict) -> None:
    """Warn that the source ``label`` (the file ``path``, None for a DataFrame) of hash
    ``sha`` holds the rows of the stored qrels set or run ``stored`` (a catalogue row with
    ``id``, ``name``, ``source``, ``content_sha256``), which is reused."""
    what = "qrels set" if kind == "qrels" else "run"
    held = f"holds the same rows as {what} {stored['name']!r} (id {stored['id']})"
    if path is None:
        text = f"the DataFrame {held}: reusing it"
    elif sha == stored["content_sha256"]:
        text = f"{kind} file {label} {held}; its bytes are the same, read with other options: "
        text += "reusing it"
    else:
        text = f"{kind} file {label} {held}; {_bytes_differ(path, stored)}: reusing it"
    warnings.warn(RankhouseWarning(text), stacklevel=3)


@dataclass(frozen=True)
class _Writing:
    """How a text file is written, from its first MiB."""

    line_ends: str  # "LF", "CRLF", "CR", or several joined by " and "
    separators: str  # "single spaces", "runs of spaces", "tabs", "spaces and tabs", "no spaces"
    bom: bool


def _bytes_differ(path: Path, stored: dict) -> str:
    """``its bytes differ``, and how when the heads of both files tell it (only the new
    file's odd ways when the stored run's file is gone or changed)."""
    new = _writing(path)
    if new is None:
        return "its bytes differ"
    old = _writing(Path(stored["source"]), stored["content_sha256"])
    said = []
    if old is None:
        if new.line_ends != "LF":
            said.append(f"{new.line_ends} line ends")
        if new.bom:
            said.append("a byte order mark")
    else:
        if new.line_ends != old.line_ends:
            said.append(f"{new.line_ends} line ends instead of {old.line_ends}")
        if new.separators != old.separators:
            said.append(f"{new.separators} between fields instead of {old.separators}")
        if new.bom != old.bom:
            said.append("a byte order mark" if new.bom else "no byte order mark")
    return f"its bytes differ ({', '.join(said)})" if said else "its bytes differ"


def _writing(path: Path, sha: str | None = None) -> _Writing | None:
    """How the file ``path`` is written; None when it cannot be read (or, given ``sha``,
    no longer holds the bytes of that hash)."""
    try:
        if sha is not None and (not path.is_file() or file_sha256(path) != sha):
            return None
        with open_decompressed(path) as stream:
            head = stream.read(_HEAD)
    except (OSError, RankhouseError):
        return None
    crlf = head.count(b"\r\n")
    ends = {
        "CRLF": crlf,
        "CR": head.count(b"\r") - crlf,
        "LF": head.count(b"\n") - crlf,
    }
    line_ends = " and ".join(name for name, found in ends.items() if found) or "LF"
    tabs, spaces = b"\t" in head, b" " in head
    if tabs and spaces:
        separators = "spaces and tabs"
    elif tabs:
        separators = "tabs"
    elif spaces:
        separators = "runs of spaces" if b"  " in head else "single spaces"
    else:
        separators = "no spaces"
    return _Writing(line_ends, separators, head.startswith(codecs.BOM_UTF8))
