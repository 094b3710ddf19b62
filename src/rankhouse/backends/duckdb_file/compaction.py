"""A DuckDB file gives back the space of deleted rows: compaction, and a run's rows as Arrow.

DuckDB marks the blocks of deleted rows free inside the file and reuses them for later
writes, but never shrinks the file: a warehouse whose old run rows were pruned keeps its size
until the file is copied. :func:`compact_file` copies it (``ATTACH`` a new file, ``COPY FROM
DATABASE``: tables, views, sequences at their current values) and puts the copy in the old
file's place with one ``rename``.

**Safe under kill -9 and a full disk.** The copy is written beside the file, to
``<file>.compacting``, while the store holds DuckDB's lock on the old file (no other process
writes it meanwhile; one that waits gets the new file by its path when the lock goes). The old
file is not touched until the rename, which replaces it whole or not at all:

* killed before the rename, the old file is the warehouse, as it was; the leftover copy is
  never opened by anything else and is removed by the next compaction;
* a copy that fails (a full disk, an error of DuckDB's) is removed and the error raised, the
  old file untouched; before copying, the free space is checked against the bytes the file's
  used blocks hold (the copy is at most that), so a disk that cannot take it is refused first;
* the copy is flushed to the disk (``fsync``) before the rename, and the folder after it, so a
  power cut leaves either file whole.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...duck import load_package, register
from ...errors import RankhouseError
from ...lazy import pyarrow as pa
from ...lazy import shutil
from ...outputs import flush_to_disk

#: Bytes a run row takes in a DuckDB file (a DL19 night: 43,000 rows), measured by
#: benchmarks/retention_bytes.py (docs/retention.md): the estimate ``runs prune`` gives.
RUN_ROW_BYTES = 15.2

#: The suffix of the copy a compaction writes beside the file.
COMPACTING = ".compacting"

#: Room kept free beyond the copy itself (DuckDB's write-ahead log and metadata).
_HEADROOM = 64 * 1024 * 1024

_ATTACHED = "rankhouse_compacted"


def compact_file(path: str, duck) -> tuple[int, int]:
    """Copy the warehouse file ``path``, open on ``duck`` (its write lock held by the caller),
    into a new file and rename that over it; returns the file's size before and after.

    The caller's connection still reads the old file afterwards: it must reconnect.

    Raises:
        RankhouseError: too little free space for the copy, or the copy failed (the file is
            then as it was).
    """
    file = Path(path)
    copy = file.with_name(file.name + COMPACTING)
    remove_leftover(copy)
    duck.execute("CHECKPOINT")  # everything in the file itself, the log empty
    before = file.stat().st_size
    block_size, used_blocks = duck.execute(
        "SELECT block_size, used_blocks FROM pragma_database_size() "
        "WHERE database_name = current_database()"
    ).fetchone()
    needed = int(block_size) * int(used_blocks) + _HEADROOM
    free = shutil.disk_usage(file.parent).free
    if free < needed:
        raise RankhouseError(
            f"cannot compact {file}: the copy needs up to {_megabytes(needed)} beside it and "
            f"{file.parent} has {_megabytes(free)} free; free some space (the warehouse is "
            "unchanged)"
        )
    database = duck.execute("SELECT current_database()").fetchone()[0]
    try:
        duck.execute(f"ATTACH '{_quoted(copy)}' AS {_ATTACHED}")
        try:
            duck.execute(f'COPY FROM DATABASE "{database}" TO {_ATTACHED}')
        finally:
            duck.execute(f"DETACH {_ATTACHED}")
        flush_to_disk(copy)
        replace(copy, file)
        flush_to_disk(file.parent)
    except BaseException as exc:
        remove_leftover(copy)
        if isinstance(exc, Exception) and not isinstance(exc, RankhouseError):
            raise RankhouseError(
                f"cannot compact {file}: {str(exc).splitlines()[0]} (the warehouse is unchanged)"
            ) from exc
        raise
    return before, file.stat().st_size


def replace(copy: Path, file: Path) -> None:
    """Put the compacted copy in the file's place: one rename (a module function, so that a
    test can stop a compaction at this point)."""
    os.replace(copy, file)


def remove_leftover(copy: Path) -> None:
    """Remove the copy (and its log) a compaction left when it was killed or failed."""
    for leftover in (copy, copy.with_name(copy.name + ".wal")):
        leftover.unlink(missing_ok=True)


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.0f} MB"


# --- a run's rows as Arrow (the store's side of prune and restore) ------------------------------


def read_run_rows(duck, run_id: int):
    """The rows of run ``run_id`` on the DuckDB connection ``duck`` as an Arrow table
    (``query_id, doc_id, rank, score``), in query and document byte order."""
    load_package()  # the rows are read through the relation API
    return duck.sql(
        "SELECT query_id, doc_id, rank, score FROM run_rows WHERE run_id = $id "
        "ORDER BY query_id, doc_id",
        params={"id": int(run_id)},
    ).to_arrow_table()


def insert_arrow_rows(duck, run_id: int, rows) -> int:
    """Insert the Arrow table ``rows`` (as :func:`read_run_rows` gives) as the rows of run
    ``run_id`` on ``duck``; how many."""
    expected = ["query_id", "doc_id", "rank", "score"]
    if rows.schema.names != expected:
        raise RankhouseError(
            f"run rows need the columns {', '.join(expected)}; found {', '.join(rows.schema.names)}"
        )
    register(duck, "_rankhouse_rows_back", pa.table(rows.columns, names=expected))
    try:
        duck.execute(
            "INSERT INTO run_rows (run_id, query_id, doc_id, rank, score) "
            "SELECT ?, query_id, doc_id, rank, score FROM _rankhouse_rows_back",
            [run_id],
        )
    finally:
        duck.unregister("_rankhouse_rows_back")
    return rows.num_rows
