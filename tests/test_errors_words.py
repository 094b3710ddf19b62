"""Counts in words: the noun agrees with its number, in every message that counts."""

from __future__ import annotations

import pytest

from rankhouse.errors import count, noun


@pytest.mark.parametrize(
    ("number", "singular", "expected"),
    [
        (0, "query", "0 queries"),
        (1, "query", "1 query"),
        (2, "query", "2 queries"),
        (1500, "row", "1,500 rows"),
        (1, "tied-score pair", "1 tied-score pair"),
        (3, "tied-score pair", "3 tied-score pairs"),
        (2, "qrels query", "2 qrels queries"),
        (2, "day", "2 days"),
        (2, "match", "2 matches"),
        (-1, "point", "-1 point"),
    ],
)
def test_count(number, singular, expected):
    assert count(number, singular) == expected


def test_an_irregular_plural_is_given():
    assert noun(2, "table or view", "tables or views") == "tables or views"
    assert noun(1, "table or view", "tables or views") == "table or view"


def test_eval_and_ingest_of_one_query_say_it_in_the_singular(run_cli, tmp_path):
    """One query, one row, one tied pair, one qrels query the run misses: no "1 queries"."""
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 1.0 t\nq1 Q0 c 2 1.0 t\n")
    ingested = run_cli("ingest", "run", "r.txt")
    assert ingested.stderr == "stored run 't' (id 1): 1 query, 2 rows\n"
    done = run_cli("eval", "q.txt", "t", "-m", "AP")
    assert done.exit_code == 0, done.stderr
    assert done.stderr == (
        "t: 2 queries evaluated; 1 qrels query not in the run (scored as empty rankings); "
        "1 tied-score pair ordered by doc id descending\n"
    )
    again = run_cli("eval", "q.txt", "t", "-m", "AP")
    assert again.stderr.endswith(
        "1 of 1 result reused from storage (--recompute to compute again)\n"
    )
    (tmp_path / "stray.txt").write_text("q9 Q0 a 1 1.0 s\n")
    stray = run_cli("eval", "q.txt", "stray.txt", "-m", "AP")
    assert "(the run answers 1 query, none of the 2 judged)" in stray.stderr
