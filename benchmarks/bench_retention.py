#!/usr/bin/env python3
"""What a run row and the rest of a nightly series take in a DuckDB file, before and after
``runs prune`` + ``compact``: the figures behind the default retention policy
(docs/retention.md).

Inputs: the TREC DL 2019 passage qrels (../shared) and runs built with
../shared/tools/make_run.py (43 judged topics x 1,000 documents, a seed per night).

1. **The rest of a night.** ``--nights`` real nights of one system, each ingested, evaluated
   (5 measures) and gated against the pinned reference, as the nightly recipe does; then every
   run's rows but the reference's are pruned and the file compacted: the file's size, less
   the reference's rows, over the nights is what a night keeps once its rows are gone.
2. **A run row.** ``--clones`` more nights cloned by SQL from the first night's rows (each
   score moved at random by up to 0.05 and rounded to 3 places as make_run.py rounds, so
   that no two nights compress as one), the file compacted; the bytes they added over the
   rows they added.

  python benchmarks/bench_retention.py [--nights 12] [--clones 200]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workload import SHARED, synthetic_run

import rankhouse

QRELS = SHARED / "data" / "qrels" / "qrels.dl19-passage.txt"
MEASURES = ["AP", "nDCG@10", "P@10", "RR", "R@1000"]


def _size(path: Path) -> int:
    return path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nights", type=int, default=12)
    parser.add_argument("--clones", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        db = work / "w.duckdb"
        cli = [sys.executable, "-m", "rankhouse", "--db", str(db)]
        subprocess.run([*cli, "ingest", "qrels", str(QRELS), "--name", "dl19"], check=True)
        started = time.perf_counter()
        for night in range(args.nights):
            run = synthetic_run(work / f"night{night}.run", QRELS, seed=night + 1, tag="nightly")
            name = f"nightly-{night:03d}"
            subprocess.run([*cli, "ingest", "run", str(run), "--name", name], check=True)
            subprocess.run(
                [*cli, "eval", "dl19", name, *[f"-m{m}" for m in MEASURES]],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            subprocess.run(
                [*cli, "regress", name, "-b", "reference", "--qrels", "dl19", "-m", "nDCG@10"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        built = time.perf_counter() - started
        with rankhouse.Warehouse(str(db)) as wh:
            rows_per_night = int(wh.runs()["num_rows"].iloc[0])
            full = _size(db)
            pruned = wh.prune(keep_last=0)
            reclaimed = wh.compact()
        rest = reclaimed.after - rows_per_night * 15.2  # the reference keeps its rows
        print(f"{args.nights} nights built in {built:.0f} s; {rows_per_night:,} rows a night")
        print(f"file with every night's rows: {full / 1e6:,.1f} MB")
        print(
            f"pruned {len(pruned.pruned)} runs ({len(pruned.rows) - len(pruned.pruned)} "
            f"kept as reference), compacted: {reclaimed.after / 1e6:,.2f} MB; about "
            f"{rest / args.nights / 1e3:,.1f} kB a night without its rows"
        )

        # --- a run row: clones of the first night's rows -------------------------------------
        with rankhouse.Warehouse(str(db)) as wh, wh.transaction() as conn:
            duck = wh.duckdb_connection(conn)
            duck.execute(
                "CREATE TEMP TABLE first AS SELECT * FROM run_rows WHERE run_id = "
                "(SELECT min(run_id) FROM run_rows)"
            )
            before = _size(db)
            started = time.perf_counter()
            for clone in range(args.clones):
                duck.execute(
                    "INSERT INTO run_rows SELECT ? AS run_id, query_id, doc_id, rank, "
                    "round(score + (random() - 0.5) * 0.1, 3) FROM first",
                    [100_000 + clone],
                )
        with rankhouse.Warehouse(str(db)) as wh:
            after = wh.compact().after
        added = args.clones * rows_per_night
        print(
            f"{args.clones} cloned nights ({added:,} rows) in {time.perf_counter() - started:.1f}"
            f" s: {(after - before) / 1e6:,.1f} MB, {(after - before) / added:.2f} bytes a run row"
        )


if __name__ == "__main__":
    main()
