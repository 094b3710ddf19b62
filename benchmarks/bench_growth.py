#!/usr/bin/env python3
"""How the everyday commands grow with the warehouse: 1,000, 10,000 and 100,000 evaluations.

A warehouse is filled as a team fills it: 20 systems' nightly DL19 runs (43 judged queries x
1,000 documents), each night ingested with `--meta commit=... night=...`, evaluated on
nDCG@10 and AP and gated against the system's reference (two evaluations a night, so 1,000
evaluations are 25 nights of 20 systems, 100,000 are 2,500 nights: seven years).

Real nights first (a template warehouse, built once with the library of --src): 20 systems
(one ../shared/tools/make_run.py run each on the DL19 qrels, seed and signal per system) x 5
nights (the system's run, its scores blurred by a seeded noise per night): ingest, eval, regress
--baseline reference --allow-missing-baseline, as examples/nightly.sh does; and one night more
of sys03, ingested and not yet evaluated ("tonight", the run `regress` is timed on). Then each
size is cloned from it by SQL: the template's first night of each system is the system's
night 0 and its reference; its four other nights are the newest four; every night between is a
copy of one of those four under a new id, name, date, commit and content hash, with its
evaluations, per-query values, gate check and verdicts (weighed against night 0, the
reference), so that every command works on them. Ids follow the dates, as in a warehouse
filled night by night.

Run rows are kept only for the nights that were really ingested (night 0, the newest four and
tonight: 101 runs, 4.3 M rows at every size). Rows for 100,000 evaluations would be 2.2 billion
rows (about 30 GB); the figures here are about the CPU time of everyday commands, which read
the catalogue, the stored evaluations and the gate, and the cloned nights are what a pruned
warehouse holds (issue 37: retention keeps the rows of the reference and the recent nights).

Each command is then a whole process on a copy of the filled warehouse (medians of --repeat
rounds, CPU seconds user + system of the process and its children, wall seconds, peak MiB),
after one untimed run that migrates the copy to the schema of --src and stores what a first
run stores (regress evaluates tonight's run once):

  history -s sys03 -m nDCG@10          one system's nights (25 to 2,500)
  history -s sys03 -m nDCG@10 --since DATE   its newest 25 nights (the same answer at each size)
  regress TONIGHT --baseline reference --qrels dl19 -m nDCG@10 -m AP
  eval dl19 RUN -m nDCG@10 -m AP       a recent night's stored values
  compare dl19 RUN_A RUN_B -m nDCG@10 -m AP    two recent nights, stored values
  runs list --limit 20                 (`runs list` where --src has no --limit)
  report --system sys03 --qrels dl19 -m nDCG@10 -m AP --brief  (timed once: --report-repeat)

  python benchmarks/bench_growth.py [--sizes 1000,10000,100000] [--repeat 5] [--src DIR]
                                    [--against DIR] [--report-nights 365]

--report-nights N gives the reported system (sys03) N nights at every size, the other systems
sharing the rest: issue 37's case, one system's 365 nights among 1,000 or 100,000
evaluations, where the same answer is asked of a small and a large warehouse.

Filled warehouses are kept in --workdir (default benchmarks/data/growth, ignored by git),
named by size and schema version, and reused; delete them to fill again. --src is the `src`
folder whose rankhouse fills and runs (default this checkout's; an older commit's, unpacked
with `git archive COMMIT src migrations sql | tar -x -C DIR`, gives the figures before a
change); --against DIR times that one too, each command in turn with this one (A B A B), on
its own copy of the same warehouse. The table is printed in Markdown (benchmarks/RESULTS.md
keeps it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

from workload import ROOT, SHARED, synthetic_run

DL19 = SHARED / "data" / "qrels" / "qrels.dl19-passage.txt"
MEASURES = ["nDCG@10", "AP"]
SYSTEMS = 20
REAL_NIGHTS = 5  # per system: night 0 (the reference) and the newest four
TONIGHT_SYSTEM = 3
FIRST_NIGHT = datetime(2019, 1, 1, 2, 0, 0)


def system_tag(system: int) -> str:
    return f"sys{system:02d}"


# --- filling ------------------------------------------------------------------------------------


def build_template(db: Path, workdir: Path) -> None:
    """The real nights: 20 systems x 5 nights ingested, evaluated and gated; sys03's tonight."""
    import numpy as np
    import pandas as pd

    from rankhouse import Warehouse

    columns = ["qid", "q0", "docid", "rank", "score", "tag"]
    rng = np.random.default_rng(37)
    with Warehouse(db) as wh:
        wh.ingest_qrels(DL19, name="dl19")
        bases = []
        for system in range(SYSTEMS):
            path = workdir / f"dl19-{system_tag(system)}.run"
            signal = 0.8 + 0.05 * system
            synthetic_run(path, DL19, seed=100 + system, tag=system_tag(system), signal=signal)
            dtype = {"qid": str, "docid": str}
            bases.append(pd.read_csv(path, sep=" ", header=None, names=columns, dtype=dtype))
        for night in range(REAL_NIGHTS + 1):
            for system, base in enumerate(bases):
                if night == REAL_NIGHTS and system != TONIGHT_SYSTEM:
                    continue
                frame = pd.DataFrame(
                    {
                        "qid": base.qid,
                        "docid": base.docid,
                        "score": (base.score + rng.normal(0, 0.3, len(base))).round(3),
                        "tag": system_tag(system),
                    }
                )
                name = f"{system_tag(system)}.real{night}"
                commit = "".join(f"{int(rng.integers(0, 2**32)):08x}" for _ in range(5))
                wh.ingest_run(frame, name=name, meta={"commit": commit, "night": f"real{night}"})
                if night == REAL_NIGHTS:
                    continue  # tonight: ingested, not yet evaluated nor gated
                wh.evaluate("dl19", [name], MEASURES)
                wh.regress(
                    name,
                    baseline="reference",
                    qrels="dl19",
                    measures=MEASURES,
                    allow_missing_baseline=True,
                )
            print(f"  real night {night + 1} of {REAL_NIGHTS + 1}", file=sys.stderr)


