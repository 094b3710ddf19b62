#!/usr/bin/env python3
"""Time `rankhouse report` on 10 runs x 6,980 MS MARCO dev queries (or a year of nights), and
measure the file.

Builds (once, in --workdir) ten runs of one system tag with ../shared/tools/make_run.py
(--depth documents per query, signal rising then falling, so the trend has a shape and the
gate fails once), ingests them into a new warehouse, evaluates nDCG@10, AP and RR and gates
each run against the previous one. Then, each command a separate process:

  first report    `rankhouse report --baseline run-01`: also evaluates and stores the 11
                  precision-recall points of the ten runs
  stored report   the same again: everything is stored, so this is the rendering cost

and prints the median wall time, peak memory and the size of the HTML file.

  python benchmarks/bench_report.py [--repeat 3] [--depth 100] [--workdir benchmarks/data]

With --nights N (365 for a year), instead: one system's N nightly runs of DL19's size (43
queries x 1,000 documents: one make_run.py run, its scores blurred by a seeded noise per
night), each ingested as examples/nightly.sh does (`--meta commit=<40 hex> night=<UTC
stamp>`), evaluated on nDCG@10 and AP and gated against the last passed night; then the
nightly report (`--qrels dl19 -m nDCG@10 -m AP --baseline <a night>`) made once to store its
one-time values (the 11 precision-recall points, order drift), and timed as a user runs it
afterwards, with and without --brief. The warehouse is kept in --workdir (building it takes
about 5 minutes). Measured (docs/report.md, machine loaded): 4.5-5.0 s wall, 3.4 s CPU and
0.55 MiB; --brief 3.9 s, 2.6 s CPU and 0.34 MiB (before: 524 s and 32.8 MiB).

  python benchmarks/bench_report.py --nights 365 [--repeat 3]

Measured on the project's 2-core machine (--depth 100; the table in docs/report.md): the
stored report 7.16 s and the first 8.97 s (medians of --repeat 3, machine idle); 591 / 807 MiB;
an HTML file of 0.83 MiB.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from workload import QRELS, ROOT, SHARED, measured, print_figures, synthetic_run

DL19 = SHARED / "data" / "qrels" / "qrels.dl19-passage.txt"
NIGHT_MEASURES = ["nDCG@10", "AP"]

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


def night_name(night: int) -> tuple[str, str]:
    """A night's run name and UTC stamp, as examples/nightly.sh makes them."""
    from datetime import datetime, timedelta

    stamp = (datetime(2025, 11, 28, 2, 13, 14) + timedelta(days=night)).strftime("%Y%m%dT%H%M%SZ")
    return f"bm25.run-{stamp}", stamp


def _dl19_run(path: Path, *, depth: int, tag: str):
    """A synthetic DL19 run of ``depth`` documents a query (seed 1), as a DataFrame: the
    scores each night blurs."""
    import pandas as pd

    base = synthetic_run(path, DL19, depth=depth, seed=1, tag=tag)
    columns = ["qid", "q0", "docid", "rank", "score", "tag"]
    return pd.read_csv(base, sep=" ", header=None, names=columns, dtype={"qid": str, "docid": str})


def build_nights(db: Path, workdir: Path, nights: int) -> None:
    """``nights`` nightly runs of system bm25 on DL19, evaluated and gated (kept in db)."""
    import numpy as np
    import pandas as pd

    sys.path.insert(0, str(ROOT / "src"))
    from rankhouse import Warehouse

    if not DL19.exists():
        sys.exit(f"needs {DL19} (../shared beside the checkout)")
    run = _dl19_run(workdir / "dl19-bm25.run", depth=1000, tag="bm25")
    rng = np.random.default_rng(7)
    with Warehouse(db) as wh:
        wh.ingest_qrels(DL19, name="dl19")
        for night in range(nights):
            name, stamp = night_name(night)
            noise = 0.5 + 1.5 * abs(np.sin(night / 40))  # quality drifts over the year
            frame = pd.DataFrame(
                {
                    "qid": run.qid,
                    "docid": run.docid,
                    "score": (run.score + rng.normal(0, noise, len(run))).round(3),
                    "tag": "bm25",
                }
            )
            _gated_night(wh, frame, name, stamp, rng)
            if night % 50 == 0:
                print(f"  night {night + 1} of {nights}", file=sys.stderr)


def _gated_night(wh, frame, name: str, stamp: str, rng) -> None:
    """One night as the nightly job makes it: the run ingested with a commit and its night,
    evaluated, and gated against the system's last passed night."""
    from rankhouse.regress import regress

    commit = "".join(f"{int(rng.integers(0, 2**32)):08x}" for _ in range(5))
    wh.ingest_run(frame, name=name, meta={"commit": commit, "night": stamp})
    wh.evaluate("dl19", [name], NIGHT_MEASURES)
    regress(
        wh,
        name,
        baseline="last-passed",
        qrels="dl19",
        measures=NIGHT_MEASURES,
        allow_missing_baseline=True,
    )


