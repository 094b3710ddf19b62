"""How the warehouse's SQL (PostgreSQL's ``:name`` binds) reaches DuckDB: ``$name`` binds, and a
``column = ANY(:list)`` condition as ``list_contains`` with the same rows."""

from __future__ import annotations

import duckdb
import pytest

from rankhouse.duck import to_duckdb


def test_binds_outside_strings_comments_and_casts() -> None:
    text, names = to_duckdb(
        "SELECT 'a:b', x::INT, :one -- :two\nFROM t WHERE y = :one AND z = :three"
    )
    assert text == "SELECT 'a:b', x::INT, $one -- :two\nFROM t WHERE y = $one AND z = $three"
    assert names == ("one", "three")


def test_any_condition_becomes_list_contains() -> None:
    text, names = to_duckdb(
        "SELECT 1 FROM t WHERE le.run_id = ANY(:ids) AND k = 1 OR name = ANY( :names )"
    )
    assert text == (
        "SELECT 1 FROM t WHERE list_contains($ids, le.run_id) AND k = 1 "
        "OR list_contains($names, name)"
    )
    assert names == ("ids", "names")


def test_any_condition_in_parentheses_becomes_list_contains() -> None:
    # history's newest runs: WHERE ({conditions}) AND ranked.recency <= :newest
    text, names = to_duckdb("SELECT 1 FROM t WHERE (le.measure = ANY(:m)) AND ( k = ANY(:k) OR j)")
    assert text == (
        "SELECT 1 FROM t WHERE (list_contains($m, le.measure)) AND ( list_contains($k, k) OR j)"
    )
    assert names == ("m", "k")


def test_any_left_alone_where_rewriting_could_change_meaning() -> None:
    # an expression, not a plain column, before '=': rewriting only the last term would bind
    # tighter than '=' does
    text, _ = to_duckdb("SELECT 1 FROM t WHERE a + b = ANY(:ids) AND c::INT = ANY(:more)")
    assert text == "SELECT 1 FROM t WHERE a + b = ANY($ids) AND c::INT = ANY($more)"


@pytest.mark.parametrize(
    "values", [[], [1], [1, None], [2, 3], [99]], ids=["empty", "one", "null", "two", "none"]
)
@pytest.mark.parametrize("column", ["id", "name"])
def test_list_contains_selects_the_rows_any_selects(column: str, values: list) -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id BIGINT, name VARCHAR)")
    con.execute("INSERT INTO t VALUES (1, '1'), (2, '2'), (NULL, '3'), (3, NULL)")
    if column == "name":
        values = [None if v is None else str(v) for v in values]
    for sql in (
        f"SELECT id, name FROM t WHERE {column} = ANY(:values) ORDER BY ALL",
        f"SELECT id, name FROM t WHERE ({column} = ANY(:values)) AND TRUE ORDER BY ALL",
    ):
        text, _ = to_duckdb(sql)
        assert "list_contains" in text
        plain = sql.replace(":values", "$values")
        assert (
            con.execute(text, {"values": values}).fetchall()
            == con.execute(plain, {"values": values}).fetchall()
        )
