"""What the benchmark scripts share: the MS MARCO-scale workload and whole-process timing."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
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


def make_run(workdir: Path) -> Path:
    """The 7-million-line run (6,980 dev queries x 1,000 documents, shuffled), built once."""
    if not QRELS.exists():
        sys.exit(f"needs {QRELS} (../shared beside the checkout)")
    workdir.mkdir(parents=True, exist_ok=True)
    run = workdir / "msmarco-dev.run"
    if not run.exists():
        print(f"building {run} with make_run.py ...", file=sys.stderr)
        subprocess.run(
            [
                sys.executable,
                str(SHARED / "tools" / "make_run.py"),
                str(QRELS),
                "-o",
                str(run),
                "-n",
                "1000",
                "--seed",
                "1",
                "--shuffle",
            ],
            check=True,
        )
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


def median_walls(figures: dict[str, list[tuple[float, float]]]) -> dict[str, float]:
    """The median wall time of each command's (wall, peak) figures."""
    return {key: statistics.median(wall for wall, _ in runs) for key, runs in figures.items()}


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
