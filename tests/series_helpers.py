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


TINY_QUERIES = [f"q{i}" for i in range(6)]


def add_tiny_nights(wh, systems: list[str], nights: range, measures=("RR", "nDCG@10")) -> None:
    """Nights of tiny runs (6 queries x 3 documents) for each of ``systems``, evaluated on
    ``measures`` against the qrels set ``tiny`` (stored on first use). Each run is named
    ``<system>.night<NNN>``, carries ``--meta night=<date>`` and is ingested in one call of
    many tags (one ingest per run would take a minute for hundreds), then given its system
    tag; a night ranks the relevant document first for all queries but one."""
    import json
    from datetime import datetime, timedelta

    import pandas as pd

    if "tiny" not in {q["name"] for q in wh.qrels_sets().to_dict("records")}:
        judged = [(q, 0, f"{q}-d{d}", int(d == 0)) for q in TINY_QUERIES for d in range(3)]
        wh.ingest_qrels(pd.DataFrame(judged, columns=["qid", "iter", "docid", "rel"]), name="tiny")
    names = {(s, n): f"{s}.night{n:03d}" for s in systems for n in nights}
    rows = [
        (q, f"{q}-d{d}", (3 - d) if q != TINY_QUERIES[n % 6] else (1 + d) % 3 + 1, name)
        for (_, n), name in names.items()
        for q in TINY_QUERIES
        for d in range(3)
    ]
    wh.ingest_run(pd.DataFrame(rows, columns=["qid", "docid", "score", "tag"]))
    start = datetime(2025, 1, 1, 2, 13, 14)
    with wh.backend.transaction() as conn:
        for (system, night), name in names.items():
            stamp = start + timedelta(days=night, seconds=systems.index(system))
            conn.execute(
                "UPDATE runs SET system_tag = :system, metadata = :meta, ingested_at = :at "
                "WHERE name = :name",
                {
                    "system": system,
                    "meta": json.dumps({"night": f"{stamp:%Y%m%dT%H%M%SZ}"}),
                    "at": stamp,
                    "name": name,
                },
            )
    wh.evaluate("tiny", list(names.values()), list(measures))
