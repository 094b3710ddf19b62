"""One number rule: the SQL check and the Python rescan accept exactly the same spellings."""

from __future__ import annotations

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankhouse.ingest.staging import integer_problem, integer_sql, score_problem, score_sql

ALPHABET = "0123456789+-.eE_xXinfatyINFATY \t\u0661\x1c\x1f"
SPELLINGS = st.text(alphabet=ALPHABET, max_size=8) | st.sampled_from(
    ["1_000", "+-1", "1.0", "1.", ".5", "inf", "-Infinity", "nan", "2147483648", "-2147483648"]
)


@pytest.fixture(scope="module")
def duck():
    connection = duckdb.connect()
    yield connection
    connection.close()


@settings(max_examples=400, deadline=None)
@given(SPELLINGS)
def test_score_rule_is_the_same_in_sql_and_python(duck, text):
    [(value,)] = duck.execute(f"SELECT {score_sql('t')} FROM (SELECT ? AS t)", [text]).fetchall()
    assert (value is not None) == (score_problem(text) is None)
    if value is not None:
        assert value == float(text.strip(" \t"))


@settings(max_examples=400, deadline=None)
@given(SPELLINGS)
def test_integer_rule_is_the_same_in_sql_and_python(duck, text):
    [(value,)] = duck.execute(f"SELECT {integer_sql('t')} FROM (SELECT ? AS t)", [text]).fetchall()
    assert (value is not None) == (integer_problem(text) is None)
    if value is not None:
        assert value == int(text.strip(" \t").partition(".")[0])


@pytest.mark.parametrize(
    ("text", "ok"),
    [("1.0", True), ("1.5", False), ("+7", True), ("1_0", False), ("\u0661", False)],
)
def test_grade_spellings(text, ok):
    assert (integer_problem(text) is None) == ok