def nights_of(evaluations: int, report_nights: int | None = None) -> dict[int, int]:
    """Each system's nights in a warehouse of ``evaluations``: the same for every system, or
    ``report_nights`` for the reported system (sys03) and the rest shared by the others."""
    runs = evaluations // len(MEASURES)
    if report_nights is None:
        nights = runs // SYSTEMS
        if nights < 2 * REAL_NIGHTS or nights * SYSTEMS * len(MEASURES) != evaluations:
            sys.exit(
                f"{evaluations} evaluations is not a whole number (>= {2 * REAL_NIGHTS}) of nights"
            )
        return dict.fromkeys(range(SYSTEMS), nights)
    others, extra = divmod(runs - report_nights, SYSTEMS - 1)
    if min(report_nights, others) < REAL_NIGHTS + 1:  # night 0, one clone, the newest four
        sys.exit(f"{evaluations} evaluations leave too few nights beside {report_nights}")
    rest = [s for s in range(SYSTEMS) if s != TONIGHT_SYSTEM]
    found = {s: others + (i < extra) for i, s in enumerate(rest)}
    return {**found, TONIGHT_SYSTEM: report_nights}


def night_time(night: int, system: int, nights: dict[int, int]) -> datetime:
    """When ``system`` ran its night ``night``: every system's newest night is the same day."""
    first = max(nights.values()) - nights[system]
    return FIRST_NIGHT + timedelta(days=first + night, minutes=system)


