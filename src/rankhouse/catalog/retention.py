"""Retention: pruning the rows of old runs while every number stays, and restoring them.

A run's rows are almost all of a warehouse (99.8 % of a file holding 20 systems' nightly DL19
runs, issue 37). Once a run is evaluated its numbers are stored apart from its rows, so the
rows of old nights can go: ``rankhouse runs prune`` deletes them (``run_rows``) and nothing
else. Its catalogue row, evaluations, per-query values, gate checks, order drift and input
signatures stay; ``pruned_runs`` (migration 0016) marks it, with the time, the rows it had
and their hash. Stored values are then read as before; a value that would need the rows (a new
measure, ``--recompute``, an order drift not stored) is refused, saying how to bring the rows
back (:func:`rankhouse.catalog.lookup.refuse_pruned`).

**The policy** (:class:`PruneOptions`): the runs of each system tag beyond its newest
``keep_last``, and/or ingested more than ``older_than`` days ago, of the ``systems`` named (all
when none): a run is pruned when it meets every criterion given. Never pruned: a run ever
accepted or pinned as a system's gate reference (every row of ``gate_references``, the
current reference and the ones before it: the gate weighs nights against them and may be
asked a measure they were never evaluated on), a copy kept by ``trec-eval`` (it is read again
when the same file comes back), a run pruned already.

**The archive.** With ``archive`` a folder, each run's rows are first written to a Parquet
file there (zstd), named by the run's content hash, the sha256 of its source file that the
catalogue keeps (``runs.content_sha256``), followed by the first 12 hex digits of the rows'
own hash: the runs of one file's tags share the first. The file is written beside its place,
flushed to the disk and renamed into it, so an archive file is whole or absent; the rows are
deleted only after that. ``runs restore`` reads it back, checks that its rows hash to what
the catalogue recorded when they were pruned (:func:`rows_sha256`; the content hash names a
file's bytes, which one run's rows cannot give back), and inserts them. The run's own file,
ingested again, gives its rows back the same way (:func:`put_back`, the one place a restore
writes).

**Whole or not at all.** Each run is pruned in one transaction: its rows deleted (counted:
they must be the rows hashed) and its mark written; a restore likewise. The store moves the
rows (:meth:`~rankhouse.backends.base.Backend.delete_run_rows`,
:meth:`~rankhouse.backends.base.Backend.restore_run_rows`), so another store of run rows
implements that pair. How the space returns to the file system is the store's:
:meth:`~rankhouse.backends.base.Backend.compact` (``rankhouse compact``; a server's plain
``VACUUM`` follows a prune by itself). docs/retention.md has the commands and the figures.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..backends.base import store_of
from ..backends.schema import utc_now
from ..errors import InputError, Message, NotFoundError, Option, RankhouseError, count
from ..lazy import numpy as np
from ..lazy import pyarrow as pa
from ..lazy import pyarrow_parquet as pq
from ..outputs import flush_to_disk
from .lookup import TREC_EVAL_COPY, get_run, pruned_runs

#: The columns of the rows a prune reports, one per run it weighed.
PRUNE_COLUMNS = ("run", "system_tag", "ingested_at", "rows", "bytes", "action", "archive")

PRUNED = "pruned"
WOULD_PRUNE = "would prune"
KEPT_REFERENCE = "kept: gate reference"

_ROW_COLUMNS = ("query_id", "doc_id", "rank", "score")


@dataclass(frozen=True)
class PruneOptions:
    """What ``runs prune`` / :meth:`~rankhouse.Warehouse.prune` removes.

    Attributes:
        keep_last: keep the rows of each system tag's newest N runs (by ingest time).
        older_than: prune only runs ingested more than this many days ago.
        systems: only these system tags (all when empty).
        archive: a folder to write each run's rows to (Parquet, zstd) before deleting them.
        dry_run: say what would go, change nothing.
    """

    keep_last: int | None = None
    older_than: float | None = None
    systems: tuple[str, ...] = ()
    archive: str | os.PathLike[str] | None = None
    dry_run: bool = False

    def __post_init__(self) -> None:
        if self.keep_last is None and self.older_than is None:
            raise InputError(
                Message(
                    "a prune needs a policy: ",
                    Option("keep_last", 90),
                    " (runs kept per system) and/or ",
                    Option("older_than", 365),
                    " (days)",
                )
            )
        if self.keep_last is not None and self.keep_last < 0:
            raise InputError(
                Message(Option("keep_last"), f" must be 0 or more, not {self.keep_last}")
            )
        if self.older_than is not None and self.older_than < 0:
            raise InputError(
                Message(Option("older_than"), f" must be 0 or more days, not {self.older_than}")
            )


@dataclass
class PruneResult:
    """What a prune did (or, dry, would do): one row per run it weighed (:data:`PRUNE_COLUMNS`:
    the runs it prunes and the gate references it keeps), the space they held, estimated as
    rows times the store's bytes per row, and what the store did to give it back."""

    rows: list[tuple] = field(default_factory=list)
    dry_run: bool = False
    bytes_per_row: float = 0.0
    reclaimed: str | None = None

    @property
    def pruned(self) -> list[tuple]:
        """The rows of the runs pruned (or that would be)."""
        return [row for row in self.rows if row[5] in (PRUNED, WOULD_PRUNE)]

    @property
    def estimated_bytes(self) -> int:
        """The space the pruned rows held: an estimate (rows x bytes per row)."""
        return sum(row[4] for row in self.pruned)

    def describe(self) -> str:
        """One sentence: how many runs and rows went (or would), and the space, estimated."""
        runs = self.pruned
        rows = sum(row[3] for row in runs)
        verb = "would prune" if self.dry_run else "pruned"
        said = (
            f"{verb} the rows of {count(len(runs), 'run')} ({count(rows, 'row')}, about "
            f"{self.estimated_bytes / 1e6:,.1f} MB, estimated at {self.bytes_per_row:g} bytes "
            "a row)"
            if runs
            else "nothing to prune"
        )
        kept = len(self.rows) - len(runs)
        if kept:
            said += f"; kept {count(kept, 'gate reference run')} the policy selects"
        return said


