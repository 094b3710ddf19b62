"""``Warehouse.pool`` / ``rankhouse.judgments.pools.pool``: the depth-k pool against trectools'
pooling, the priorities (RRF) and the budget against hand computations, stored runs against
the same runs as files, and the errors."""

from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import pytest

from rankhouse import Warehouse
from rankhouse.errors import NotFoundError, RankhouseError
from rankhouse.judgments.pools import PoolOptions, pool

trectools = pytest.importorskip("trectools")


def _write_run(path: Path, rows: list[tuple[str, str, float]], tag: str) -> Path:
    """A TREC run file of (query, doc, score) rows, by query and score descending (the rank
    column is the line's position in its query)."""
    lines, rank, last = [], 0, None
    for q, d, s in sorted(rows, key=lambda row: (row[0], -row[2])):
        rank = rank + 1 if q == last else 1
        last = q
        lines.append(f"{q} Q0 {d} {rank} {s} {tag}\n")
    path.write_text("".join(lines))
    return path


def _random_runs(seed: int, *, ties: bool) -> list[list[tuple[str, str, float]]]:
    """Five runs over eight queries; scores from six values (many ties) or all distinct."""
    rng = random.Random(seed)
    runs = []
    for _ in range(5):
        rows = []
        for query in range(101, 109):
            docs = rng.sample(range(40), rng.randint(3, 25))
            for doc in docs:
                score = rng.randint(1, 6) if ties else rng.random()
                rows.append((str(query), f"D{doc:03d}", float(score)))
        runs.append(rows)
    return runs


def _ours(found) -> dict[str, set[str]]:
    pools: dict[str, set[str]] = {}
    for query, doc, *_ in found.documents:
        pools.setdefault(query, set()).add(doc)
    return pools


def _trectools_pool(paths: list[Path], depth: int) -> dict[str, set[str]]:
    made = trectools.TrecPoolMaker().make_pool_from_files([str(p) for p in paths], topX=depth)
    return {str(q): set(docs) for q, docs in made.pool.items() if docs}


def _complement(doc: str) -> str:
    """D007 -> D992: ascending order of the complements is descending order of the ids."""
    return f"D{999 - int(doc[1:]):03d}"


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("depth", [1, 5, 10])
def test_depth_pool_equals_trectools_on_runs_with_ties(tmp_path, seed, depth):
    """trectools breaks a tie by doc id ascending, trec_eval (and rankhouse) descending: the
    same runs with each doc id replaced by its complement give trectools' pool in rankhouse's
    order, which must be rankhouse's pool set by set."""
    runs = _random_runs(seed, ties=True)
    ours_files = [_write_run(tmp_path / f"r{i}.txt", rows, f"s{i}") for i, rows in enumerate(runs)]
    theirs_files = [
        _write_run(tmp_path / f"c{i}.txt", [(q, _complement(d), s) for q, d, s in rows], f"s{i}")
        for i, rows in enumerate(runs)
    ]
    theirs = {
        q: {_complement(d) for d in docs}
        for q, docs in _trectools_pool(theirs_files, depth).items()
    }
    found = pool(None, ours_files, PoolOptions(depth))
    assert _ours(found) == theirs
    assert {q: pooled for q, pooled, *_ in found.sizes} == {q: len(d) for q, d in theirs.items()}
    if depth == 5:  # the ties matter: on the ids as they are, trectools breaks them otherwise
        assert _trectools_pool(ours_files, depth) != _ours(found)


def test_depth_pool_equals_trectools_without_ties_and_leaves_out_the_judged(tmp_path):
    runs = _random_runs(7, ties=False)
    files = [_write_run(tmp_path / f"r{i}.txt", rows, f"s{i}") for i, rows in enumerate(runs)]
    theirs = _trectools_pool(files, 10)
    assert _ours(pool(None, files, PoolOptions(10))) == theirs
    # judge every third pooled document of each query (and one document no run retrieved)
    judged = {(q, d) for q, docs in theirs.items() for d in sorted(docs)[::3]} | {("101", "X")}
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {len(d) % 3 - 1}\n" for q, d in sorted(judged)))
    expected = {q: {d for d in docs if (q, d) not in judged} for q, docs in theirs.items()}
    found = pool(None, files, PoolOptions(10, qrels=str(qrels)))
    assert _ours(found) == {q: docs for q, docs in expected.items() if docs}
    for query, pooled, judged_here, unjudged, selected in found.sizes:
        assert (pooled, unjudged, selected) == (
            len(theirs[query]),
            len(expected[query]),
            len(expected[query]),
        )
        assert judged_here == pooled - unjudged


