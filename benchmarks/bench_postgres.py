#!/usr/bin/env python3
"""Time a PostgreSQL warehouse beside the embedded DuckDB file, step by step.

Starts no server: it takes the URL of one (argument, else $RANKHOUSE_TEST_POSTGRES) and works
in new schemas there. For a server as Debian ships it (fsync and synchronous commit on):

  RANKHOUSE_PG_SETTINGS="" scripts/with-postgres python benchmarks/bench_postgres.py

Every command runs as its own process (`rankhouse --db ...`), file and server in turn, for
--repeat rounds; the table gives median wall seconds, the server's time as a multiple of the
file's, and peak memory:

  W1 ingest              `ingest run` of the 6.98-million-line MS MARCO-size run (make_run.py)
  W1 eval --recompute    evaluation of the stored W1 run, 5 measures; on the server with its
                         rows in this machine's cache (rankhouse.row_cache, written by the
                         ingest: the machine that ingests, evaluates) and, as "no cache",
                         fetched from the server (RANKHOUSE_CACHE=off: an analyst's first)
  W1 eval, values stored `eval` of values already stored (nothing computed)
  DL19 cycle             `ingest run` of a new night (43 topics x 1,000), `eval` (5 measures),
                         `regress --baseline previous`, in a warehouse holding the night
                         before (stored, evaluated); each step and the total

and checks that the file and the server print the same numbers.

  python benchmarks/bench_postgres.py [URL] [--repeat 3] [--workdir benchmarks/data]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from workload import QRELS, SHARED, make_run, measured, server_arguments, synthetic_run

DL19_QRELS = SHARED / "data" / "qrels" / "qrels.dl19-passage.txt"
MEASURES = ["AP", "nDCG@10", "P@10", "RR", "R@1000"]
M_ARGS = " ".join(f"-m {m}" for m in MEASURES)


#: The columns of the table: where the warehouse is, and the cache setting of the machine.
FILE, SERVER, NO_CACHE = "file", "server", "server, no cache"


def main() -> None:
    args = server_arguments(__doc__.splitlines()[0])
    for needed in (QRELS, DL19_QRELS):
        if not needed.exists():
            sys.exit(f"needs {needed} (../shared beside the checkout)")
    w1 = make_run(args.workdir)
    nights = [_dl19_night(args.workdir, seed) for seed in (1, 2)]
    figures: dict[str, list[tuple[float, float]]] = {}
    outputs: dict[str, str] = {}
    schemas = Schemas(args.url)
    with tempfile.TemporaryDirectory() as tmp:
        cached = {"RANKHOUSE_CACHE": str(Path(tmp) / "cache")}
        uncached = {"RANKHOUSE_CACHE": "off"}
        try:
            for round_ in range(args.repeat):
                file, server = str(Path(tmp) / f"w1-{round_}.duckdb"), schemas.new()
                for column, target in ((FILE, file), (SERVER, server)):
                    ingest = f"ingest run {w1} --name w1"
                    _time(figures, "W1 ingest", column, target, ingest, cached)
                    _run(target, f"ingest qrels {QRELS} --name dev", cached)
                evaluate = f"eval dev w1 {M_ARGS} --format csv"
                for column, target, env in (
                    (FILE, file, cached),
                    (SERVER, server, cached),
                    (NO_CACHE, server, uncached),
                ):
                    step = "W1 eval --recompute"
                    _time(figures, step, column, target, f"{evaluate} --recompute", env)
                for column, target in ((FILE, file), (SERVER, server)):
                    step = "W1 eval, values stored"
                    outputs[column] = _time(figures, step, column, target, evaluate, cached)
                if round_ == 0:
                    _check_same(outputs)
                for column, target, env in (
                    (FILE, str(Path(tmp) / f"dl19-{round_}.duckdb"), cached),
                    (SERVER, schemas.new(), cached),
                    (NO_CACHE, schemas.new(), uncached),
                ):
                    _nightly_cycle(figures, target, column, nights, env)
                print(f"round {round_ + 1}/{args.repeat} done", file=sys.stderr)
        finally:
            schemas.drop()
    _print(figures)


def _nightly_cycle(figures, target: str, column: str, nights: list[Path], env: dict) -> None:
    """The night before stored, evaluated and gated beforehand; the next night's cycle timed."""
    _run(target, f"ingest qrels {DL19_QRELS} --name dl19", env)
    _run(target, f"ingest run {nights[0]} --name night-0", env)
    _run(target, f"eval dl19 night-0 {M_ARGS}", env)
    steps = {
        "ingest": f"ingest run {nights[1]} --name night-1 --meta commit=x",
        "eval": f"eval dl19 night-1 {M_ARGS}",
        "regress": f"regress night-1 --baseline previous --qrels dl19 {M_ARGS} --max-drop 1",
    }
    for name, step in steps.items():
        _time(figures, f"DL19 cycle: {name}", column, target, step, env)
    walls = [figures[f"DL19 cycle: {name}|{column}"][-1] for name in steps]
    figures.setdefault(f"DL19 cycle: total|{column}", []).append(
        (sum(wall for wall, _ in walls), max(peak for _, peak in walls))
    )


