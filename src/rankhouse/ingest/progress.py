"""A progress display on stderr for big files on a terminal, and nothing otherwise.

Two lines: the bytes hashed of the file's size, and the stage the ingest is in (reading,
validating, writing). A stage cannot know how much it has left, so its line shows how long it
has run instead of a count of bytes it does not have.
"""

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


def columns() -> list:
    """The display's columns (rich's): a spinner, what the line is, a bar, the bytes done of
    the total (only on a line that has a total), and the time the line has run."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        ProgressColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    class KnownBytes(ProgressColumn):
        """Bytes done of the total on a line that knows its total; nothing on a stage's line
        (where rich's own column would say ``0/? bytes`` for the whole ingest)."""

        def __init__(self) -> None:
            super().__init__()
            self._bytes = DownloadColumn()

        def render(self, task) -> Text:
            return Text("") if task.total is None else self._bytes.render(task)

    return [
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        KnownBytes(),
        TimeElapsedColumn(),
    ]


class IngestProgress:
    """A bar for the bytes hashed plus the current stage (reading, validating, writing), with
    the time spent in that stage.

    Disabled instances do nothing, so callers never test whether progress is on.
    """

    def __init__(self, enabled: bool, label: str, total_bytes: int) -> None:
        self._progress = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import Progress

        self._progress = Progress(*columns(), console=Console(stderr=True), transient=True)
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
        """Name what the ingest is doing now; its time starts again."""
        if self._progress is not None:
            self._progress.reset(self._phase, total=None, description=description)

    def bytes_done(self, done: int) -> None:
        """Called (from the hashing thread) with the bytes read so far."""
        if self._progress is not None:
            self._progress.update(self._bytes, completed=done)