def bench_nights(args) -> None:
    """The report of one system's ``--nights`` nightly runs: time and size."""
    args.workdir.mkdir(parents=True, exist_ok=True)
    kept = args.workdir / f"nights-{args.nights}.duckdb"
    if not kept.exists():
        print(f"building {kept} ...", file=sys.stderr)
        build_nights(kept.with_suffix(".partial"), args.workdir, args.nights)
        kept.with_suffix(".partial").rename(kept)
    rankhouse = [sys.executable, "-m", "rankhouse"]
    baseline, _ = night_name(args.nights - 8)
    figures: dict[str, list[tuple[float, float]]] = {"first": [], "stored": [], "brief": []}
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "nights.duckdb"
        shutil.copy(kept, db)
        for key in ("first", *["stored", "brief"] * args.repeat):
            out = Path(scratch) / f"{key}.html"
            command = [*rankhouse, "--db", str(db), "report", "-o", str(out), "--qrels", "dl19"]
            command += [*(f"-m{m}" for m in NIGHT_MEASURES), "--baseline", baseline]
            command += ["--brief"] if key == "brief" else []
            wall, peak, _ = measured(command)
            figures[key].append((wall, peak))
            sizes[key] = out.stat().st_size
    print_figures(
        f"report, {args.nights} nights x 43 queries x 1,000 docs",
        figures,
        {
            "first": "first report (+ PR points, drift)",
            "stored": "report, all stored",
            "brief": "report --brief, all stored",
        },
    )
    for key, size in sizes.items():
        print(f"HTML file ({key}): {size / 2**20:.2f} MiB")


TEMPLATES = 3
"""Nights per system ingested, evaluated and gated through the API; the rest are cloned."""


def build_systems(db: Path, workdir: Path, systems: int, nights: int) -> None:
    """``systems`` systems (``sys0`` ...) of ``nights`` nightly DL19 runs each (43 queries x
    100 documents): the first TEMPLATES nights of each as a team makes them (ingest with
    commit and night, eval nDCG@10 and AP, gate against the last passed night), the rest
    cloned from them by SQL (:func:`clone_nights`): a warehouse of 10,000 runs in minutes."""
    import numpy as np
    import pandas as pd

    sys.path.insert(0, str(ROOT / "src"))
    from rankhouse import Warehouse

    run = _dl19_run(workdir / "dl19-100.run", depth=100, tag="x")
    rng = np.random.default_rng(7)
    with Warehouse(db) as wh:
        wh.ingest_qrels(DL19, name="dl19")
        for night in range(TEMPLATES):
            for system in range(systems):
                tag, noise = f"sys{system}", 0.5 + system * 0.05 + night * 0.3
                name = f"{tag}.night{night:04d}"
                scores = (run.score + rng.normal(0, noise, len(run))).round(3)
                frame = pd.DataFrame({"qid": run.qid, "docid": run.docid, "score": scores})
                stamp = f"202501{night + 1:02d}T021314Z"
                _gated_night(wh, frame.assign(tag=tag), name, stamp, rng)
    clone_nights(db, nights)


