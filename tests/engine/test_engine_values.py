"""engine.Values.columns cuts one sorted scan of rh_values into measure columns."""

from __future__ import annotations

import pytest

from rankhouse.engine import VALUES_TABLE, Values, scratch_database
from rankhouse.engine import values as engine
from rankhouse.errors import MeasureError
from rankhouse.measures import parse_measures


def _values(rows: list[tuple]) -> Values:
    duck = scratch_database()
    duck.execute(
        f"CREATE TEMP TABLE {VALUES_TABLE} (run_id INTEGER, query_id VARCHAR, "
        "measure_idx INTEGER, value DOUBLE)"
    )
    duck.executemany(f"INSERT INTO {VALUES_TABLE} VALUES (?, ?, ?, ?)", rows)
    return Values(duck, parse_measures(["map", "P.5"]), [1])


@pytest.fixture(params=["rows", "numpy"])
def read_as(request, monkeypatch) -> str:
    """Read the values as rows (small results) or through numpy (threshold 0)."""
    if request.param == "numpy":
        monkeypatch.setattr(engine, "NUMPY_VALUES_FROM", 0)
    return request.param


def test_columns_are_in_query_byte_order_per_measure(read_as):
    values = _values(
        [(1, "b", 0, 0.2), (1, "B", 0, 0.1), (1, "a", 0, 0.3), (2, "a", 0, 9.0)]
        + [(1, "b", 1, 0.6), (1, "B", 1, 0.4), (1, "a", 1, 0.5)]
    )
    queries, columns = values.columns(1)
    assert queries == ["B", "a", "b"]  # byte order: upper case first
    assert columns == {"AP": [0.1, 0.3, 0.2], "P@5": [0.4, 0.5, 0.6]}
    assert all(type(v) is float for column in columns.values() for v in column)


def test_nan_and_exact_doubles_survive_either_reading(read_as):
    tiny, third = 5e-324, 1 / 3
    values = _values(
        [(1, "a", 0, float("nan")), (1, "a", 1, tiny), (1, "b", 0, third)]
        + [(1, "b", 1, 0.1 + 0.2)]
    )
    _, columns = values.columns(1)
    assert columns["AP"][0] != columns["AP"][0] and columns["AP"][1] == third
    assert columns["P@5"] == [tiny, 0.1 + 0.2]


def test_a_missing_value_is_an_error_not_a_shifted_column(read_as):
    values = _values([(1, "a", 0, 0.3), (1, "b", 0, 0.2), (1, "a", 1, 0.5)])
    with pytest.raises(MeasureError, match="lacks values of run 1"):
        values.columns(1)
