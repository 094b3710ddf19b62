"""What a warehouse's statements read: each statement a DuckDB file store runs, with the
number of rows it returned, recorded while a test calls the library. The growth tests use it
to hold a command to a bounded read on a small warehouse (benchmarks/bench_growth.py times
the same commands on 100,000 evaluations)."""

from __future__ import annotations

from dataclasses import dataclass

from rankhouse.backends.base import text_of
from rankhouse.backends.duckdb_file.connection import DuckDBConnection


@dataclass(frozen=True)
class Statement:
    sql: str  # the statement as rankhouse wrote it, whitespace collapsed
    rows: int  # the rows it returned


def record_statements(monkeypatch) -> list[Statement]:
    """A list that fills with every statement run on a DuckDB file store from now on (until
    the test ends); the statements run as they always do."""
    seen: list[Statement] = []
    execute = DuckDBConnection.execute

    def recorded(self, sql, params=None):
        result = execute(self, sql, params)
        seen.append(Statement(" ".join(text_of(sql).split()), len(result.all())))
        return result

    monkeypatch.setattr(DuckDBConnection, "execute", recorded)
    return seen