# --- priorities and budget, by hand -------------------------------------------------------------


@pytest.fixture
def three_runs(tmp_path) -> list[Path]:
    """Query 1 and 2 of three small runs (A ranks d2 above d3 by the doc-id-descending tie)."""
    a = [("1", "d1", 3.0), ("1", "d2", 2.0), ("1", "d3", 2.0), ("1", "d4", 1.0), ("2", "e1", 1.0)]
    b = [("1", "d4", 9.0), ("1", "d5", 8.0), ("1", "d1", 7.0), ("2", "e2", 5.0), ("2", "e1", 4.0)]
    c = [("1", "d5", 0.9), ("1", "d4", 0.8), ("1", "d6", 0.7), ("1", "d2", 0.6)]
    return [
        _write_run(tmp_path / f"{t}.txt", rows, t) for t, rows in zip("ABC", [a, b, c], strict=True)
    ]


def _rrf(*ranks: int, k: int = 60) -> float:
    return float(sum(Fraction(1, k + r) for r in ranks))


def test_rrf_priorities_match_a_hand_computation(three_runs):
    # ranks: A: d1 1, d3 2, d2 3, d4 4 | e1 1; B: d4 1, d5 2, d1 3 | e2 1, e1 2;
    #        C: d5 1, d4 2, d6 3, d2 4.  Depth 2 pools d1 d3 (A), d4 d5 (B), d5 d4 (C); e1 e2.
    found = pool(None, three_runs, PoolOptions(2, order="rrf"))
    expected_rrf = {
        ("1", "d4"): _rrf(4, 1, 2),
        ("1", "d5"): _rrf(2, 1),
        ("1", "d1"): _rrf(1, 3),
        ("1", "d3"): _rrf(2),
        ("2", "e1"): _rrf(1, 2),
        ("2", "e2"): _rrf(1),
    }
    got = {(q, d): rrf for q, d, _, _, rrf, _ in found.documents}
    assert got == pytest.approx(expected_rrf, abs=1e-15)
    # d4 1/64+1/61+1/62 > d5 1/62+1/61 > d1 1/61+1/63 > d3 1/62; e1 1/61+1/62 > e2 1/61
    order = [(q, d, p) for q, d, p, *_ in found.documents]
    assert order == [
        ("1", "d4", 1), ("1", "d5", 2), ("1", "d1", 3), ("1", "d3", 4),
        ("2", "e1", 1), ("2", "e2", 2),
    ]  # fmt: skip
    runs = {(q, d): r for q, d, *_, r in found.documents}
    assert runs[("1", "d4")] == ["B", "C"] and runs[("1", "d5")] == ["B", "C"]
    assert runs[("2", "e1")] == ["A", "B"]  # rank 1 in A, rank 2 in B: both within the depth
    assert runs[("1", "d1")] == ["A"]  # rank 3 in B is beyond it (but counts in its RRF)
    found_k = pool(None, three_runs, PoolOptions(2, order="rrf", rrf_k=0))
    assert dict(((q, d), r) for q, d, _, _, r, _ in found_k.documents)[("1", "d3")] == 0.5


def test_depth_order_by_best_rank_then_runs_then_doc_id(three_runs):
    found = pool(None, three_runs, PoolOptions(2))
    # best ranks: d1 1 (A), d4 1 (B), d5 1 (C); d4 and d5 in two runs each, d1 in one; d3 2
    order = [(q, d, p, best) for q, d, p, best, *_ in found.documents]
    assert order == [
        ("1", "d4", 1, 1), ("1", "d5", 2, 1), ("1", "d1", 3, 1), ("1", "d3", 4, 2),
        ("2", "e1", 1, 1), ("2", "e2", 2, 1),
    ]  # fmt: skip


