"""What a warehouse already holds of a file, known from the file's hash without reading it.

Content already stored was checked when it was ingested, so a file that comes again need not
be parsed: its sha256 and the parse options an ingest would record (its identity) find it.
"""

from __future__ import annotations

import os

from ..backends.base import Backend, store_of
from ..catalog import writes
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