def prune(wh, options: PruneOptions) -> PruneResult:
    """Delete the rows of the runs ``options`` selects (see the module); every number stays.

    Returns:
        A :class:`PruneResult`.

    Raises:
        InputError: no policy, or a negative one.
        RankhouseError: the archive could not be written (nothing of that run pruned).
    """
    store = store_of(wh)
    result = PruneResult(dry_run=options.dry_run, bytes_per_row=store.run_row_bytes)
    with store.session():
        for run, kept in _selected(store, options):
            size = int(run["num_rows"] * store.run_row_bytes)
            at = str(run["ingested_at"])[:19]
            if kept or options.dry_run:
                action = KEPT_REFERENCE if kept else WOULD_PRUNE
                result.rows.append(
                    (run["name"], run["system_tag"], at, run["num_rows"], size, action, None)
                )
                continue
            archived, gone = _prune_run(store, run, options.archive)
            result.rows.append((run["name"], run["system_tag"], at, gone, size, PRUNED, archived))
        if result.pruned and not options.dry_run and not store.local_compute:
            result.reclaimed = store.compact().said
    return result


def _selected(store, options: PruneOptions) -> list[tuple[dict, bool]]:
    """The runs the policy selects, oldest first, each with whether it is kept (a gate
    reference)."""
    with store.connect() as conn:
        runs = conn.execute(
            "SELECT id, name, system_tag, ingested_at, num_rows, content_sha256, "
            "row_number() OVER (PARTITION BY system_tag ORDER BY ingested_at DESC, id DESC) "
            "AS newest, id IN (SELECT run_id FROM gate_references) AS reference, "
            "id IN (SELECT run_id FROM pruned_runs) AS pruned "
            "FROM runs WHERE parse_options <> :copy ORDER BY ingested_at, id",
            {"copy": TREC_EVAL_COPY},
        ).mappings()
    cutoff = None if options.older_than is None else utc_now() - timedelta(days=options.older_than)
    chosen = []
    for run in runs:
        if run["pruned"] or (options.systems and run["system_tag"] not in options.systems):
            continue
        if options.keep_last is not None and run["newest"] <= options.keep_last:
            continue
        if cutoff is not None and run["ingested_at"] >= cutoff:
            continue
        chosen.append((dict(run), bool(run["reference"])))
    return chosen


