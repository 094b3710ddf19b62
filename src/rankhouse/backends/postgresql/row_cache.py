"""Run rows and judgments of a server warehouse kept on this machine, as Parquet files.

An evaluation against a PostgreSQL warehouse computes in a local DuckDB (:mod:`.workspace`),
so it first needs the run's rows there; fetching seven million of them takes seconds, reading
them from a local Parquet file a fraction of that. A file is named by what identifies the
stored rows for their whole life (the content hash, parse options and tag that the server's
UNIQUE constraint holds, the time they were stored, their count): a run removed and ingested
again is another file, so an entry is never stale and never needs invalidating. Ingest writes
the entry of what it stored; an evaluation that had to fetch writes what it fetched.

Where: ``$RANKHOUSE_CACHE`` (a folder, or ``off``), else ``$XDG_CACHE_HOME/rankhouse`` or
``~/.cache/rankhouse``. Size: at most ``$RANKHOUSE_CACHE_MB`` megabytes (default 2048), the
least recently used files removed first.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ...duck import duckdb

CACHE_ENV = "RANKHOUSE_CACHE"
CACHE_SIZE_ENV = "RANKHOUSE_CACHE_MB"
DEFAULT_SIZE_MB = 2048


def cache_folder() -> Path | None:
    """rankhouse's cache folder; None when ``$RANKHOUSE_CACHE`` is ``off``."""
    setting = os.environ.get(CACHE_ENV, "")
    if setting.lower() == "off":
        return None
    if setting:
        return Path(setting).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "rankhouse"


class RowCache:
    """A folder of Parquet files, each the rows of one stored run or qrels set.

    Args:
        folder: where the files live (created when first written).
        max_bytes: the folder's size bound.
    """

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    @classmethod
    def from_environment(cls) -> RowCache | None:
        """The cache the environment asks for; None when ``$RANKHOUSE_CACHE`` is ``off``."""
        folder = cache_folder()
        if folder is None:
            return None
        megabytes = int(os.environ.get(CACHE_SIZE_ENV) or DEFAULT_SIZE_MB)
        return cls(folder, megabytes * 1024 * 1024)

    def path(self, identity: tuple) -> Path:
        """The file of the rows ``identity`` names (a tuple of catalogue values)."""
        key = "\x1f".join(str(part) for part in identity)
        return self.folder / f"{hashlib.sha256(key.encode()).hexdigest()}.parquet"

    def find(self, identity: tuple) -> Path | None:
        """The file of ``identity`` if it is here (marked as just used), else None."""
        path = self.path(identity)
        try:
            os.utime(path)
        except OSError:
            return None
        return path

    def store(self, duck, select: str, identity: tuple) -> None:
        """Write the rows of ``select`` (run on the DuckDB connection ``duck``) as the file
        of ``identity``. A cache that cannot be written is no error: the next evaluation
        fetches the rows again."""
        final = self.path(identity)
        partial = final.with_name(f".{final.stem}.{os.getpid()}.tmp")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            target = str(partial).replace("'", "''")
            duck.execute(f"COPY ({select}) TO '{target}' (FORMAT parquet, COMPRESSION zstd)")
            os.replace(partial, final)  # whole or absent, whoever reads it
        except (OSError, duckdb.Error):
            partial.unlink(missing_ok=True)
            return
        self.trim()

    def forget(self, path: Path) -> None:
        """Remove a file that could not be read."""
        path.unlink(missing_ok=True)

    def trim(self) -> None:
        """Remove the least recently used files until the folder fits ``max_bytes``."""
        try:
            files = [(p.stat(), p) for p in self.folder.glob("*.parquet")]
        except OSError:
            return
        total = sum(stat.st_size for stat, _ in files)
        for stat, path in sorted(files, key=lambda found: found[0].st_mtime):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= stat.st_size
