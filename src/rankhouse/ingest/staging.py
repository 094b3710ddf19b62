"""The stage: a temporary table holding one parsed source, checked in bulk before it is stored.

Every reader (TREC text, tabular files, DataFrames) fills the same stage columns:
qrels (query_id, doc_id, grade), runs (tag, query_id, doc_id, rank, score). The checks here
are DuckDB SQL because they run on the fast path, over millions of rows at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from .repeats import TIE_HASH, repeats_sql

STAGE = "_rankhouse_stage"


@dataclass(frozen=True)
class StageSummary:
    """What one tag (or the whole qrels set) of the stage holds."""

    tag: str | None
    num_queries: int
    num_rows: int
    tied_pairs: int | None = None
    """Documents whose score equals an earlier one of the same query (runs only)."""


def count_bad_rows(duck, bad_condition: str) -> tuple[int, int]:
    """(rows in the stage, rows matching ``bad_condition``)."""
    total, bad = duck.execute(
        f"SELECT count(*), count(*) FILTER (WHERE {bad_condition}) FROM {STAGE}"
    ).fetchone()
    return int(total), int(bad)


def find_duplicate(duck, kind: str) -> tuple[str, ...] | None:
    """One (tag,) query_id, doc_id key that occurs twice in the stage, or None.

    Grouping by one 64-bit hash of the key is much cheaper than by three strings; a hash seen
    twice is then confirmed on the strings (a collision is not a duplicate).
    """
    key = "query_id, doc_id" if kind == "qrels" else "tag, query_id, doc_id"
    twice = f"SELECT h FROM (SELECT hash({key}) AS h FROM {STAGE}) GROUP BY h HAVING count(*) > 1"
    if duck.execute(f"SELECT count(*) FROM ({twice})").fetchone()[0] == 0:
        return None
    row = duck.execute(
        f"SELECT {key} FROM {STAGE} WHERE hash({key}) IN ({twice}) "
        f"GROUP BY {key} HAVING count(*) > 1 ORDER BY {key} LIMIT 1"
    ).fetchone()
    return None if row is None else tuple(row)


def summarize(duck, kind: str) -> list[StageSummary]:
    """Per tag (one entry for qrels): number of queries and rows, tags in byte order."""
    if kind == "qrels":
        queries, rows = duck.execute(
            f"SELECT count(DISTINCT query_id), count(*) FROM {STAGE}"
        ).fetchone()
        return [StageSummary(None, int(queries), int(rows))]
    # Distinct (query, score) pairs are counted by their 64-bit hash: a collision could only
    # add one to the number of ties, and costs far less than comparing two columns.
    found = duck.execute(
        f"SELECT tag, count(DISTINCT query_id), count(*), {repeats_sql(TIE_HASH)} "
        f"FROM {STAGE} GROUP BY tag ORDER BY tag"
    ).fetchall()
    return [
        StageSummary(tag, int(queries), int(rows), int(ties)) for tag, queries, rows, ties in found
    ]


def qrels_statistics(duck) -> dict[str, int | None]:
    """num_relevant (grade >= 1), min_grade and max_grade of the staged judgments."""
    relevant, low, high = duck.execute(
        f"SELECT count(*) FILTER (WHERE grade >= 1), min(grade), max(grade) FROM {STAGE}"
    ).fetchone()
    return {"num_relevant": int(relevant), "min_grade": low, "max_grade": high}


def drop(duck) -> None:
    duck.execute(f"DROP TABLE IF EXISTS {STAGE}")


def copy_judgments(duck, qrels_id: int) -> None:
    """Move the staged judgments into ``judgments``."""
    duck.execute(
        f"INSERT INTO judgments SELECT ?, query_id, doc_id, grade FROM {STAGE}", [qrels_id]
    )


def copy_run_rows(duck, run_ids: dict[str, int]) -> None:
    """Move the staged rows of the given tags into ``run_rows`` (evaluations rank them)."""
    for tag, run_id in run_ids.items():
        duck.execute(
            f"INSERT INTO run_rows SELECT ?, query_id, doc_id, rank, score FROM {STAGE} "
            "WHERE tag = ?",
            [run_id, tag],
        )
