"""A small engine database for the engine's tests: ties, an unjudged document, a negative
grade, a judged document never retrieved, a query no run answers and one the qrels lack."""

from __future__ import annotations

from rankhouse.duck import duckdb
from rankhouse.engine import scratch_database

JUDGMENTS = [
    ("q1", "a", 2),
    ("q1", "b", 0),
    ("q1", "c", 1),
    ("q1", "z", 3),  # never retrieved
    ("q2", "d", 1),
    ("q2", "e", -1),
    ("q3", "f", 1),  # q3: no run answers it
]
RUNS = {
    1: [
        ("q1", "a", 3.0),
        ("q1", "x", 3.0),  # tied with a: 'x' > 'a' ranks first
        ("q1", "b", 2.0),
        ("q1", "c", 1.0),
        ("q2", "e", 5.0),
        ("q2", "y", 4.0),  # tied with d: 'y' > 'd' ranks first
        ("q2", "d", 4.0),
        ("q9", "a", 1.0),  # not in the qrels
    ],
    2: [("q1", "c", 9.0), ("q1", "b", 9.0), ("q1", "a", 1.0), ("q2", "d", 0.5)],
}


def small_database(run_ids=tuple(RUNS)):
    """:func:`scratch_database` holding qrels set 1 (:data:`JUDGMENTS`) and the runs
    ``run_ids`` of :data:`RUNS`. The caller closes it."""
    duck = scratch_database()
    duck.executemany("INSERT INTO judgments VALUES (1, ?, ?, ?)", JUDGMENTS)
    for run_id in run_ids:
        duck.executemany(
            "INSERT INTO run_rows VALUES (?, ?, ?, NULL, ?)",
            [(run_id, *row) for row in RUNS[run_id]],
        )
    return duck


def is_closed(connection) -> bool:
    """Whether the DuckDB ``connection`` was closed (a statement on it says so)."""
    try:
        connection.execute("SELECT 1")
    except duckdb.ConnectionException:
        return True
    return False
