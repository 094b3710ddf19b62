"""`runs list --limit N` and ``Warehouse.runs(limit=N)``: the newest N runs, chosen by the
database, so a warehouse of years of nights lists its last few without reading the rest."""

from __future__ import annotations

import pytest
from statement_helpers import record_statements

from rankhouse import RankhouseError

RUNS = ["night-1", "night-2", "night-3", "night-4", "night-5"]


@pytest.fixture
def five_runs(warehouse, tmp_path):
    """Five one-query runs, ingested in order (ids 1 to 5)."""
    for i, name in enumerate(RUNS, start=1):
        path = tmp_path / f"{name}.txt"
        path.write_text(f"1 Q0 d{i} 1 1.0 {name}\n")
        warehouse.ingest_run(path, name=name)
    return warehouse


def test_limit_keeps_the_newest_runs_in_the_listing_order(five_runs):
    assert list(five_runs.runs()["name"]) == RUNS
    assert list(five_runs.runs(limit=2)["name"]) == ["night-4", "night-5"]
    assert list(five_runs.runs(limit=2)["id"]) == list(five_runs.runs()["id"])[-2:]
    assert list(five_runs.runs(limit=50)["name"]) == RUNS


def test_limit_reads_only_the_rows_it_lists(five_runs, monkeypatch):
    seen = record_statements(monkeypatch)
    five_runs.runs(limit=2)
    listing = [s for s in seen if "FROM" in s.sql and "runs" in s.sql]
    assert [s.rows for s in listing] == [2]  # one statement, two rows: not five cut to two


@pytest.mark.parametrize("limit", [0, -3])
def test_a_limit_below_one_is_refused(warehouse, limit):
    with pytest.raises(RankhouseError, match=f"limit must be at least 1, not {limit}"):
        warehouse.runs(limit=limit)


def test_cli_runs_list_limit(five_runs, run_cli):
    five_runs.close()  # the command opens the same file
    done = run_cli("runs", "list", "--limit", "2", "-f", "csv")
    assert done.exit_code == 0
    assert [line.split(",")[1] for line in done.stdout.splitlines()[1:]] == RUNS[-2:]
    refused = run_cli("runs", "list", "--limit", "0")
    assert refused.exit_code == 2 and "--limit" in refused.stderr
