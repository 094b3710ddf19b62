"""A progress display on stderr for big files on a terminal, and nothing otherwise."""

from __future__ import annotations

import os
import sys

from .sources import Source

BIG_FILE_BYTES = 20 * 1024 * 1024


def wanted(requested: bool | None, size: int) -> bool:
    """Show progress when asked to, or by default for a big file when stderr is a terminal."""
    if requested is not None:
        return bool(requested) and size > 0
    return size > BIG_FILE_BYTES and sys.stderr.isatty()


def progress_for(source: Source, requested: bool | None) -> IngestProgress:
    """The display for reading ``source``: on when ``requested``, or by :func:`wanted`."""
    return IngestProgress(
        wanted(requested, source.size), os.path.basename(source.label), source.size
    )


class IngestProgress:
    """A bar for the bytes hashed plus the current phase (reading, validating, writing).

    Disabled instances do nothing, so callers never test whether progress is on.
    """

    def __init__(self, enabled: bool, label: str, total_bytes: int) -> None:
        self._progress = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._bytes = self._progress.add_task(f"hashing {label}", total=total_bytes)
        self._phase = self._progress.add_task("starting", total=None)

    def __enter__(self) -> IngestProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def phase(self, description: str) -> None:
        """Name what the ingest is doing now."""
        if self._progress is not None:
            self._progress.update(self._phase, description=description)

    def bytes_done(self, done: int) -> None:
        """Called (from the hashing thread) with the bytes read so far."""
        if self._progress is not None:
            self._progress.update(self._bytes, completed=done)
