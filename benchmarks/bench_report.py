#!/usr/bin/env python3
"""Time `rankhouse report` on 10 runs x 6,980 MS MARCO dev queries, and measure the file.

Builds (once, in --workdir) ten runs of one system tag with ../shared/tools/make_run.py
(--depth documents per query, signal rising then falling, so the trend has a shape and the
gate fails once), ingests them into a new warehouse, evaluates nDCG@10, AP and RR and gates
each run against the previous one. Then, each command a separate process:

  first report    `rankhouse report --baseline run-01`: also evaluates and stores the 11
                  precision-recall points of the ten runs
  stored report   the same again: everything is stored, so this is the rendering cost

and prints the median wall time, peak memory and the size of the HTML file.

  python benchmarks/bench_report.py [--repeat 3] [--depth 100] [--workdir benchmarks/data]

Measured on the project's 2-core machine (--depth 100; the table in docs/report.md): the
stored report 7.16 s and the first 8.97 s (medians of --repeat 3, machine idle); 591 / 807 MiB;
an HTML file of 0.83 MiB.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from workload import QRELS, ROOT, measured, print_figures, synthetic_run

SIGNALS = (1.0, 1.2, 1.4, 1.5, 1.7, 0.6, 1.8, 1.9, 2.0, 2.1)
MEASURES = ["nDCG@10", "AP", "RR"]


def make_runs(workdir: Path, depth: int) -> list[Path]:
    """The ten run files (built once per depth)."""
    if not QRELS.exists():
        sys.exit(f"needs {QRELS} (../shared beside the checkout)")
    folder = workdir / f"report-runs-{depth}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, signal in enumerate(SIGNALS, 1):
        path = folder / f"run-{i:02d}.run"
        synthetic_run(path, QRELS, depth=depth, seed=i, tag="nightly", signal=signal)
        paths.append(path)
    return paths


def build_warehouse(db: Path, runs: list[Path]) -> None:
    """Qrels, the ten runs with a commit each, their evaluations and gates."""
    sys.path.insert(0, str(ROOT / "src"))
    from rankhouse import Warehouse
    from rankhouse.regress import regress

    with Warehouse(db) as wh:
        wh.ingest_qrels(QRELS, name="msmarco-dev")
        for i, path in enumerate(runs, 1):
            name = path.stem
            wh.ingest_run(path, name=name, meta={"commit": f"c{i:06x}"})
            wh.evaluate("msmarco-dev", [name], MEASURES)
            if i > 1:
                regress(wh, name, baseline="previous", qrels="msmarco-dev", measures=MEASURES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--workdir", type=Path, default=ROOT / "benchmarks" / "data")
    args = parser.parse_args()
    runs = make_runs(args.workdir, args.depth)
    rankhouse = [sys.executable, "-m", "rankhouse"]
    figures: dict[str, list[tuple[float, float]]] = {"first": [], "stored": []}
    sizes = []
    with tempfile.TemporaryDirectory() as scratch:
        template = Path(scratch) / "template.duckdb"
        print("building the warehouse ...", file=sys.stderr)
        build_warehouse(template, runs)
        for round_ in range(args.repeat):
            db = Path(scratch) / f"w{round_}.duckdb"
            shutil.copy(template, db)
            out = Path(scratch) / "report.html"
            command = [*rankhouse, "--db", str(db), "report", "-o", str(out)]
            command += ["--baseline", "run-01", *(f"-m{m}" for m in MEASURES)]
            for key in ("first", "stored"):
                wall, peak, _ = measured(command)
                figures[key].append((wall, peak))
            sizes.append(out.stat().st_size)
    print_figures(
        f"report, 10 runs x {args.depth} docs x 6,980 queries",
        figures,
        {"first": "first report (+ 11 IPrec points)", "stored": "report, all stored"},
    )
    print(f"HTML file: {max(sizes) / 2**20:.2f} MiB")


if __name__ == "__main__":
    main()
