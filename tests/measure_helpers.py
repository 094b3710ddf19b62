"""Helpers for the measure tests: store qrels and runs, evaluate, read trec_eval's output."""

from __future__ import annotations

import itertools
import math
import struct
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from hypothesis import strategies as st

from rankhouse import Warehouse
from rankhouse.engine import compute
from rankhouse.engine import computing as engine
from rankhouse.errors import RankhouseWarning
from rankhouse.ingest.storing import ingest_qrels, ingest_run
from rankhouse.measures import parse_measures


def store_qrels(wh: Warehouse, source: Path | pd.DataFrame, name: str = "qrels") -> int:
    """Store judgments (a qrels file or a frame query_id, doc_id, grade); the qrels set id."""
    return ingest_qrels(wh, source, name=name).id


def store_run(wh: Warehouse, source: Path | pd.DataFrame, name: str = "run") -> int:
    """Store a one-system run (a TREC run file or a frame query_id, doc_id, score); its id."""
    return ingest_run(wh, source, name=name)[0].id


def evaluate(wh: Warehouse, run_id: int, qrels_id: int, names, **options):
    """(per-query frame, aggregate frame) for measure names."""
    measures = parse_measures(names)
    # the values are read from the engine's tables on the file's connection: held meanwhile
    with wh.session(), wh.backend.engine_connection([run_id], qrels_id) as duck:
        values = compute(duck, [run_id], qrels_id, measures, **options)
        aggregates = pd.DataFrame(
            [(a.run_id, a.measure.name, a.value, a.num_q) for a in values.aggregates()],
            columns=["run_id", "measure", "value", "num_q"],
        )
        return values.frame(), aggregates


def stored_values(
    wh: Warehouse, qrels, run, measures, name: str, **options
) -> dict[tuple[str, str], float]:
    """Store ``qrels`` and ``run`` (a file or frame) under new names made from ``name``,
    evaluate them through :meth:`Warehouse.evaluate`, and read back what the warehouse
    stored: {(label, query id or 'all'): value}.

    ``options``: ``relevance_level``, ``missing_queries``, and the evaluation options
    (``max_rank``, ``judged_only``).
    """
    level = options.pop("relevance_level", 1)
    policy = options.pop("missing_queries", "zero")
    qrels_id = store_qrels(wh, qrels, name=f"{name}-qrels")
    run_id = store_run(wh, run, name=f"{name}-run")
    with warnings.catch_warnings():  # generated runs may answer few of the queries
        warnings.simplefilter("ignore", RankhouseWarning)
        result = wh.evaluate(
            qrels_id,
            run_id,
            measures,
            relevance_level=level,
            missing_queries=policy,
            options=options or None,
            with_query_counts=False,
            allow_no_overlap=True,  # generated inputs may share no query
        )
    # the evaluations of this request only (the same content may have been stored before)
    params = {"ids": sorted({int(row["evaluation_id"]) for row in result.rows})}
    with wh.connect() as conn:
        means = conn.execute(
            "SELECT label, value FROM evaluations WHERE id = ANY(:ids)", params
        ).all()
        values = conn.execute(
            "SELECT e.label, v.query_id, v.value FROM evaluations AS e JOIN evaluation_values "
            "AS v ON v.evaluation_id = e.id WHERE e.id = ANY(:ids)",
            params,
        ).all()
    found = {(label, "all"): value for label, value in means}
    found |= {(label, query): value for label, query, value in values}
    return found


def assert_same_numbers(wh: Warehouse, file_twin: Warehouse, qrels, run, measures, **options):
    """On a server warehouse: every value it stores for ``qrels`` and ``run`` is identical
    (the same double, NaN where NaN) to what a DuckDB file stores for them. On a file: nothing
    (the file is the reference)."""
    if wh.dialect != "postgresql":
        return
    name = f"same{next(_SAME)}"
    ours = stored_values(wh, qrels, run, measures, name, **dict(options))
    theirs = stored_values(file_twin, qrels, run, measures, name, **dict(options))
    assert sorted(ours) == sorted(theirs)
    different = {
        key: (ours[key], theirs[key]) for key in ours if not identical(ours[key], theirs[key])
    }
    assert different == {}


def identical(a: float | None, b: float | None) -> bool:
    """The same double (bit for bit but for NaN payloads), or both NaN, or both NULL."""
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return struct.pack("<d", a) == struct.pack("<d", b)


_SAME = itertools.count()


@dataclass(frozen=True)
class Ranking:
    """How the engine ranks the judged documents: the file (``sorted``: ranking_sorted.sql,
    else ranking_per_query.sql) and, query by query, the sort/count threshold."""

    sorted: bool
    dense_from: int


#: The rankings for the tests: every query sorted by ranking_sorted.sql, and query by query
#: with the threshold at 0 (every query sorted), 3 (sorted and counted queries in one
#: evaluation: the collections below have up to 10 judged documents a query) and 16 (the
#: default: every query counted). The last is what the engine picks for those collections.
RANKINGS = [
    Ranking(True, engine.DENSE_FROM),
    Ranking(False, 0),
    Ranking(False, 3),
    Ranking(False, engine.DENSE_FROM),
]


@contextmanager
def ranking_path(ranking: Ranking) -> Iterator[None]:
    """Evaluate with the judged documents ranked as ``ranking`` says."""
    saved = engine.DENSE_FROM, engine.SORTED_FROM_SHARE
    # a share above 1 is never reached; a share of 0 always is
    engine.DENSE_FROM, engine.SORTED_FROM_SHARE = ranking.dense_from, 0 if ranking.sorted else 2
    try:
        yield
    finally:
        engine.DENSE_FROM, engine.SORTED_FROM_SHARE = saved


def read_trec_output(path: Path) -> list[tuple[str, str, str]]:
    """(measure, query or 'all', printed value) lines of a trec_eval output file."""
    rows = []
    for line in Path(path).read_text().splitlines():
        name, query, value = line.split("\t")
        rows.append((name.strip(), query, value))
    return rows


def trec_format(value: float) -> str:
    """trec_eval's '%6.4f' of a real value ('  -nan' for NaN)."""
    return "  -nan" if math.isnan(value) else f"{value:6.4f}"


QUERIES = ["q1", "q2", "q3", "q10"]
DOCS = [f"d{i}" for i in range(12)]


@st.composite
def collections(draw):
    """(qrels frame query_id, doc_id, grade; run frame query_id, doc_id, score): graded and
    negative grades, ties (scores are multiples of 0.5, exact in trec_eval 9's float32),
    unjudged documents, and queries missing on either side (q1 is always on both)."""
    judgments, rows = [], []
    for query in QUERIES:
        if draw(st.booleans()) or query == "q1":
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=10, unique=True))
            judgments += [(query, d, draw(st.integers(-1, 3))) for d in docs]
        if draw(st.booleans()) or query == "q1":
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True))
            rows += [(query, d, draw(st.integers(0, 8)) / 2) for d in docs]
    qrels = pd.DataFrame(judgments, columns=["query_id", "doc_id", "grade"])
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return qrels, run
