"""What a warehouse already holds of a file: known from the file's hash without reading it,
and named again when it comes under another name.

Content already stored was checked when it was ingested, so a file that comes again need not
be parsed: its sha256 and the parse options an ingest would record (its identity) find it.
Given again under a new name (``--name``), the stored content takes that name too, as an
alias (:func:`named_too`).
"""

from __future__ import annotations

import os
from dataclasses import replace as with_changes

from ..backends.base import Backend, store_of
from ..catalog import removed_on_failure, writes
from .hashing import file_sha256
from .result import IngestResult, already_stored, parse_options
from .sources import Source, base_name, open_source


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