def _command(target: str, args: str, env: dict) -> list[str]:
    """``rankhouse --db TARGET ARGS`` under ``env`` (paths and measures hold no spaces)."""
    rankhouse = str(Path(sys.executable).parent / "rankhouse")
    settings = [f"{name}={value}" for name, value in env.items()]
    return ["env", *settings, rankhouse, "--db", target, *args.split()]


def _run(target: str, args: str, env: dict) -> None:
    subprocess.run(_command(target, args, env), check=True, capture_output=True)


def _time(figures, step: str, column: str, target: str, args: str, env: dict) -> str:
    """Run the command once, add its wall time and peak memory to ``figures`` under
    ``step`` and ``column``; returns its stdout."""
    wall, peak, out = measured(_command(target, args, env))
    figures.setdefault(f"{step}|{column}", []).append((wall, peak))
    return out


class Schemas:
    """New empty schemas on the server, one per warehouse, dropped at the end."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.made: list[str] = []

    def new(self) -> str:
        """A new schema and the warehouse URL that works inside it."""
        import psycopg

        schema = f"bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        self.made.append(schema)
        separator = "&" if "?" in self.url else "?"
        return f"{self.url}{separator}options=-csearch_path%3D{schema}"

    def drop(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            for schema in self.made:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _dl19_night(workdir: Path, seed: int) -> Path:
    """A DL19-size run (43 judged topics x 1,000 documents) of one night, built once."""
    return synthetic_run(workdir / f"dl19.night{seed}.run", DL19_QRELS, seed=seed, shuffle=True)


def _check_same(outputs: dict[str, str]) -> None:
    same = outputs["file"] == outputs["server"]
    print(f"W1 means printed by the file and the server identical: {'yes' if same else 'NO'}")
    if not same:
        print(f"file:\n{outputs['file']}server:\n{outputs['server']}")


def _print(figures: dict[str, list[tuple[float, float]]]) -> None:
    steps = list(dict.fromkeys(key.split("|")[0] for key in figures))
    print(
        f"{'step (median of rounds)':24s} {'file s':>7s} {'server s':>9s} {'x file':>7s} "
        f"{'no cache s':>11s} {'x file':>7s} {'peak MiB file/server/no cache':>30s}"
    )
    for step in steps:
        wall = {c: _median(figures.get(f"{step}|{c}")) for c in (FILE, SERVER, NO_CACHE)}
        peak = [_cell(_peak(figures.get(f"{step}|{c}")), 0, 0) for c in (FILE, SERVER, NO_CACHE)]
        print(
            f"{step:24s} {_cell(wall[FILE], 7)} {_cell(wall[SERVER], 9)} "
            f"{_ratio(wall[SERVER], wall[FILE])} {_cell(wall[NO_CACHE], 11)} "
            f"{_ratio(wall[NO_CACHE], wall[FILE])} {' / '.join(peak):>30s}"
        )


def _median(rows):
    return statistics.median(w for w, _ in rows) if rows else None


def _peak(rows):
    return max(p for _, p in rows) if rows else None


def _cell(value, width: int, digits: int = 2) -> str:
    return f"{value:{width}.{digits}f}" if value is not None else f"{'-':>{max(width, 1)}s}"


def _ratio(value, reference) -> str:
    return f"{value / reference:6.1f}x" if value is not None and reference else f"{'-':>7s}"


if __name__ == "__main__":
    main()
