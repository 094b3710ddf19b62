"""The ingest's progress display: the file's bytes on their line, a stage's time on its own.

A stage (reading, validating, writing) cannot know how much it has left: its line shows how
long it has run, never ``0/? bytes``.
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.progress import Progress

from rankhouse.ingest.parse import IngestProgress, columns


def _lines(progress: Progress) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(progress.get_renderable())
    return [line.rstrip() for line in out.getvalue().splitlines()]


def test_a_stage_shows_its_time_and_no_bytes():
    progress = Progress(*columns(), console=Console(file=io.StringIO()), auto_refresh=False)
    progress.add_task("hashing run.txt", total=3_000_000, completed=1_000_000)
    progress.add_task("reading", total=None)
    hashing, stage = _lines(progress)
    assert "hashing run.txt" in hashing
    assert "1.0/3.0 MB" in hashing
    words = [word for word in stage.split() if not set(word) <= set("━╸╺")]  # the bar
    assert words == ["⠋", "reading", "0:00:00"]  # spinner, stage, its time: no count
    assert "?" not in stage and "bytes" not in stage


def test_the_stage_line_of_an_ingest_names_the_stage():
    bar = IngestProgress(True, "run.txt", 100)
    bar.phase("validating")
    [stage] = [line for line in _lines(bar._progress) if "validating" in line]
    assert stage.endswith("0:00:00")
    assert "?" not in stage
