#!/usr/bin/env python3
"""Time the C/W/L measures, Accuracy and Compat beside nDCG@10 (docs/measures.md's figures).

A synthetic collection: --queries queries of --depth documents each (distinct scores), 100
random judgments a query (grades 0-3, half of them on retrieved documents). Each group of
measures is evaluated --repeat times by `rankhouse.evaluate` on the DataFrames (ingest into
an in-memory warehouse included, as for a user's first call); the median wall time is printed.

  python benchmarks/bench_cwl.py [--queries 1000] [--depth 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import warnings

import pandas as pd
from workload import median_seconds

import rankhouse

GROUPS = [
    ["nDCG@10"],
    ["INST(max_rel=3)"],
    ["INSQ(max_rel=3)", "NERR10(max_rel=3)", "NERR11(max_rel=3)"],
    ["SDCG(max_rel=3)@10", "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@10", "BPM(max_rel=3)@10"],
    ["Accuracy"],
    ["Compat"],
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(1)
    run = pd.DataFrame(
        [
            (f"q{q}", f"d{d}", float(args.depth - d))
            for q in range(args.queries)
            for d in range(args.depth)
        ],
        columns=["query_id", "doc_id", "score"],
    )
    qrels = pd.DataFrame(
        [
            (f"q{q}", f"d{rng.randrange(2 * args.depth)}", rng.randint(0, 3))
            for q in range(args.queries)
            for _ in range(100)
        ],
        columns=["query_id", "doc_id", "grade"],
    ).drop_duplicates(["query_id", "doc_id"])
    warnings.simplefilter("ignore")
    rankhouse.evaluate(qrels, run, ["nDCG@10"])  # warm: imports, DuckDB's first statements
    print(f"{args.queries} queries x {args.depth} documents, median of {args.repeat}")
    for names in GROUPS:
        seconds = median_seconds(
            lambda names=names: rankhouse.evaluate(qrels, run, names), args.repeat
        )
        print(f"{seconds:6.2f} s  {', '.join(names)}")


if __name__ == "__main__":
    main()