def clone_nights(db: Path, nights: int) -> None:
    """Every system's night ``n`` (TEMPLATES <= n < nights) as a copy of its night
    ``n % TEMPLATES``, by SQL in one transaction: the run (its own name, content hash, commit,
    night and ingest time), its rows, its evaluations with their per-query values, and a gate
    check against the system's night before with the template's verdicts."""
    import duckdb

    con = duckdb.connect(str(db))
    con.execute("BEGIN")
    con.execute(
        f"""
        CREATE TEMP TABLE m AS
        SELECT nextval('run_ids') AS new_id, r.id AS src_id, r.system_tag, n.night
        FROM range({TEMPLATES}, {nights}) n(night)
        JOIN runs r
          ON r.name = r.system_tag || '.night'
                      || lpad(CAST(n.night % {TEMPLATES} AS VARCHAR), 4, '0')
        ORDER BY n.night, r.system_tag
        """
    )
    con.execute(
        """
        INSERT INTO runs SELECT r.* REPLACE (
            m.new_id AS id,
            r.system_tag || '.night' || lpad(CAST(m.night AS VARCHAR), 4, '0') AS name,
            sha256(r.content_sha256 || m.night) AS content_sha256,
            TIMESTAMP '2025-01-01 02:13:14' + INTERVAL (m.night) DAY
                + INTERVAL (CAST(substr(r.system_tag, 4) AS INTEGER)) SECOND AS ingested_at,
            json_object('commit', substr(sha256(CAST(m.new_id AS VARCHAR)), 1, 40),
                        'night', strftime(TIMESTAMP '2025-01-01 02:13:14' + INTERVAL (m.night) DAY,
                                          '%Y%m%dT%H%M%SZ')) AS metadata)
        FROM runs r JOIN m ON r.id = m.src_id
        """
    )
    con.execute(
        "INSERT INTO run_rows SELECT m.new_id, q.query_id, q.doc_id, q.rank, q.score "
        "FROM run_rows q JOIN m ON q.run_id = m.src_id"
    )
    con.execute(
        """
        CREATE TEMP TABLE em AS
        SELECT nextval('evaluation_ids') AS new_eid, e.id AS src_eid, m.new_id, m.night
        FROM evaluations e JOIN m ON e.run_id = m.src_id
        """
    )
    con.execute(
        """
        INSERT INTO evaluations SELECT e.* REPLACE (em.new_eid AS id, em.new_id AS run_id,
            TIMESTAMP '2025-01-01 02:20:00' + INTERVAL (em.night) DAY AS created_at)
        FROM evaluations e JOIN em ON e.id = em.src_eid
        """
    )
    con.execute(
        "INSERT INTO evaluation_values SELECT em.new_eid, v.query_id, v.value "
        "FROM evaluation_values v JOIN em ON v.evaluation_id = em.src_eid"
    )
    # one gate check a night, against the system's night before
    con.execute(
        """
        CREATE TEMP TABLE cm AS
        SELECT nextval('regress_check_ids') AS new_cid, c.id AS src_cid, m.new_id, m.night,
               p.id AS base_id, p.name AS base_name
        FROM m
        JOIN regress_checks c ON c.run_id = m.src_id
        JOIN runs p ON p.system_tag = m.system_tag
             AND p.name = m.system_tag || '.night' || lpad(CAST(m.night - 1 AS VARCHAR), 4, '0')
        """
    )
    con.execute(
        """
        INSERT INTO regress_checks SELECT c.* REPLACE (cm.new_cid AS id, cm.new_id AS run_id,
            cm.base_id AS baseline_run_id, cm.base_name AS baseline_name,
            TIMESTAMP '2025-01-01 02:21:00' + INTERVAL (cm.night) DAY AS created_at)
        FROM regress_checks c JOIN cm ON c.id = cm.src_cid
        """
    )
    con.execute(
        """
        INSERT INTO regress_verdicts SELECT v.* REPLACE (cm.new_cid AS check_id,
            (SELECT em.new_eid FROM em WHERE em.src_eid = v.run_evaluation_id
                AND em.new_id = cm.new_id) AS run_evaluation_id)
        FROM regress_verdicts v JOIN cm ON v.check_id = cm.src_cid
        """
    )
    # the template nights at their own dates, as if ingested on those nights
    con.execute(
        """
        UPDATE runs SET ingested_at = TIMESTAMP '2025-01-01 02:13:14'
            + INTERVAL (CAST(substr(name, length(name) - 3) AS INTEGER)) DAY
            + INTERVAL (CAST(substr(system_tag, 4) AS INTEGER)) SECOND
        WHERE id NOT IN (SELECT new_id FROM m)
        """
    )
    con.execute("COMMIT")
    con.execute("CHECKPOINT")
    con.close()


def bench_systems(args) -> None:
    """``report --system sys3``, ``history`` (each system's newest run) and ``history -f
    csv`` (every run) on ``--systems`` systems of ``--nights`` nights: CPU time and memory."""
    args.workdir.mkdir(parents=True, exist_ok=True)
    kept = args.workdir / f"systems-{args.systems}x{args.nights}.duckdb"
    if not kept.exists():
        print(f"building {kept} ...", file=sys.stderr)
        build_systems(kept.with_suffix(".partial"), args.workdir, args.systems, args.nights)
        kept.with_suffix(".partial").rename(kept)
    rankhouse = [sys.executable, "-m", "rankhouse", "--db"]
    commands = {
        "report": ["report", "--system", "sys3", "-o"],
        "history": ["history"],
        "csv": ["history", "-f", "csv"],
    }
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "systems.duckdb"
        shutil.copy(kept, db)
        out = str(Path(scratch) / "report.html")
        subprocess.run([*rankhouse, str(db), *commands["report"], out], check=True)  # PR points
        for key, command in commands.items():
            command = [*rankhouse, str(db), *command] + ([out] if key == "report" else [])
            cpu, peak = [], []
            for _ in range(args.repeat):
                cpu_time, rss = cpu_and_peak(command)
                cpu.append(cpu_time)
                peak.append(rss)
            shown = command[5:-1] if key == "report" else command[5:]
            print(
                f"{' '.join(shown):<28} "
                f"CPU {statistics.median(cpu):.2f} s  peak {statistics.median(peak):.0f} MiB "
                f"({args.systems} systems x {args.nights} nights)"
            )


def cpu_and_peak(command: list[str]) -> tuple[float, float]:
    """User + system CPU seconds and peak RSS (MiB) of ``command``, by /usr/bin/time."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as found:
        timed = ["/usr/bin/time", "-f", "%U %S %M", "-o", found.name, *command]
        subprocess.run(timed, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        user, system, peak = found.read().split()[-3:]
    return float(user) + float(system), int(peak) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--workdir", type=Path, default=ROOT / "benchmarks" / "data")
    parser.add_argument("--nights", type=int, default=0, help="a year of nights: 365")
    parser.add_argument("--systems", type=int, default=0, help="systems, their nights cloned")
    args = parser.parse_args()
    if args.systems:
        bench_systems(args)
        return
    if args.nights:
        bench_nights(args)
        return
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
