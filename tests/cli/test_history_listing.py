"""``rankhouse history`` without a system lists what a person reads (issue 37, item 4).

A table without ``--system`` or ``--run`` shows each system's newest run and a note on
stderr says how many runs it leaves out and how to see them; ``--limit N`` shows the newest N
of each system, ``--limit 0`` every run; ``--format csv`` and ``json`` print every run, read
in batches of runs (:data:`rankhouse.history.HISTORY_BATCH_RUNS`); the Python API returns
every run. Three systems of five nights each: 15 runs, 5 per system.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from cli_helpers import run_many
from series_helpers import add_tiny_nights

from rankhouse import Warehouse
from rankhouse.defaults import RECENT_RUNS
from rankhouse.history import history_rows, history_stream

SYSTEMS = ["alpha", "beta", "gamma"]
NIGHTS = 5


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    folder = tmp_path_factory.mktemp("listing")
    with Warehouse(folder / "nights.duckdb") as wh:
        add_tiny_nights(wh, SYSTEMS, range(NIGHTS))
    commands = [
        ["history"],
        ["history", "--limit", "2"],
        ["history", "--limit", "0"],
        ["history", "-f", "csv"],
        ["history", "-f", "json", "-m", "RR"],
        ["history", "-s", "beta"],
    ]
    results = run_many([["--db", "nights.duckdb", *c] for c in commands], cwd=folder)
    return folder / "nights.duckdb", dict(zip(map(" ".join, commands), results, strict=True))


def _runs_in_table(text: str) -> list[str]:
    return [word for line in text.splitlines() for word in line.split() if ".night" in word]


def test_without_a_system_the_table_shows_each_systems_newest_run_and_says_so(nights):
    _, done = nights
    found = done["history"]
    assert found.exit_code == 0, found.stderr
    assert _runs_in_table(found.stdout) == [f"{s}.night004" for s in SYSTEMS]
    assert (
        "note: the newest run of each of 3 systems shown, 3 of 15 runs evaluated; --system S "
        "shows a system's runs, --limit N the newest N of each, --limit 0 every run, --format "
        "csv or json every run as it is read" in found.stderr
    )


def test_limit_shows_the_newest_n_of_each_system_and_0_every_run(nights):
    _, done = nights
    two = done["history --limit 2"]
    assert _runs_in_table(two.stdout) == [
        f"{s}.night{n:03d}" for n in (3, 4) for s in SYSTEMS
    ]  # oldest first: night 3 of each system, then night 4
    assert "the newest 2 runs of each of 3 systems shown, 6 of 15 runs" in two.stderr
    every = done["history --limit 0"]
    assert len(_runs_in_table(every.stdout)) == 15 and "newest" not in every.stderr
    system = done["history -s beta"]
    assert _runs_in_table(system.stdout) == [f"beta.night{n:03d}" for n in range(NIGHTS)]
    assert "newest" not in system.stderr


def test_machine_formats_print_every_run(nights):
    _, done = nights
    rows = list(csv.DictReader(io.StringIO(done["history -f csv"].stdout)))
    assert len(rows) == 15
    assert [r["run"] for r in rows[:3]] == [f"{s}.night000" for s in SYSTEMS]
    assert rows[0]["night"] == "20250101T021314Z" and rows[0]["RR"] != ""
    records = json.loads(done["history -f json -m RR"].stdout)
    assert len(records) == 15 and {r["system"] for r in records} == set(SYSTEMS)
    # night 0 scores q0's documents d0 2, d1 3, d2 1: its relevant d0 is second (RR 1/2);
    # the 5 other queries rank it first
    assert records[0]["RR"] == pytest.approx((5 + 1 / 2) / 6)


def test_the_stream_reads_in_batches_what_the_api_returns_whole(nights):
    path, _ = nights
    with Warehouse(path) as wh:
        frame = wh.history()  # a notebook's DataFrame: every run
        whole = history_rows(wh)
        stream = history_stream(wh, batch_runs=4)  # 15 runs: 4 batches
        batches = list(stream.batches)
    assert len(frame) == 15 and list(frame["run"]) == [r[1] for r in whole.rows.rows]
    assert [len(b) for b in batches] == [4, 4, 4, 3]
    assert stream.columns == whole.rows.columns
    assert [row for batch in batches for row in batch] == list(whole.rows.rows)


def test_a_systems_table_shows_its_newest_four_weeks_and_says_so(tmp_path):
    """history -s of a system of years of nights: its newest 28 (RECENT_RUNS) in the table, a
    note saying how to see the others; --since and csv give every run asked for."""
    with Warehouse(tmp_path / "long.duckdb") as wh:
        add_tiny_nights(wh, ["delta"], range(RECENT_RUNS + 3))
    commands = [
        ["history", "-s", "delta"],
        ["history", "-s", "delta", "--since", "2025-01-02"],
        ["history", "-s", "delta", "-f", "csv"],
    ]
    table, since, rows = run_many([["--db", "long.duckdb", *c] for c in commands], cwd=tmp_path)
    assert table.exit_code == 0, table.stderr
    newest = range(3, RECENT_RUNS + 3)
    assert _runs_in_table(table.stdout) == [f"delta.night{n:03d}" for n in newest]
    assert (
        f"note: the newest {RECENT_RUNS} runs of the system shown, {RECENT_RUNS} of "
        f"{RECENT_RUNS + 3} runs evaluated; --since DATE the runs since then, --limit N the "
        "newest N of each, --limit 0 every run, --format csv or json every run as it is read"
        in table.stderr
    )
    # night 0 is 2025-01-01 02:13:14: since the 2nd, the 30 others, all shown
    assert len(_runs_in_table(since.stdout)) == RECENT_RUNS + 2 and "newest" not in since.stderr
    assert len(list(csv.DictReader(io.StringIO(rows.stdout)))) == RECENT_RUNS + 3
