"""The judged documents' ranks: ranking_sorted.sql and ranking_per_query.sql build the same
rh_ranking, with trec_eval's order, -M and -J, and the engine picks the file by how deeply
the qrels set's queries are judged."""

from __future__ import annotations

import pytest
from engine_helpers import small_database

from rankhouse.engine import compute
from rankhouse.engine import computing as engine
from rankhouse.measures import parse_measures

# (query, doc, rank, grade, pooled_upto, judged_upto) of run 1, worked out by hand from
# engine_helpers' lines
EXPECTED = {
    "plain": [
        ("q1", "a", 2, 2, 1, 1),
        ("q1", "b", 3, 0, 2, 2),
        ("q1", "c", 4, 1, 3, 3),
        ("q2", "d", 3, 1, 2, 1),
        ("q2", "e", 1, -1, 1, 0),
    ],
    # -J: only grades >= 0 stay, renumbered
    "judged_only": [
        ("q1", "a", 1, 2, 1, 1),
        ("q1", "b", 2, 0, 2, 2),
        ("q1", "c", 3, 1, 3, 3),
        ("q2", "d", 1, 1, 1, 1),
    ],
    # -M 2: the top two documents of each query
    "max_rank": [
        ("q1", "a", 2, 2, 1, 1),
        ("q2", "e", 1, -1, 1, 0),
    ],
}
OPTIONS = {
    "plain": {},
    "judged_only": {"judged_only": True},
    "max_rank": {"max_rank": 2},
}


@pytest.fixture
def duck():
    duck = small_database(run_ids=[1])
    yield duck
    duck.close()


def _ranking(duck) -> list[tuple]:
    return duck.execute(
        "SELECT query_id, doc_id, rank, grade, pooled_upto, judged_upto FROM rh_ranking "
        "ORDER BY query_id, doc_id"
    ).fetchall()


@pytest.mark.parametrize("case", sorted(EXPECTED))
@pytest.mark.parametrize("dense_from", [0, 1, engine.DENSE_FROM])
@pytest.mark.parametrize("share", [0, 2], ids=["sorted", "per_query"])
def test_both_files_rank_as_trec_eval(duck, monkeypatch, case, dense_from, share):
    monkeypatch.setattr(engine, "SORTED_FROM_SHARE", share)
    monkeypatch.setattr(engine, "DENSE_FROM", dense_from)
    compute(duck, [1], 1, parse_measures(["P@1"]), **OPTIONS[case])
    assert _ranking(duck) == EXPECTED[case]


@pytest.mark.parametrize(
    ("dense_from", "sorted_expected"),
    [
        (0, True),  # every query has more than 0 judgment lines
        (1, True),  # q1 (4 lines) and q2 (2): two of three queries
        (2, False),  # q1 alone: one of three
        (engine.DENSE_FROM, False),
    ],
)
def test_the_file_follows_the_share_of_deeply_judged_queries(
    duck, monkeypatch, dense_from, sorted_expected
):
    monkeypatch.setattr(engine, "DENSE_FROM", dense_from)
    compute(duck, [1], 1, parse_measures(["P@1"]))
    # only ranking_per_query.sql joins the run to the judgments first
    found = duck.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'rh_judged_rows'"
    ).fetchone()[0]
    assert found == (0 if sorted_expected else 1)
    assert _ranking(duck) == EXPECTED["plain"]
