"""Synthetic runs of a few systems for the history, compare, regress and SQL tests.

Runs come from ``../shared/tools/make_run.py`` over the TREC DL 2019 passage qrels (43
judged queries, graded 0-3), 100 documents per query. A larger ``signal`` ranks relevant
documents higher, so it makes a better run; the same seed and signal give the same ranking
whatever the tag.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DEPTH = 100


@dataclass(frozen=True)
class RunSpec:
    """One synthetic run file: ``<name>.run`` with run tag ``tag``."""

    name: str
    tag: str
    seed: int
    signal: float


# Used across the test files; the comments say what each run is for.
SPECS = (
    RunSpec("night-1", "nightly", seed=1, signal=1.0),
    RunSpec("night-2", "nightly", seed=2, signal=2.0),  # the usual baseline
    RunSpec("night-3", "nightly", seed=3, signal=0.3),  # much worse: regresses
    RunSpec("better", "nightly", seed=5, signal=3.0),  # better than night-2
    RunSpec("copy", "copy", seed=2, signal=2.0),  # ranks exactly as night-2
    RunSpec("slightly-worse", "nightly", seed=2, signal=1.8),  # small but significant drop
    RunSpec("noisy-worse", "nightly", seed=7, signal=1.8),  # drop of 0.024, not significant
    RunSpec("bm25-old", "bm25", seed=11, signal=1.5),
    RunSpec("bm25-new", "bm25", seed=12, signal=1.2),
    RunSpec("splade", "splade", seed=13, signal=2.5),
)


def qrels_path(shared_dir: Path) -> Path:
    return shared_dir / "data" / "qrels" / "qrels.dl19-passage.txt"


def make_runs(shared_dir: Path, folder: Path, specs=SPECS) -> dict[str, Path]:
    """Write each spec's run file into ``folder``; returns name -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    tool = shared_dir / "tools" / "make_run.py"
    paths = {}
    for spec in specs:
        path = folder / f"{spec.name}.run"
        if not path.exists():
            subprocess.run(
                [
                    sys.executable,
                    str(tool),
                    str(qrels_path(shared_dir)),
                    "-o",
                    str(path),
                    "-n",
                    str(DEPTH),
                    "--seed",
                    str(spec.seed),
                    "--tag",
                    spec.tag,
                    "--signal",
                    str(spec.signal),
                ],
                check=True,
                capture_output=True,
            )
        paths[spec.name] = path
    return paths
