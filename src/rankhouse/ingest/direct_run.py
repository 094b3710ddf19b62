"""A run ingested by the direct reader: a one-tag TREC run file of regular lines, in one
transaction, without a stage.

The rows go straight into ``run_rows`` (:mod:`.trec.direct`) while the file is hashed on a
thread; then its duplicates and ties are counted (:mod:`.repeats`) and the catalogue row
written. Content found already stored, or a file the direct reader gives up on, leaves the
transaction rolled back: the first is reported as it is stored, the second read again by the
stage, which names any problem (:func:`ingest` returns the :class:`~.trec.regular.Fallback`).
"""

from __future__ import annotations

import json
from typing import NamedTuple

from ..backends.base import Backend, Connection
from ..background import Background
from ..catalog import writes
from ..catalog.same_rows import how_they_differ, same_rows
from . import copies
from .hashing import BackgroundHash
from .progress import IngestProgress
from .repeats import first_duplicate, may_hold_numpy_rows, run_repeats
from .result import IngestResult, already_stored
from .sources import Source
from .trec.direct import insert_run_rows
from .trec.locate import locate_duplicate
from .trec.regular import Fallback, only_separator, run_shape


class DirectRun(NamedTuple):
    """A run file for the direct path, and what its catalogue row records.

    Attributes:
        src: the file (:func:`eligible` said it may take the direct path).
        separator: its fields' separator.
        tag: the tag of its first line, which every line must carry.
        order: ``'score'`` or ``'rank'``.
        options: the parse options recorded with its hash.
        metadata: the ``runs.metadata`` object (its ``content_sha256`` is set here).
    """

    src: Source
    separator: str
    tag: str
    order: str
    options: str
    metadata: dict


class _Rollback(Exception):
    """Leaves the transaction, which rolls back what it wrote, with the ingest's outcome."""

    def __init__(self, outcome: IngestResult | Fallback) -> None:
        super().__init__(outcome)
        self.outcome = outcome


def eligible(src: Source, mapping: dict[str, str]) -> tuple[str, str] | None:
    """(separator, tag) when ``src`` may take the direct path, else None."""
    if src.is_frame or src.format != "trec" or mapping:
        return None
    return run_shape(src)


def ingest(
    store: Backend,
    run: DirectRun,
    *,
    name: str | None,
    replace: bool,
    new_version: bool = False,
    bar: IngestProgress,
) -> IngestResult | Fallback:
    """Store the run file ``run.src`` in one transaction; its result, or why the stage must
    read it (then nothing is stored).

    Raises:
        InputError: a document appears twice for a query.
        ConflictError: ``name`` holds other content and ``replace`` is false.
    """
    src = run.src
    hasher = BackgroundHash(src.data_path, bar.bytes_done, src.label)
    if may_hold_numpy_rows(src.data_path):
        # its checks count in numpy, whose import (50 ms) can happen while DuckDB reads
        Background(_import_numpy, "rankhouse-numpy")
    try:
        with store.transaction() as conn:
            outcome = _store(conn, run, hasher, name, replace, new_version, bar)
            if not (isinstance(outcome, IngestResult) and outcome.created):
                raise _Rollback(outcome)
            bar.phase("committing")
    except _Rollback as rolled_back:  # raised just above: the transaction is rolled back
        return rolled_back.outcome
    return outcome


def _import_numpy() -> None:
    import numpy  # noqa: F401


def _store(
    conn: Connection,
    run: DirectRun,
    hasher: BackgroundHash,
    name: str | None,
    replace: bool,
    new_version: bool,
    bar: IngestProgress,
) -> IngestResult | Fallback:
    """The rows and the catalogue row of the run, written in the transaction of ``conn``
    (which is rolled back unless a run was created)."""
    src, tag = run.src, run.tag
    run_name = name or tag
    taken = writes.name_taken(conn, "run", run_name)
    if taken:
        # same content under this name is no conflict: that needs the hash first
        stored = _stored(conn, hasher.result(), run)
        if stored is not None:
            return stored
    run_id = conn.execute("SELECT nextval('run_ids')").scalar_one()
    duck = conn.duck
    bar.phase("reading and writing rows")
    written = insert_run_rows(duck, src, run.order, src.compression, run.separator, tag, run_id)
    if isinstance(written, Fallback):
        return written
    if not only_separator(hasher.whitespace, run.separator):
        return Fallback.OTHER_WHITESPACE
    sha = hasher.result()
    stored = _stored(conn, sha, run)
    if stored is not None:
        return stored
    bar.phase("validating")
    repeats = run_repeats(duck, run_id, written)
    if repeats.repeated_documents:
        duplicate = first_duplicate(duck, run_id)
        if duplicate is not None:
            raise locate_duplicate(src, "run", (tag, *duplicate))
    if taken:  # the same rows under other bytes are the stored run; else the name is claimed
        incoming = copies.run_rows(run_id, written, repeats.num_queries, tag, run.order)
        same = same_rows(conn, run_name, incoming)
        if same is not None:
            copies.say_reused("run", src.label, src.data_path, sha, same)
            return already_stored("run", same, src, tag)
        run_name = writes.claim_name(
            conn,
            "run",
            run_name,
            replace=replace,
            new_version=new_version,
            differs=lambda holder: how_they_differ(conn, holder, incoming),
        )
    writes.insert_run(
        conn,
        {
            "id": run_id,
            "name": run_name,
            "system_tag": tag,
            "source": str(src.path),
            "content_sha256": sha,
            "parse_options": run.options,
            "ingested_at": writes.utc_now(),
            "metadata": json.dumps({**run.metadata, "content_sha256": sha}),
            "order_by": run.order,
            "num_queries": repeats.num_queries,
            "num_rows": written,
            "tied_pairs": repeats.tied_pairs,
        },
    )
    return IngestResult("run", run_id, run_name, tag, True, repeats.num_queries, written, src.label)


def _stored(conn: Connection, sha: str, run: DirectRun) -> IngestResult | None:
    """The run already holding this content, if any."""
    existing = writes.same_run(conn, sha, run.options, run.tag)
    return None if existing is None else already_stored("run", existing, run.src, run.tag)