def clone_to(db: Path, nights_by_system: dict[int, int]) -> None:
    """Turn a copy of the template into a warehouse of these nights per system (see the
    module's docstring): every run renumbered and renamed by its night, the nights between
    night 0 and the newest four cloned with their evaluations, values and gate checks."""
    import duckdb

    con = duckdb.connect(str(db))
    template = {
        name: run_id for run_id, name in con.execute("SELECT id, name FROM runs").fetchall()
    }
    plan = []  # (id, night, system, template run id, day), ids in the order of the nights
    for system, nights in nights_by_system.items():
        newest = nights - (REAL_NIGHTS - 1)  # the newest four nights are real nights 1-4
        for night in range(nights + (system == TONIGHT_SYSTEM)):
            if night == 0 or night >= newest:
                real = night - newest + 1 if night else 0  # tonight: real night 5
            else:
                real = 1 + (night - 1) % (REAL_NIGHTS - 1)
            first = max(nights_by_system.values()) - nights
            plan.append((night, system, template[f"{system_tag(system)}.real{real}"], first))
    plan.sort(key=lambda p: (p[3] + p[0], p[1]))  # ids follow the dates
    plan = [(i + 1, *p) for i, p in enumerate(plan)]
    # no transaction: a delete and an insert of one key in one are refused by DuckDB, and
    # the file is a partial copy until renamed
    con.execute(
        "CREATE TEMP TABLE plan (id INTEGER, night INTEGER, sys INTEGER, src INTEGER, "
        "first_day INTEGER)"
    )
    con.executemany("INSERT INTO plan VALUES (?, ?, ?, ?, ?)", plan)
    first = FIRST_NIGHT.strftime("%Y-%m-%d %H:%M:%S")
    con.execute(
        f"""
        CREATE TEMP TABLE dated AS
        SELECT p.*,
               TIMESTAMP '{first}' + (p.first_day + p.night) * INTERVAL 1 DAY
               + p.sys * INTERVAL 1 MINUTE AS ts,
               printf('sys%02d', p.sys) AS tag
        FROM plan p
        """
    )
    con.execute(
        "CREATE TEMP TABLE named AS SELECT d.*, "
        "d.tag || '.run-' || strftime(d.ts, '%Y%m%dT%H%M%SZ') AS name, "
        "strftime(d.ts, '%Y%m%dT%H%M%SZ') AS stamp FROM dated d"
    )
    # the reference of each system: its night 0
    con.execute("CREATE TEMP TABLE refs AS SELECT sys, id, name, ts FROM named WHERE night = 0")

    def insert(table: str, source: str, overrides: dict[str, str]) -> None:
        columns = [
            c
            for (c,) in con.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = ? AND table_schema = 'main' ORDER BY ordinal_position",
                [table],
            ).fetchall()
        ]
        select = ", ".join(overrides.get(c, f"t.{c}") for c in columns)
        con.execute(f"CREATE TEMP TABLE new_{table} AS SELECT {select} FROM {source}")
        con.execute(f"DELETE FROM {table}")
        con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM new_{table}")

    # evaluations and checks of each planned run: new ids in the order of the runs
    con.execute(
        "CREATE TEMP TABLE emap AS SELECT n.id AS run_id, n.ts, e.id AS old, "
        "row_number() OVER (ORDER BY n.id, e.id) AS new FROM named n "
        "JOIN evaluations e ON e.run_id = n.src"
    )
    con.execute(
        "CREATE TEMP TABLE cmap AS SELECT n.id AS run_id, n.sys, n.ts, c.id AS old, "
        "row_number() OVER (ORDER BY n.id, c.id) AS new FROM named n "
        "JOIN regress_checks c ON c.run_id = n.src"
    )
    con.execute("CREATE TEMP TABLE newest (sys INTEGER, newest INTEGER)")
    con.executemany(
        "INSERT INTO newest VALUES (?, ?)",
        [(system, n - (REAL_NIGHTS - 1)) for system, n in nights_by_system.items()],
    )
    con.execute(
        "UPDATE run_rows SET run_id = n.id FROM named n JOIN newest w ON w.sys = n.sys "
        "WHERE run_rows.run_id = n.src AND (n.night = 0 OR n.night >= w.newest)"
    )
    insert(
        "runs",
        "named n JOIN runs t ON t.id = n.src",
        {
            "id": "n.id",
            "name": "n.name",
            "ingested_at": "n.ts",
            "content_sha256": "sha256(t.content_sha256 || n.id)",
            "metadata": (
                '\'{"commit": "\' || md5(n.name) || substr(md5(n.tag), 1, 8) || '
                '\'", "night": "\' || n.stamp || \'"}\''
            ),
        },
    )
    insert(
        "evaluations",
        "emap m JOIN evaluations t ON t.id = m.old",
        {"id": "m.new", "run_id": "m.run_id", "created_at": "m.ts + INTERVAL 1 MINUTE"},
    )
    insert(
        "evaluation_values",
        "emap m JOIN evaluation_values t ON t.evaluation_id = m.old",
        {"evaluation_id": "m.new"},
    )
    insert(
        "regress_checks",
        "cmap m JOIN regress_checks t ON t.id = m.old JOIN refs r ON r.sys = m.sys",
        {
            "id": "m.new",
            "run_id": "m.run_id",
            "baseline_run_id": "CASE WHEN t.baseline_run_id IS NULL THEN NULL ELSE r.id END",
            "baseline_name": "CASE WHEN t.baseline_run_id IS NULL THEN NULL ELSE r.name END",
            "created_at": "m.ts + INTERVAL 2 MINUTE",
        },
    )
    insert(
        "regress_verdicts",
        "cmap m JOIN regress_verdicts t ON t.check_id = m.old JOIN refs r ON r.sys = m.sys "
        "LEFT JOIN emap re ON re.old = t.run_evaluation_id AND re.run_id = m.run_id "
        "LEFT JOIN emap be ON be.old = t.baseline_evaluation_id AND be.run_id = r.id",
        {
            "check_id": "m.new",
            "run_evaluation_id": "re.new",
            "baseline_evaluation_id": "be.new",
        },
    )
    insert(
        "gate_references",
        "gate_references t JOIN refs r ON printf('sys%02d', r.sys) = t.system_tag",
        {"run_id": "r.id", "run_name": "r.name", "accepted_at": "r.ts + INTERVAL 2 MINUTE"},
    )
    # the sequences continue after the ids given
    for sequence, table in (
        ("run_ids", "runs"),
        ("evaluation_ids", "evaluations"),
        ("regress_check_ids", "regress_checks"),
    ):
        top = con.execute(f"SELECT max(id) FROM {table}").fetchone()[0]
        con.execute(f"SELECT max(nextval('{sequence}')) FROM range({top})")
    con.execute("CHECKPOINT")
    con.close()


