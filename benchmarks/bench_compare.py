#!/usr/bin/env python3
"""What intervals, verdicts, all pairs and order drift cost in ``rankhouse compare``, beside
the compare of a checkout from before them, on DL19 and on W1.

DL19: the TREC DL 2019 passage qrels (43 judged queries) and 4 synthetic systems of 1,000
documents per query; W1: the MS MARCO dev subset qrels (6,980 judged queries) and 10 systems
of 1,000 documents per query (6.98 M lines each). Runs come from ../shared/tools/make_run.py
(seeds 1.., signals rising), written under --workdir once. Each side gets its own warehouse
with every run ingested and evaluated first (a warehouse written by this checkout is newer
than the other one reads), so each command reads stored values. Commands, whole processes
(median wall seconds and peak MiB of --repeat runs):

  before   compare QRELS RUNS -m M... --baseline first   (the other checkout: means, t-tests)
  after    the same command                              (+ intervals, g_z, verdicts)
  boot     ... --interval bootstrap                      (10,000 resamples a mean and a pair)
  tukey    compare QRELS RUNS -m M... --all-pairs        (ANOVA, randomised Tukey HSD 10,000)
  holm     ... --all-pairs --test t                      (paired t-tests, Holm)
  drift    ... --baseline first --drift                  (first time: computed and stored)
  drift'   the same again                                (read back)

  python benchmarks/bench_compare.py --before /path/to/other/venv/bin/python [--repeat 5]
      [--scales dl19,w1] [--workdir benchmarks/data]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from workload import QRELS, ROOT, SHARED, measured, synthetic_run

MEASURES = ["AP", "nDCG@10", "P@10", "RR", "R@1000"]
DL19 = SHARED / "data" / "qrels" / "qrels.dl19-passage.txt"
SCALES = {"dl19": (DL19, 4), "w1": (QRELS, 10)}
CLEAR_DRIFT = "DELETE FROM drift_values; DELETE FROM drift_evaluations"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the Python of the other checkout")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scales", default="dl19,w1")
    parser.add_argument("--workdir", type=Path, default=ROOT / "benchmarks" / "data")
    args = parser.parse_args()
    after = [sys.executable, "-m", "rankhouse"]
    before = [args.before, "-m", "rankhouse"]
    m_args = [arg for m in MEASURES for arg in ("-m", m)]
    print(f"{'scale':6s} {'command':8s} {'median s':>9s} {'min s':>7s} {'max s':>7s} {'MiB':>7s}")
    for scale in args.scales.split(","):
        qrels, systems = SCALES[scale]
        runs = [
            synthetic_run(
                args.workdir / f"{scale}-s{seed}.run",
                qrels,
                seed=seed,
                tag=f"s{seed}",
                signal=1.0 + 0.1 * seed,
            )
            for seed in range(1, systems + 1)
        ]
        names = [run.stem for run in runs]
        with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
            dbs = {"before": Path(tmp) / "before.duckdb", "after": Path(tmp) / "after.duckdb"}
            for side, command in (("before", before), ("after", after)):
                _load(command, dbs[side], qrels, runs, names, m_args)
            compare = ["compare", "q", *names, *m_args]
            against = [*compare, "--baseline", names[0]]
            cases = [
                ("before", [*before, "--db", str(dbs["before"]), *against], None),
                ("after", [*after, "--db", str(dbs["after"]), *against], None),
                (
                    "boot",
                    [*after, "--db", str(dbs["after"]), *against, "--interval", "bootstrap"],
                    None,
                ),
                ("tukey", [*after, "--db", str(dbs["after"]), *compare, "--all-pairs"], None),
                (
                    "holm",
                    [*after, "--db", str(dbs["after"]), *compare, "--all-pairs", "--test", "t"],
                    None,
                ),
                ("drift", [*after, "--db", str(dbs["after"]), *against, "--drift"], CLEAR_DRIFT),
                ("drift'", [*after, "--db", str(dbs["after"]), *against, "--drift"], None),
            ]
            for label, command, before_each in cases:
                walls, peaks = [], []
                for _ in range(args.repeat):
                    if before_each:
                        sql = [*after, "--db", str(dbs["after"]), "sql", "--write", before_each]
                        subprocess.run(sql, check=True, capture_output=True)
                    wall, peak, _ = measured(command)
                    walls.append(wall)
                    peaks.append(peak)
                print(
                    f"{scale:6s} {label:8s} {statistics.median(walls):9.2f} {min(walls):7.2f} "
                    f"{max(walls):7.2f} {statistics.median(peaks):7.0f}",
                    flush=True,
                )


def _load(rankhouse: list[str], db: Path, qrels: Path, runs, names, m_args) -> None:
    """Every run ingested and evaluated, so that compare reads stored values."""
    steps = [["ingest", "qrels", str(qrels), "--name", "q"]]
    steps += [["ingest", "run", str(r), "--name", n] for r, n in zip(runs, names, strict=True)]
    steps.append(["eval", "q", *names, *m_args])
    for step in steps:
        subprocess.run([*rankhouse, "--db", str(db), *step], check=True, capture_output=True)


if __name__ == "__main__":
    main()
