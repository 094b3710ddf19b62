#!/usr/bin/env python3
"""How rankhouse grows with the run: W1 at 1x, 4x and 16x its lines, and ten W1 systems.

W1 is the MS MARCO dev qrels (6,980 judged queries) with a synthetic run of 1,000 documents
per query (6.98 M lines, ../shared/tools/make_run.py, shuffled). The larger runs keep the
queries and retrieve 4,000 and 16,000 documents per query (27.9 M and 111.7 M lines, about
1 and 4 GB): more rows per query, the shape of deeper rankings. For each size, one process
each (median of --repeat rounds, wall seconds and peak memory of the process):

  from files   `rankhouse --db NEW eval QRELS RUN` (5 measures): ingest, evaluate, store
  from storage `rankhouse --db SAME eval qrels run --recompute`

and the table says seconds per million lines (growth no worse than linear keeps it flat).
Then `compare` of ten W1-size systems (make_run --systems 10) already stored, 5 measures,
paired t-tests against the first: one call.

  python benchmarks/bench_scale.py [--repeat 3] [--sizes 1,4,16] [--systems 10]

The runs are written under --workdir (default benchmarks/data, ignored by git) once.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from workload import QRELS, ROOT, make_run, measured, synthetic_run

MEASURES = ["AP", "nDCG@10", "P@10", "RR", "R@1000"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default="1,4,16", help="multiples of 1,000 docs per query")
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--workdir", type=Path, default=ROOT / "benchmarks" / "data")
    args = parser.parse_args()
    if not QRELS.exists():
        sys.exit(f"needs {QRELS} (../shared beside the checkout)")
    args.workdir.mkdir(parents=True, exist_ok=True)
    rankhouse = [sys.executable, "-m", "rankhouse"]
    m_args = [arg for m in MEASURES for arg in ("-m", m)]

    print(
        f"{'run':28s} {'lines':>12s} {'files s':>9s} {'s/M lines':>10s} {'peak MiB':>9s} "
        f"{'stored s':>9s} {'peak MiB':>9s}"
    )
    for size in [int(s) for s in args.sizes.split(",")]:
        run = _run(args.workdir, size * 1000, 1)
        lines = _lines(run)
        files, stored = [], []
        with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
            for round_ in range(args.repeat):
                db = Path(tmp) / f"w{round_}.duckdb"
                files.append(
                    measured([*rankhouse, "--db", str(db), "eval", str(QRELS), str(run), *m_args])[
                        :2
                    ]
                )
                again = [
                    *rankhouse,
                    "--db",
                    str(db),
                    "eval",
                    "qrels.msmarco-passage.dev-subset",
                    _tag(run),
                    *m_args,
                    "--recompute",
                ]
                stored.append(measured(again)[:2])
                if round_:
                    db.unlink()
        f_wall = statistics.median(w for w, _ in files)
        s_wall = statistics.median(w for w, _ in stored)
        print(
            f"{run.name:28s} {lines:12,d} {f_wall:9.2f} {f_wall / lines * 1e6:10.3f} "
            f"{max(p for _, p in files):9.0f} {s_wall:9.2f} {max(p for _, p in stored):9.0f}",
            flush=True,
        )

    if args.systems:
        runs = [_run(args.workdir, 1000, seed) for seed in range(1, args.systems + 1)]
        with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
            db = Path(tmp) / "systems.duckdb"
            names = []
            for run in runs:
                name = run.stem
                subprocess.run(
                    [*rankhouse, "--db", str(db), "ingest", "run", str(run), "--name", name],
                    check=True,
                    capture_output=True,
                )
                names.append(name)
            subprocess.run(
                [*rankhouse, "--db", str(db), "ingest", "qrels", str(QRELS), "--name", "dev"],
                check=True,
                capture_output=True,
            )
            walls = []
            for _ in range(args.repeat):
                # a new evaluation each time: --recompute is eval's; compare on fresh values
                subprocess.run(
                    [
                        *rankhouse,
                        "--db",
                        str(db),
                        "sql",
                        "--write",
                        "DELETE FROM evaluation_values; DELETE FROM evaluations",
                    ],
                    check=True,
                    capture_output=True,
                )
                wall, peak, _ = measured(
                    [
                        *rankhouse,
                        "--db",
                        str(db),
                        "compare",
                        "dev",
                        *names,
                        *m_args,
                        "--baseline",
                        names[0],
                        "--test",
                        "t",
                    ]
                )
                walls.append((wall, peak))
        median = statistics.median(w for w, _ in walls)
        print(
            f"compare of {len(names)} stored systems x {_lines(runs[0]):,} lines, "
            f"{len(MEASURES)} measures, t-tests: median {median:.2f} s, "
            f"peak {max(p for _, p in walls):.0f} MiB"
        )


def _run(workdir: Path, depth: int, seed: int) -> Path:
    """The synthetic run of ``depth`` documents per dev query with ``seed``, built once."""
    if depth == 1000 and seed == 1:
        return make_run(workdir)  # the run of the other benchmarks
    run = workdir / f"msmarco-dev.d{depth}.s{seed}.run"
    return synthetic_run(run, QRELS, depth=depth, seed=seed, tag=f"s{seed}", shuffle=True)


def _tag(run: Path) -> str:
    with run.open() as handle:
        return handle.readline().split()[5]


def _lines(run: Path) -> int:
    with run.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 24), b""))


if __name__ == "__main__":
    main()
