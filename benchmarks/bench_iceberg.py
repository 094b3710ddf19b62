#!/usr/bin/env python3
"""Run rows in PostgreSQL tables against run rows in Iceberg (``?iceberg=``): bytes and time.

Starts no server: it takes the URL of one (argument, else $RANKHOUSE_TEST_POSTGRES) and works
in two new schemas there, one per store:

  scripts/with-postgres python benchmarks/bench_iceberg.py [--repeat 3] [--workdir benchmarks/data]

Each command runs as its own process (`rankhouse --db ...`), for the plain server and for the
server with its run rows in Iceberg (data files in a local folder), in turn for --repeat
rounds, each in a new schema (medians of the rounds):

  ingest     `ingest run` of the 6.98-million-line MS MARCO-size run (make_run.py, MS MARCO
             dev qrels), qrels stored before
  eval       `eval --recompute` of the stored run, 5 measures, rows fetched from the store
             (RANKHOUSE_CACHE=off: no copy on this machine)
  bytes/row  PostgreSQL: pg_total_relation_size('run_rows') (table, TOAST and index) over the
             rows; Iceberg: the current snapshot's data files over the rows (the catalog's
             metadata files are listed apart)

and checks that both print the same numbers.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

import psycopg
from workload import QRELS, make_run, measured, server_arguments

MEASURES = ["AP", "nDCG@10", "P@10", "RR", "R@1000"]


def main() -> None:
    args = server_arguments(__doc__.splitlines()[0])
    os.environ["RANKHOUSE_CACHE"] = "off"  # every evaluation reads its rows from the store
    run = make_run(args.workdir)
    rows = sum(1 for _ in run.open())
    figures: dict[str, list[tuple]] = {"postgresql": [], "iceberg": []}
    printed = {}
    load = [os.getloadavg()[0]]  # other work on the machine stretches every time
    for _ in range(args.repeat):
        for store in figures:  # the stores in turn, round after round
            with tempfile.TemporaryDirectory(prefix="rankhouse-iceberg-") as folder:
                out, measured_store = _round(args.url, store, run, folder)
            printed[store] = out
            figures[store].append(measured_store)
            load.append(os.getloadavg()[0])
    if printed["postgresql"] != printed["iceberg"]:
        sys.exit(f"the stores print different numbers:\n{printed}")
    print(f"MS MARCO-size run: {rows:,} rows ({run.stat().st_size / 1e6:.0f} MB of text)")
    print(f"{args.repeat} rounds; load average (1 min) between them: {load}")
    print(
        "| store | ingest s (peak MiB) | eval --recompute s (peak MiB) | run rows bytes | "
        "bytes/row | metadata bytes |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for store, rounds in figures.items():
        ingest, ipeak, seconds, epeak = (
            statistics.median(found[i] for found in rounds) for i in range(4)
        )
        data, meta = rounds[-1][4:]
        print(
            f"| {store} | {ingest:.1f} ({ipeak:.0f}) | {seconds:.1f} ({epeak:.0f}) | "
            f"{data:,} | {data / rows:.1f} | {meta:,} |"
        )
    ratio = figures["postgresql"][-1][4] / figures["iceberg"][-1][4]
    print(f"Iceberg stores a run row in 1/{ratio:.1f} of the PostgreSQL table's bytes")
    print(f"same numbers printed by both: {printed['iceberg']}")


def _round(url: str, store: str, run: Path, folder: str) -> tuple[str, tuple]:
    """One store's ingest and evaluation of ``run`` in a new schema: the means printed, and
    (ingest s, its peak MiB, eval s, its peak MiB, run rows bytes, metadata bytes)."""
    schema = f"bench_{store}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    target = f"{url}?options=-csearch_path%3D{schema}"
    first = target + (f"&iceberg={folder}/lake" if store == "iceberg" else "")
    rh = [sys.executable, "-m", "rankhouse"]
    measured([*rh, "--db", first, "ingest", "qrels", str(QRELS), "--name", "dev"])
    ingest = measured([*rh, "--db", target, "ingest", "run", str(run), "--name", "big"])
    evaluate = [*rh, "--db", target, "eval", "dev", "big", "--recompute"]
    evaluate += [arg for m in MEASURES for arg in ("-m", m)]
    seconds, eval_peak, out = measured(evaluate)
    stored = _bytes(url, schema, store, folder)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return out.splitlines()[-1], (ingest[0], ingest[1], seconds, eval_peak, *stored)


def _bytes(url: str, schema: str, store: str, folder: str) -> tuple[int, int]:
    """(bytes of the run rows, bytes of the Iceberg metadata files) of one store."""
    if store == "postgresql":
        with psycopg.connect(url, autocommit=True) as conn:
            size = conn.execute(f"SELECT pg_total_relation_size('{schema}.run_rows')").fetchone()
        return int(size[0]), 0
    from rankhouse import Warehouse
    from rankhouse.backends import store_of

    with Warehouse(f"{url}?options=-csearch_path%3D{schema}", read_only=True) as wh:
        data = store_of(wh).iceberg.data_bytes()
    metadata = sum(p.stat().st_size for p in Path(folder).rglob("metadata/*") if p.is_file())
    return data, metadata


if __name__ == "__main__":
    main()