def test_budget_is_spread_over_the_queries_by_priority(three_runs, tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 d4 1\n")
    # left: query 1 d5 d1 d3 (priorities 1-3), query 2 e1 e2 (1-2); a budget of 3 takes each
    # query's first (d5, e1), then the first second by the order (d1: best rank 1, one run;
    # e2: best rank 1, one run; a tie, broken by query id)
    found = pool(None, three_runs, PoolOptions(2, qrels=str(qrels), budget=3))
    assert [(q, d) for q, d, *_ in found.documents] == [("1", "d5"), ("1", "d1"), ("2", "e1")]
    assert [(q, s) for q, *_, s in found.sizes] == [("1", 2), ("2", 1)]
    assert [row[:4] for row in found.sizes] == [("1", 4, 1, 3), ("2", 2, 0, 2)]
    per_query = pool(None, three_runs, PoolOptions(2, qrels=str(qrels), budget_per_query=1))
    assert [(q, d) for q, d, *_ in per_query.documents] == [("1", "d5"), ("2", "e1")]
    both = pool(None, three_runs, PoolOptions(2, budget_per_query=1, budget=1))
    assert [(q, d) for q, d, *_ in both.documents] == [("1", "d4")]
    assert pool(None, three_runs, PoolOptions(2, budget=0)).documents == []


# --- stored runs, errors -------------------------------------------------------------------------


def test_stored_runs_pool_as_their_files(any_warehouse, three_runs, tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 d4 1\n2 0 e2 0\n")
    for path in three_runs:
        any_warehouse.ingest_run(path)
    any_warehouse.ingest_qrels(qrels, name="judged")
    stored = any_warehouse.pool(["A", "B", "C"], depth=2, qrels="judged", order="rrf")
    files = pool(None, three_runs, PoolOptions(2, qrels=str(qrels), order="rrf"))
    assert stored.documents == files.documents and stored.sizes == files.sizes
    mixed = any_warehouse.pool(["A", three_runs[1], "C", "A"], depth=2, qrels=str(qrels))
    assert mixed.runs == ["A", "B", "C"]
    assert sorted(mixed.documents) == sorted(
        pool(None, three_runs, PoolOptions(2, qrels=str(qrels))).documents
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (PoolOptions(0), "depth must be at least 1"),
        (PoolOptions(2, order="bm25"), "order must be one of depth, rrf"),
        (PoolOptions(2, budget=-1), "budget must be at least 0"),
        (PoolOptions(2, rrf_k=-1.0), "rrf_k must be a number >= 0"),
    ],
)
def test_bad_options_are_refused(three_runs, options, message):
    with pytest.raises(RankhouseError, match=message):
        pool(None, three_runs, options)


def test_a_run_neither_stored_nor_a_file_is_named(tmp_path, three_runs):
    with Warehouse(tmp_path / "w.duckdb") as wh, pytest.raises(NotFoundError, match="nosuch"):
        wh.pool([three_runs[0], "nosuch"], depth=2)
    with pytest.raises(NotFoundError, match="needs a warehouse"):
        pool(None, ["nosuch"], PoolOptions(2))


def test_a_pruned_run_is_refused_with_its_way_back(tmp_path, three_runs):
    changed = tmp_path / "A2.txt"
    changed.write_text(three_runs[0].read_text().replace("3.0", "3.5"))
    with Warehouse(tmp_path / "w.duckdb") as wh:
        wh.ingest_run(three_runs[0], name="old")
        wh.ingest_run(changed, name="new")
        wh.prune(keep_last=1, system="A")
        with pytest.raises(NotFoundError, match="run 'old' were pruned .* a pool cannot be"):
            wh.pool(["new", "old"], depth=2)
        assert wh.pool(["new"], depth=1).documents[0][:2] == ("1", "d1")


def test_a_dataframe_pools_as_its_file(three_runs):
    pandas = pytest.importorskip("pandas")
    frame = pandas.read_csv(
        three_runs[1], sep=" ", header=None, names=["qid", "q0", "docno", "rank", "score", "tag"]
    )
    frame["qid"] = frame["qid"].astype(str)
    from_frame = pool(None, [three_runs[0], frame, three_runs[2]], PoolOptions(2, order="rrf"))
    assert from_frame.documents == pool(None, three_runs, PoolOptions(2, order="rrf")).documents
