"""What the benchmark scripts share: the MS MARCO-scale workload and whole-process timing."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
QRELS = SHARED / "data" / "qrels" / "qrels.msmarco-passage.dev-subset.txt"


# The usual way to feed pytrec_eval: both TREC files read into dicts. Benchmarks append the
# evaluation; argv[1] is the qrels file, argv[2] the run.
PYTREC_READ_FILES = r"""
import json, sys, pytrec_eval
qrels, run = {}, {}
with open(sys.argv[1]) as f:
    for line in f:
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
with open(sys.argv[2]) as f:
    for line in f:
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
"""


def server_arguments(description: str, extra=None) -> argparse.Namespace:
    """The arguments of a benchmark against a PostgreSQL server: its URL (default: the one
    scripts/with-postgres names), --repeat and --workdir; ``extra`` adds its own options to
    the parser first. Exits with a sentence when no server is named."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("url", nargs="?", default=os.environ.get("RANKHOUSE_TEST_POSTGRES"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=ROOT / "benchmarks" / "data")
    if extra is not None:
        extra(parser)
    args = parser.parse_args()
    if not args.url:
        sys.exit("give a postgresql:// URL (or run under scripts/with-postgres)")
    return args


def make_run(workdir: Path) -> Path:
    """The 7-million-line run (6,980 dev queries x 1,000 documents, shuffled), built once."""
    if not QRELS.exists():
        sys.exit(f"needs {QRELS} (../shared beside the checkout)")
    return synthetic_run(workdir / "msmarco-dev.run", QRELS, shuffle=True)


def synthetic_run(
    run: Path,
    qrels: Path,
    *,
    depth: int = 1000,
    seed: int = 1,
    tag: str | None = None,
    shuffle: bool = False,
    signal: float | None = None,
) -> Path:
    """``run``, written by ../shared/tools/make_run.py for ``qrels`` unless it exists."""
    if run.exists():
        return run
    run.parent.mkdir(parents=True, exist_ok=True)
    print(f"building {run} with make_run.py ...", file=sys.stderr)
    command = [sys.executable, str(SHARED / "tools" / "make_run.py"), str(qrels), "-o", str(run)]
    command += ["-n", str(depth), "--seed", str(seed)]
    if tag is not None:
        command += ["--tag", tag]
    if signal is not None:
        command += ["--signal", str(signal)]
    if shuffle:
        command.append("--shuffle")
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return run


def measured(command: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) and stdout of ``command``.

    The command runs under a small probe process, so that the probe's RUSAGE_CHILDREN is the
    peak memory of this command alone.
    """
    probe = (
        "import json,resource,subprocess,sys,time;"
        "t=time.perf_counter();d=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
        "w=time.perf_counter()-t;"
        "print(json.dumps([w,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,"
        "d.returncode,d.stdout,d.stderr]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *command], capture_output=True, text=True, check=True
    )
    wall, peak, code, out, err = json.loads(done.stdout)
    if code != 0:
        sys.exit(f"command failed ({code}): {' '.join(command)}\n{err}")
    return wall, peak, out


def median_seconds(call, repeat: int) -> float:
    """The median wall seconds of ``repeat`` calls of ``call`` (in this process)."""
    walls = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


def median_walls(figures: dict[str, list[tuple[float, float]]]) -> dict[str, float]:
    """The median wall time of each command's (wall, peak) figures."""
    return {key: statistics.median(wall for wall, _ in runs) for key, runs in figures.items()}


def paired_speedup(figures: dict[str, list[tuple[float, float]]], ours: str, theirs: str) -> float:
    """The median over rounds of theirs / ours, each round's pair timed one after the other:
    steadier than a ratio of medians when the machine's speed drifts during the run."""
    pairs = zip(figures[ours], figures[theirs], strict=True)
    return statistics.median(their_wall / our_wall for (our_wall, _), (their_wall, _) in pairs)


def print_figures(
    title: str, figures: dict[str, list[tuple[float, float]]], labels: dict[str, str]
) -> None:
    """One row per command: median, min and max wall seconds, and the peak memory."""
    print(f"{title:40s} {'median s':>9s} {'min s':>7s} {'max s':>7s} {'peak MiB':>9s}")
    for key, rows in figures.items():
        walls = [wall for wall, _ in rows]
        print(
            f"{labels[key]:40s} {statistics.median(walls):9.2f} {min(walls):7.2f} "
            f"{max(walls):7.2f} {max(peak for _, peak in rows):9.0f}"
        )
