#!/usr/bin/env python3
"""What releasing a DuckDB warehouse file between calls costs a notebook.

A :class:`rankhouse.Warehouse` opens its DuckDB file for each call (or ``with wh.session():``
block) and closes it after, so that the command line, another notebook or ``duckdb`` can use
the file between calls. This times the same warm call of stored values three ways in one
process, one phase after another:

  released   wh.evaluate(...) on a Warehouse(path): the file opened and closed by the call
  session    the same call inside one `with wh.session():` block (the file stays open)
  hold       the same call on a Warehouse(path, hold=True) (open from opening to close)

and, first, the opening alone (`duckdb.connect` + close of the file, nothing else open). The call is
``wh.evaluate("qrels", ["bm25", "dense"], ["AP", "nDCG@10", "P@5"])`` on the bundled examples,
every value stored: what a notebook cell that shows stored results does.

  python benchmarks/bench_session.py [--repeat 50]

Run against another checkout (e.g. trunk before this change, where every Warehouse holds its
file) with ``PYTHONPATH=OTHER/src``; a Warehouse without ``session`` is timed as ``hold``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import rankhouse
from rankhouse.defaults import DUCKDB_CONFIG
from rankhouse.duck import duckdb

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
MEASURES = ["AP", "nDCG@10", "P@5"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "w.duckdb"
        with rankhouse.Warehouse(path) as wh:
            wh.ingest_qrels(EXAMPLES / "qrels.txt", name="qrels")
            wh.evaluate("qrels", [EXAMPLES / "run.bm25.txt", EXAMPLES / "run.dense.txt"], MEASURES)
        releasing = hasattr(rankhouse.Warehouse, "session")
        times: dict[str, list[float]] = {"open+close": []}
        for _ in range(args.repeat):  # nothing else open: DuckDB makes the database anew
            start = time.perf_counter()
            duckdb.connect(str(path), config=DUCKDB_CONFIG).close()
            times["open+close"].append(time.perf_counter() - start)

        def call(wh) -> float:
            start = time.perf_counter()
            result = wh.evaluate("qrels", ["bm25", "dense"], MEASURES)
            elapsed = time.perf_counter() - start
            assert result.num_reused == len(result.rows)
            return elapsed

        if not releasing:  # every Warehouse holds its file
            with rankhouse.Warehouse(path) as wh:
                times["hold"] = [call(wh) for _ in range(args.repeat)]
        else:  # one phase each: two connections to one file in a process share DuckDB's
            # database, which would make the released calls' openings free
            wh = rankhouse.Warehouse(path)
            times["released"] = [call(wh) for _ in range(args.repeat)]
            with wh.session():
                times["session"] = [call(wh) for _ in range(args.repeat)]
            wh.close()
            with rankhouse.Warehouse(path, hold=True) as wh:
                times["hold"] = [call(wh) for _ in range(args.repeat)]
    print(f"rankhouse {rankhouse.__version__}, duckdb, {args.repeat} rounds: median ms")
    for name, found in times.items():
        print(f"  {name:<11} {1000 * statistics.median(found):7.2f}")


if __name__ == "__main__":
    main()
