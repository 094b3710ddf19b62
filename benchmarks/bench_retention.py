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

3. **Three years under the default policy** (``--three-years``): the issue's case measured
   whole. The growth benchmark's warehouse of 20 systems x 1,095 nights (43,800 evaluations
   with their per-query values and gate checks, cloned by SQL from real nights:
   benchmarks/bench_growth.py), then run rows (43,000 a night, each score moved at random as
   in 2.) for every system's newest ``--recent`` nights and for ``--references`` gate
   references a system, one accepted every seven months; then the recipe's own
   ``rankhouse runs prune --keep-last 90 --yes`` and ``rankhouse compact``, and the file's
   size.

  python benchmarks/bench_retention.py [--nights 12] [--clones 200]
  python benchmarks/bench_retention.py --three-years [--recent 120] [--references 5]
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


def three_years(recent: int, references: int, keep_last: int = 90) -> None:
    """Part 3 of the module's docstring."""
    import shutil

    import duckdb
    from bench_growth import MEASURES as GROWTH_MEASURES
    from bench_growth import SYSTEMS, filled

    src = Path(rankhouse.__file__).resolve().parents[1]
    workdir = Path(__file__).resolve().parent / "data" / "growth"
    workdir.mkdir(parents=True, exist_ok=True)
    nights = 3 * 365
    kept, _ = filled(workdir, src, SYSTEMS * nights * len(GROWTH_MEASURES))
    with tempfile.TemporaryDirectory(dir=workdir) as folder:
        db = Path(folder) / "three-years.duckdb"
        shutil.copy(kept, db)
        con = duckdb.connect(str(db))
        started = time.perf_counter()
        # each system's runs by night (ids follow the dates), and a real night's rows to copy
        con.execute(
            "CREATE TEMP TABLE nights AS SELECT id, system_tag, row_number() OVER "
            "(PARTITION BY system_tag ORDER BY ingested_at, id) - 1 AS night FROM runs"
        )
        con.execute(
            "CREATE TEMP TABLE source AS SELECT n.system_tag, min(r.run_id) AS run_id "
            "FROM run_rows r JOIN nights n ON n.id = r.run_id GROUP BY n.system_tag"
        )
        every = max(1, nights // references)
        con.execute(
            "CREATE TEMP TABLE given AS SELECT n.id, n.system_tag, n.night FROM nights n "
            f"WHERE (n.night >= {nights - recent} OR (n.night > 0 AND n.night % {every} = 0)) "
            "AND n.id NOT IN (SELECT DISTINCT run_id FROM run_rows)"
        )
        given = con.execute("SELECT count(*) FROM given").fetchone()[0]
        for run_id, tag in con.execute("SELECT id, system_tag FROM given").fetchall():
            con.execute(
                "INSERT INTO run_rows SELECT ? AS run_id, query_id, doc_id, rank, "
                "round(score + (random() - 0.5) * 0.1, 3) FROM run_rows "
                "WHERE run_id = (SELECT run_id FROM source WHERE system_tag = ?)",
                [run_id, tag],
            )
        con.execute(  # the references accepted over the years (night 0 is already one)
            "INSERT INTO gate_references (system_tag, qrels_id, run_id, run_name, reason, "
            "accepted_at) SELECT g.system_tag, 1, g.id, r.name, 'bench: accepted', "
            f"r.ingested_at FROM given g JOIN runs r ON r.id = g.id "
            f"WHERE g.night < {nights - recent}"
        )
        refs = con.execute("SELECT count(*) FROM gate_references").fetchone()[0]
        rows = con.execute("SELECT count(*) FROM run_rows").fetchone()[0]
        con.execute("CHECKPOINT")
        con.close()
        print(
            f"{SYSTEMS} systems x {nights} nights; rows given to {given:,} more runs in "
            f"{time.perf_counter() - started:.0f} s: {rows:,} run rows, {refs} gate references; "
            f"file {_size(db) / 1e9:.2f} GB"
        )
        cli = [sys.executable, "-m", "rankhouse", "--db", str(db)]
        for step in (["runs", "prune", "--keep-last", str(keep_last), "--yes"], ["compact"]):
            started = time.perf_counter()
            done = subprocess.run([*cli, *step], capture_output=True, text=True, check=True)
            said = (done.stdout + done.stderr).strip().splitlines()
            print(f"{' '.join(step)} ({time.perf_counter() - started:.0f} s): {said[-1]}")
        con = duckdb.connect(str(db), read_only=True)
        rows, runs_with_rows = con.execute(
            "SELECT count(*), count(DISTINCT run_id) FROM run_rows"
        ).fetchone()
        con.close()
        print(
            f"after the policy: {runs_with_rows:,} runs keep {rows:,} rows; "
            f"the file is {_size(db) / 1e9:.3f} GB ({_size(db) / 2**30:.3f} GiB)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nights", type=int, default=12)
    parser.add_argument("--clones", type=int, default=200)
    parser.add_argument("--three-years", action="store_true", help="part 3 only")
    parser.add_argument("--recent", type=int, default=120, help="part 3: nights given rows")
    parser.add_argument("--references", type=int, default=5, help="part 3: a system's")
    args = parser.parse_args()
    if args.three_years:
        three_years(args.recent, args.references)
        return
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
