#!/usr/bin/env python3
"""Time the diversity measures (sql/measures/diversity.sql) on a TREC Web-sized input, beside
nDCG@20 on the same run and ir_measures' reference (pyndeval, ndeval in C).

The input is made here, seeded: 50 queries, 3-8 intents each, 400 judged documents a query of
which each is relevant to an intent with chance 0.08 (TREC Web 2012's diversity qrels: 50
queries, 2-6 intents, ~300 judged a query), and a run of 1,000 documents a query holding the
judged ones at random ranks. Each figure is the median wall time of `rankhouse eval QRELS RUN
-m ... --recompute` on the stored qrels set and run (a new process each time), and of
pyndeval evaluating the same lists in one process (reading excluded).

  python benchmarks/bench_diversity.py [--repeat 5] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workload import median_seconds

DIVERSITY = ["alpha_nDCG@20", "ERR_IA@20", "nERR_IA@20", "StRecall@20", "P_IA@20", "NRBP", "AP_IA"]
ORDINARY = ["nDCG@20", "P@20"]


def make_input(folder: Path, seed: int = 7) -> tuple[Path, Path, list, list]:
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(50):
        qid = str(101 + q)
        judged = [f"clueweb12-{q:02d}-{d:05d}" for d in rng.sample(range(20_000), 400)]
        for intent in range(1, rng.randint(3, 8) + 1):
            for doc in judged:
                qrels.append((qid, str(intent), doc, 1 if rng.random() < 0.08 else 0))
        docs = judged + [f"clueweb12-{q:02d}-x{d:05d}" for d in range(600)]
        rng.shuffle(docs)
        run += [(qid, doc, float(1000 - rank)) for rank, doc in enumerate(docs)]
    qrels_path, run_path = folder / "web.diversity.qrels", folder / "web.run"
    qrels_path.write_text("".join(f"{q} {i} {d} {g}\n" for q, i, d, g in qrels))
    run_path.write_text(
        "".join(f"{q} Q0 {d} {r + 1} {s} bench\n" for r, (q, d, s) in enumerate(run))
    )
    return qrels_path, run_path, qrels, run


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=None)
    given = parser.parse_args()
    folder = given.workdir or Path(tempfile.mkdtemp(prefix="bench-diversity-"))
    folder.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path, qrels, run = make_input(folder)
    db = str(folder / "w.duckdb")
    rankhouse = [sys.executable, "-m", "rankhouse", "--db", db]
    subprocess.run([*rankhouse, "ingest", "qrels", str(qrels_path), "--intents"], check=True)
    subprocess.run([*rankhouse, "ingest", "run", str(run_path)], check=True)
    timings = (
        ("nDCG@20, P@20", ORDINARY),
        ("the 7 diversity measures", DIVERSITY),
        ("nNRBP (the whole greedy ideal ranking)", ["nNRBP"]),
    )
    for label, measures in timings:
        asked = [arg for m in measures for arg in ("-m", m)]
        command = [*rankhouse, "eval", "web.diversity", "bench", *asked, "--recompute"]
        walls = [timed(command) for _ in range(given.repeat)]
        print(f"rankhouse eval, {label}: {statistics.median(walls):.2f} s")
    import pyndeval

    names = ["alpha-nDCG@20", "ERR-IA@20", "nERR-IA@20", "strec@20", "P-IA@20", "NRBP", "MAP-IA"]
    seconds = median_seconds(lambda: pyndeval.ndeval(qrels, run, names), given.repeat)
    print(f"pyndeval (in process), the same 7: {seconds:.2f} s")
    seconds = median_seconds(lambda: pyndeval.ndeval(qrels, run, ["nNRBP"]), given.repeat)
    print(f"pyndeval (in process), nNRBP: {seconds:.2f} s")


if __name__ == "__main__":
    main()