def _prune_run(store, run: dict, archive) -> tuple[str | None, int]:
    """Archive (when asked) and delete one run's rows, and mark it, in one transaction;
    (the archive file, the rows deleted)."""
    run_id = int(run["id"])
    with store.connect() as conn:
        rows = store.run_rows_table(conn, run_id)
    digest = rows_sha256(rows)
    path = None if archive is None else write_archive(rows, Path(archive), run, digest)
    with store.transaction() as conn:
        if pruned_runs(conn, [run_id]):  # another process pruned it meanwhile
            return None, 0
        gone = store.delete_run_rows(conn, run_id)
        if gone != rows.num_rows:
            raise RankhouseError(
                f"the rows of run {run['name']!r} changed while it was pruned ({gone:,} found, "
                f"{rows.num_rows:,} read); nothing of it was pruned, try again"
            )
        conn.execute(
            "INSERT INTO pruned_runs (run_id, pruned_at, num_rows, rows_sha256, archive) "
            "VALUES (:id, :at, :rows, :sha, :archive)",
            {"id": run_id, "at": utc_now(), "rows": gone, "sha": digest, "archive": path},
        )
    return path, gone


# --- restore -------------------------------------------------------------------------------------


def restore(wh, name_or_id: str | int, archive: str | os.PathLike[str] | None = None) -> dict:
    """Put the rows of a pruned run back from its archive and clear its mark.

    Args:
        wh: the warehouse or its store.
        name_or_id: the run.
        archive: the archive folder (or file) when it is no longer where the prune wrote it
            (a shared mount seen under another path).

    Returns:
        The run's catalogue row, with ``restored_rows`` and ``archive`` (the file read).

    Raises:
        NotFoundError: no such run, a run that is not pruned, no archive, or no file.
        RankhouseError: the file does not hold the rows the catalogue recorded.
    """
    store = store_of(wh)
    with store.session():
        run = get_run(store, name_or_id)
        with store.connect() as conn:
            pruned = pruned_runs(conn, [run["id"]]).get(run["id"])
        if pruned is None:
            raise NotFoundError(f"run {run['name']!r} is not pruned: its rows are in the warehouse")
        path = _archive_file(run, pruned, archive)
        [restored] = put_back(store, [(run, pruned, read_archive(path))], f"the archive {path}")
    return {**run, "pruned_at": None, "restored_rows": restored, "archive": str(path)}


def put_back(store, runs: list[tuple[dict, dict, Any]], origin: str) -> list[int]:
    """Put rows back as the rows of pruned runs and clear their marks, in one transaction:
    the one place a restore writes (``runs restore`` from an archive, an ingest of the file
    of a pruned run: :func:`rankhouse.ingest.reuse.pruned_back`).

    Args:
        store: the warehouse's store.
        runs: (catalogue row, ``pruned_runs`` row, the rows as an Arrow table as
            :meth:`~rankhouse.backends.base.Backend.run_rows_table` gives) of each run.
        origin: how messages name where the rows come from (``the archive PATH``).

    Returns:
        The rows put back, per run.

    Raises:
        RankhouseError: rows that do not hash to what the catalogue recorded when they were
            pruned (:func:`rows_sha256`); nothing is restored.
        NotFoundError: a run was restored meanwhile (by another process).
    """
    for run, pruned, rows in runs:
        found = rows_sha256(rows)
        if found != pruned["rows_sha256"]:
            raise RankhouseError(
                f"{origin} does not hold the rows of run {run['name']!r}: they hash to "
                f"sha256 {found}, and the catalogue recorded sha256 {pruned['rows_sha256']} "
                "when they were pruned; nothing restored"
            )
    ids = [int(run["id"]) for run, _, _ in runs]
    with store.transaction() as conn:
        restored = [store.restore_run_rows(conn, int(run["id"]), rows) for run, _, rows in runs]
        # read once the store holds the runs' rows against another restore (a server's lock):
        # a restore that committed meanwhile is seen, and these rows rolled back
        still = pruned_runs(conn, ids)
        for run, _, _ in runs:
            if int(run["id"]) not in still:
                raise NotFoundError(f"run {run['name']!r} was restored meanwhile")
        listed = ", ".join(str(run_id) for run_id in ids)  # integers: nothing to bind
        conn.execute(f"DELETE FROM pruned_runs WHERE run_id IN ({listed})")
    return restored