def schema_version(src: Path) -> int:
    return max(int(p.name[:4]) for p in (src.parent / "migrations").glob("[0-9]*.sql"))


def filled(
    workdir: Path, src: Path, evaluations: int, report_nights: int | None = None
) -> tuple[Path, float | None]:
    """The warehouse of ``evaluations`` (filled once, kept) and the seconds filling took."""
    version = schema_version(src)
    layout = "" if report_nights is None else f"-n{report_nights}"
    kept = workdir / f"growth-{evaluations}{layout}-s{version:04d}.duckdb"
    if kept.exists():
        return kept, None
    template = workdir / f"template-s{version:04d}.duckdb"
    start = time.perf_counter()
    if not template.exists():
        print(f"building {template} (real nights) ...", file=sys.stderr)
        partial = template.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        build_template(partial, workdir)
        partial.rename(template)
        print(f"  template: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    start = time.perf_counter()
    partial = kept.with_suffix(".partial")
    shutil.copy(template, partial)
    clone_to(partial, nights_of(evaluations, report_nights))
    partial.rename(kept)
    return kept, time.perf_counter() - start


# --- timing -------------------------------------------------------------------------------------

PROBE = (
    "import json,resource,subprocess,sys,time;"
    "t=time.perf_counter();d=subprocess.run(sys.argv[1:],capture_output=True,text=True);"
    "w=time.perf_counter()-t;u=resource.getrusage(resource.RUSAGE_CHILDREN);"
    "print(json.dumps([w,u.ru_utime+u.ru_stime,u.ru_maxrss/1024,d.returncode,d.stderr[-2000:]]))"
)


def timed(command: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> tuple:
    """Wall seconds, CPU seconds (user + system) and peak MiB of ``command``, one process."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *command], capture_output=True, text=True, env=env
    )
    wall, cpu, peak, code, err = json.loads(done.stdout)
    if code not in ok:
        sys.exit(f"command failed ({code}): {' '.join(command)}\n{err}")
    return wall, cpu, peak


def commands(
    db: Path, out: Path, nights_by_system: dict[int, int], has_limit: bool
) -> dict[str, list[str]]:
    """The timed commands on ``db`` (a warehouse of these nights per system)."""
    nights = nights_by_system[TONIGHT_SYSTEM]

    def night(n: int, system: int) -> str:
        if system != TONIGHT_SYSTEM:  # the same day as sys03's night n
            n += nights_by_system[system] - nights
        ts = night_time(n, system, nights_by_system)
        return f"{system_tag(system)}.run-{ts:%Y%m%dT%H%M%SZ}"

    rh = [sys.executable, "-m", "rankhouse", "--db", str(db)]
    m = [arg for measure in MEASURES for arg in ("-m", measure)]
    tag = system_tag(TONIGHT_SYSTEM)
    return {
        "history -s": [*rh, "history", "-s", tag, "-m", "nDCG@10"],
        # the same system's newest 25 nights: the answer of the smallest warehouse, every size
        "history -s --since": [
            *rh,
            *("history", "-s", tag, "-m", "nDCG@10", "--since"),
            f"{night_time(nights - 25, TONIGHT_SYSTEM, nights_by_system):%Y-%m-%d}",
        ],
        "regress": [
            *rh,
            "regress",
            night(nights, TONIGHT_SYSTEM),
            "--baseline",
            "reference",
            "--qrels",
            "dl19",
            *m,
        ],
        "eval (stored)": [*rh, "eval", "dl19", night(nights - 1, TONIGHT_SYSTEM), *m],
        "compare": [*rh, "compare", "dl19", night(nights - 1, 3), night(nights - 1, 7), *m],
        "runs list --limit 20": [*rh, "runs", "list", *(["--limit", "20"] if has_limit else [])],
        "report --system": [
            *rh,
            "report",
            "-o",
            str(out),
            "--system",
            tag,
            "--qrels",
            "dl19",
            *m,
            "--brief",
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--report-repeat", type=int, default=1, help="0: no report")
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument(
        "--against", type=Path, default=None, help="another src folder, timed in turn (A B A B)"
    )
    parser.add_argument("--workdir", type=Path, default=ROOT / "benchmarks" / "data" / "growth")
    parser.add_argument("--only", default="", help="comma-separated command keys to time")
    parser.add_argument(
        "--report-nights",
        type=int,
        default=None,
        help="sys03 (the reported system) has this many nights at every size; the other "
        "systems share the rest (default: every system the same share)",
    )
    args = parser.parse_args()
    if not DL19.exists():
        sys.exit(f"needs {DL19} (../shared beside the checkout)")
    src = args.src.resolve()
    sys.path.insert(0, str(src))
    sides = {"": src} if args.against is None else {"this": src, "against": args.against.resolve()}
    if len({schema_version(folder) for folder in sides.values()}) > 1:
        sys.exit("--against needs the schema version of --src: both read one filled warehouse")
    args.workdir.mkdir(parents=True, exist_ok=True)
    envs = {}
    for side, folder in sides.items():
        # bytecode written ahead, as an installed package has it (PYTHONDONTWRITEBYTECODE
        # would otherwise make every process compile what changed since its last .pyc)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder)], check=True)
        env = {**os.environ, "PYTHONPATH": str(folder)}
        env.pop("RANKHOUSE_DB", None)
        envs[side] = env
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[tuple[str, int, str], tuple[float, float, float]] = {}
    keys: list[str] = []
    for size in sizes:
        kept, fill_seconds = filled(args.workdir, src, size, args.report_nights)
        megabytes = kept.stat().st_size / 2**20
        fill = f"filled in {fill_seconds:.0f} s" if fill_seconds is not None else "kept"
        print(f"{size:,} evaluations: {kept.name}, {megabytes:,.0f} MiB ({fill})", flush=True)
        with tempfile.TemporaryDirectory(dir=args.workdir) as scratch:
            todo = {}
            for side in sides:  # each side its own copy: regress writes its checks
                db = Path(scratch) / f"w{side}.duckdb"
                shutil.copy(kept, db)
                nights = nights_of(size, args.report_nights)
                todo[side] = commands(db, Path(scratch) / "report.html", nights, _limit(envs[side]))
            keys = [
                key
                for key in todo[next(iter(sides))]
                if (not args.only or key in args.only.split(","))
                and (args.report_repeat or key != "report --system")
            ]
            for key in keys:
                ok = (0, 1, 3) if key == "regress" else (0,)
                for side in sides:  # migrates the copy; stores what a first run stores
                    timed(todo[side][key], envs[side], ok)
                rounds = args.report_repeat if key == "report --system" else args.repeat
                figures: dict[str, list[tuple]] = {side: [] for side in sides}
                for _ in range(rounds):
                    for side in sides:
                        figures[side].append(timed(todo[side][key], envs[side], ok))
                for side in sides:
                    found = tuple(statistics.median(f[i] for f in figures[side]) for i in range(3))
                    results[(side, size, key)] = found
                    wall, cpu, peak = found
                    print(
                        f"  {side:8s}{key:22s} cpu {cpu:7.3f} s  wall {wall:7.3f} s  "
                        f"{peak:6.0f} MiB",
                        flush=True,
                    )
    print_table(sizes, list(sides), keys, results)


def _limit(env: dict[str, str]) -> bool:
    """Whether that rankhouse's `runs list` takes --limit."""
    return (
        "--limit"
        in subprocess.run(
            [sys.executable, "-m", "rankhouse", "runs", "list", "--help"],
            capture_output=True,
            text=True,
            env=env,
        ).stdout
    )


def print_table(sizes: list[int], sides: list[str], keys: list[str], results) -> None:
    """Markdown: CPU seconds (wall) per size, and the ratio of the largest to the smallest."""
    head = " | ".join(f"{s:,}: CPU s (wall)" for s in sizes)
    print(f"\n| command | {head} | {sizes[-1]:,} / {sizes[0]:,} CPU |")
    print("| --- |" + " ---: |" * (len(sizes) + 1))
    for key in keys:
        for side in sides:
            found = [results.get((side, s, key)) for s in sizes]
            cells = " | ".join(f"{f[1]:.2f} ({f[0]:.2f})" if f else "-" for f in found)
            ratio = f"{found[-1][1] / found[0][1]:.2f}x" if found[0] and found[-1] else "-"
            print(f"| {key}{f' ({side})' if side else ''} | {cells} | {ratio} |")


if __name__ == "__main__":
    main()
