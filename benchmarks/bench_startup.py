#!/usr/bin/env python3
"""Start-up of the everyday warehouse commands, side by side with ``import duckdb``.

A command imports only what it runs (issue 36): ``runs list``, ``history -m AP`` and ``eval``
of values already stored spend most of their time starting, so each is timed as a whole
process, in turn with ``python -c "import duckdb"`` (the floor any command pays) and, with
``--against SRC``, with the same command run from another checkout's ``src`` folder (e.g. a
``git worktree`` of an older commit). The warehouse is the bundled examples' (qrels ``ex``, runs
``bm25`` and ``dense`` evaluated with AP), made once per checkout by that checkout's code.

For each command: the median wall seconds, the median of the pair-by-pair ratios to
``import duckdb`` (and to the other checkout), and how many of rankhouse's modules the process
imported.

  python benchmarks/bench_startup.py [--repeat 15] [--against /tmp/old/src]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
COMMANDS = {
    "runs list": ["runs", "list"],
    "history -m AP": ["history", "-m", "AP"],
    "eval (stored)": ["eval", "ex", "bm25", "dense", "-m", "AP"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--against", type=Path, help="another checkout's src folder")
    args = parser.parse_args()
    sources = {"here": ROOT / "src"}
    if args.against is not None:
        sources["against"] = args.against.resolve()
    with tempfile.TemporaryDirectory() as folder:
        warehouses = {
            name: _stocked(src, Path(folder) / f"{name}.duckdb") for name, src in sources.items()
        }
        rows = []
        for label, command in COMMANDS.items():
            lines = {
                name: [sys.executable, "-m", "rankhouse", "--db", str(warehouses[name]), *command]
                for name in sources
            }
            floor = [sys.executable, "-c", "import duckdb"]
            walls: dict[str, list[float]] = {name: [] for name in [*sources, "duckdb"]}
            for _ in range(args.repeat):  # in turn, so that drift of the machine hits all
                walls["duckdb"].append(_wall(floor, ROOT / "src"))
                for name, line in lines.items():
                    walls[name].append(_wall(line, sources[name]))
            row = {
                "command": label,
                "seconds": statistics.median(walls["here"]),
                "import duckdb": statistics.median(walls["duckdb"]),
                "ratio": _paired(walls["here"], walls["duckdb"]),
                "modules": _modules(command, warehouses["here"], sources["here"]),
            }
            if "against" in sources:
                row["against seconds"] = statistics.median(walls["against"])
                row["against ratio"] = _paired(walls["against"], walls["duckdb"])
                row["against modules"] = _modules(
                    command, warehouses["against"], sources["against"]
                )
            rows.append(row)
    _print(rows, args.repeat)


def _env(src: Path) -> dict[str, str]:
    """The environment of a timed command: ``src`` first on the path, no warehouse named, and
    Python's bytecode written and read as an installed package's is (a shell that sets
    PYTHONDONTWRITEBYTECODE would otherwise time the compiling of every module)."""
    dropped = {"RANKHOUSE_DB", "PYTHONDONTWRITEBYTECODE"}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    return env | {"PYTHONPATH": str(src)}


def _stocked(src: Path, path: Path) -> Path:
    """The examples' warehouse, made by the code under ``src``."""
    base = [sys.executable, "-m", "rankhouse", "--db", str(path)]
    steps = [
        ["ingest", "qrels", str(EXAMPLES / "qrels.txt"), "--name", "ex"],
        ["ingest", "run", str(EXAMPLES / "run.bm25.txt"), "--name", "bm25"],
        ["ingest", "run", str(EXAMPLES / "run.dense.txt"), "--name", "dense"],
        ["eval", "ex", "bm25", "dense", "-m", "AP"],
    ]
    for step in steps:
        subprocess.run([*base, *step], env=_env(src), check=True, capture_output=True)
    return path


def _wall(command: list[str], src: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=_env(src), check=True, capture_output=True)
    return time.perf_counter() - start


def _paired(ours: list[float], floor: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(ours, floor, strict=True))


#: Runs the CLI in this process and, as it leaves (the CLI ends with ``os._exit``), prints how
#: many of rankhouse's modules are loaded: ``-X importtime`` misses those imported through
#: ``importlib.import_module`` (the command modules).
_COUNTING = """
import os, runpy, sys
leave = os._exit
def counted(code=0):
    loaded = sum(1 for name in sys.modules if name.split('.')[0] == 'rankhouse')
    os.write(2, f'\\nrankhouse modules: {loaded}\\n'.encode())
    leave(code)
os._exit = counted
sys.argv = ['rankhouse', *sys.argv[1:]]
try:
    runpy.run_module('rankhouse', run_name='__main__')
finally:
    counted()
"""


def _modules(command: list[str], warehouse: Path, src: Path) -> int:
    """How many of rankhouse's modules the command loads (``sys.modules`` as it leaves)."""
    done = subprocess.run(
        [sys.executable, "-c", _COUNTING, "--db", str(warehouse), *command],
        env=_env(src),
        capture_output=True,
        text=True,
    )
    counts = [line for line in done.stderr.splitlines() if line.startswith("rankhouse modules: ")]
    return int(counts[-1].rsplit(" ", 1)[1])


def _print(rows: list[dict], repeat: int) -> None:
    print(f"medians of {repeat} rounds, each command in turn with python -c 'import duckdb'")
    against = "against seconds" in rows[0]
    header = "| command | seconds | import duckdb | ratio | modules |"
    rule = "| --- | ---: | ---: | ---: | ---: |"
    if against:
        header += " against: seconds | ratio | modules |"
        rule += " ---: | ---: | ---: |"
    print(header)
    print(rule)
    for row in rows:
        line = (
            f"| {row['command']} | {row['seconds']:.3f} | {row['import duckdb']:.3f} | "
            f"{row['ratio']:.2f}x | {row['modules']} |"
        )
        if against:
            line += (
                f" {row['against seconds']:.3f} | {row['against ratio']:.2f}x | "
                f"{row['against modules']} |"
            )
        print(line)


if __name__ == "__main__":
    main()