def _archive_file(run: dict, pruned: dict, archive) -> Path:
    """The archive file of a pruned run: the one recorded, or its name in ``archive``."""
    if pruned["archive"] is None and archive is None:
        raise NotFoundError(
            f"run {run['name']!r} was pruned without an archive: no archive holds its rows; "
            f"ingesting its file again ({run['source']}) brings them back"
        )
    recorded = Path(pruned["archive"]) if pruned["archive"] else None
    name = recorded.name if recorded else archive_name(run["content_sha256"], pruned["rows_sha256"])
    path = recorded if archive is None else Path(archive)
    if path.is_dir():
        path = path / name
    if not path.is_file():
        raise NotFoundError(
            f"no archive of run {run['name']!r} at {path} (its rows were archived as {name}); "
            "name the folder that holds it"
        )
    return path


# --- the archive files and the rows' hash ---------------------------------------------------------


def archive_name(content_sha256: str, rows_digest: str) -> str:
    """The archive file of a run's rows: its content hash, then 12 digits of the rows' own."""
    return f"{content_sha256}-{rows_digest[:12]}.parquet"


def write_archive(rows, folder: Path, run: dict, digest: str) -> str:
    """Write ``rows`` to their archive file in ``folder`` (Parquet, zstd), whole or not at
    all: written beside it, flushed to the disk, renamed into place; returns its path."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = (folder / archive_name(run["content_sha256"], digest)).resolve()
        temporary = path.with_name(f".{path.name}.{os.getpid()}.writing")
        metadata = {
            b"rankhouse.run": str(run["name"]).encode(),
            b"rankhouse.system_tag": str(run["system_tag"]).encode(),
            b"rankhouse.content_sha256": str(run["content_sha256"]).encode(),
            b"rankhouse.rows_sha256": digest.encode(),
        }
        try:
            pq.write_table(rows.replace_schema_metadata(metadata), temporary, compression="zstd")
            flush_to_disk(temporary)
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
        flush_to_disk(path.parent)
    except OSError as exc:
        raise RankhouseError(
            f"cannot write the archive of run {run['name']!r} in {folder}: {exc.strerror or exc}; "
            "nothing of it was pruned"
        ) from None
    return str(path)


def read_archive(path: Path):
    """The rows of an archive file, as written (refused when it is not one)."""
    try:
        rows = pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        raise RankhouseError(f"cannot read the archive {path}: {exc}") from None
    if rows.schema.names != list(_ROW_COLUMNS):
        raise RankhouseError(
            f"the archive {path} is not a run's rows: its columns are "
            f"{', '.join(rows.schema.names)}"
        )
    return rows.replace_schema_metadata(None)


def rows_sha256(rows) -> str:
    """The sha256 of a run's rows, whatever their order or chunks: sorted by query and
    document id (byte order), then each column in turn, its name and its bytes: text as
    64-bit little-endian lengths and the UTF-8 bytes, ``rank`` as a null mask and 64-bit
    values (0 where null), ``score`` as its IEEE 754 doubles, so equal hashes mean the same
    bits."""
    ordered = rows.sort_by([("query_id", "ascending"), ("doc_id", "ascending")])
    digest = hashlib.sha256()
    for name in _ROW_COLUMNS:
        column = ordered.column(name).combine_chunks()
        digest.update(name.encode() + b"\0")
        for part in _column_bytes(name, column):
            digest.update(part)
    return digest.hexdigest()


def _column_bytes(name: str, column) -> list[Any]:
    if name in ("query_id", "doc_id"):
        text = column.cast(pa.large_string())
        offsets = np.frombuffer(text.buffers()[1], dtype="<i8")[
            text.offset : text.offset + len(text) + 1
        ]
        start, end = (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)
        data = text.buffers()[2]
        body = b"" if data is None else memoryview(data)[start:end]
        return [np.diff(offsets).astype("<i8").tobytes(), body]
    if name == "rank":
        mask = column.is_null().to_numpy(zero_copy_only=False).astype("u1")
        values = column.fill_null(0).cast(pa.int64()).to_numpy().astype("<i8")
        return [mask.tobytes(), values.tobytes()]
    return [column.cast(pa.float64()).to_numpy().astype("<f8").tobytes()]
