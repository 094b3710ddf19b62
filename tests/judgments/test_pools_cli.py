"""``rankhouse pool`` in a subprocess: the three formats, ``-o``, the sizes on stderr, stored
runs beside files, and the errors' one line."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from cli_helpers import ERROR_LINE, run_many

RUN_A = "1 Q0 d1 1 3.0 A\n1 Q0 d3 2 2.0 A\n1 Q0 d2 3 2.0 A\n2 Q0 e1 1 1.0 A\n"
RUN_B = "1 Q0 d4 1 9.0 B\n1 Q0 d3 2 8.0 B\n2 Q0 e2 1 5.0 B\n2 Q0 e1 2 4.0 B\n"
QRELS = "1 0 d1 2\n"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every command of this file, run once, a few at a time (one warehouse for the stored)."""
    folder: Path = tmp_path_factory.mktemp("pool")
    (folder / "a.txt").write_text(RUN_A)
    (folder / "b.txt").write_text(RUN_B)
    (folder / "q.txt").write_text(QRELS)
    db = ["--db", str(folder / "w.duckdb")]
    [ingested] = run_many([[*db, "ingest", "run", "b.txt"]], cwd=folder)
    assert ingested.exit_code == 0, ingested.stderr
    commands = {
        "trec": ["pool", "a.txt", "b.txt", "--depth", "2", "--qrels", "q.txt"],
        "csv": ["pool", "a.txt", "b.txt", "-k", "2", "-f", "csv", "--order", "rrf"],
        "jsonl": ["pool", "a.txt", "b.txt", "-k", "2", "-f", "jsonl", "-o", "pool.jsonl", "-q"],
        "stored": [*db, "--read-only", "pool", "a.txt", "B", "-k", "2", "--budget", "2"],
        "missing": [*db, "pool", "a.txt", "nosuch", "-k", "2"],
        "folder": ["pool", "a.txt", "-k", "2", "-o", "."],
        "depth": ["pool", "a.txt", "-k", "0"],
    }
    done = run_many(list(commands.values()), cwd=folder)
    return folder, dict(zip(commands, done, strict=True))


def test_trec_lines_and_sizes_on_stderr(results):
    _, found = results
    trec = found["trec"]
    assert trec.exit_code == 0, trec.stderr
    # A's top 2: d1, d3 (d3 above d2 on their tie: doc id descending); B's: d4, d3; d1 judged.
    # By best rank: d4 (1) before d3 (2, in two runs); e1 (1, two runs) before e2 (1, one)
    assert trec.stdout == "1 d4\n1 d3\n2 e1\n2 e2\n"
    sizes = [line.split() for line in trec.stderr.splitlines() if re.match(r"\s*(1|2|all)\s", line)]
    assert [[c for c in row if c not in "│┃"] for row in sizes] == [
        ["1", "3", "1", "2", "2"],
        ["2", "2", "0", "2", "2"],
        ["all", "5", "1", "4", "4"],
    ]


def test_csv_by_rrf(results):
    _, found = results
    rows = list(csv.DictReader(io.StringIO(found["csv"].stdout)))
    assert [(r["query_id"], r["doc_id"], r["priority"]) for r in rows] == [
        ("1", "d3", "1"), ("1", "d1", "2"), ("1", "d4", "3"), ("2", "e1", "1"), ("2", "e2", "2"),
    ]  # fmt: skip
    assert rows[0]["runs"] == "A|B"
    assert float(rows[0]["rrf"]) == pytest.approx(1 / 62 + 1 / 62)


def test_jsonl_to_a_file(results):
    folder, found = results
    assert found["jsonl"].exit_code == 0 and found["jsonl"].stdout == ""
    assert found["jsonl"].stderr == ""  # -q: no sizes
    lines = [json.loads(line) for line in (folder / "pool.jsonl").read_text().splitlines()]
    assert lines[2] == {
        "query_id": "1",
        "doc_id": "d3",
        "priority": 3,
        "best_rank": 2,
        "rrf": pytest.approx(2 / 62),
        "runs": ["A", "B"],
    }
    assert [(line["doc_id"], line["priority"]) for line in lines] == [
        ("d1", 1), ("d4", 2), ("d3", 3), ("e1", 1), ("e2", 2),
    ]  # fmt: skip


def test_a_stored_run_beside_a_file_on_a_read_only_warehouse(results):
    _, found = results
    stored = found["stored"]
    assert stored.exit_code == 0, stored.stderr
    assert stored.stdout == "1 d1\n2 e1\n"  # budget 2: each query's first


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("missing", "nosuch"),
        ("folder", "is a folder"),
        ("depth", "0"),
    ],
)
def test_errors_are_one_line(results, case, words):
    _, found = results
    failed = found[case]
    assert failed.exit_code != 0 and failed.stdout == ""
    if case != "depth":  # Typer's own usage error for a bad --depth
        assert re.match(ERROR_LINE, failed.stderr), failed.stderr
    assert words in failed.stderr
