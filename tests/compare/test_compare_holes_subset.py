"""Holes in the judgments on a subset of the queries (``compare --queries``, ``queries=``): both
runs' mean Judged@k and both condensed values are the subset's, the threshold the same.

The data: q1..q8 judge a1..a4 relevant and n1..n4 not. The baseline ranks a1 n1 a2 n2 a3 n3 a4
n4 everywhere, all judged. ``hard`` puts 3 unjudged documents x1 x2 x3 first in q1 only, then
a1..a4 n1..n4; ``easy`` puts 2 (x1 x2) first in q3..q8, then a1..a4 n1..n4; elsewhere both rank
as the baseline does. The subset is q1 and q2 (the hard queries). By hand (the baseline's
Judged@k is 1 everywhere; the threshold 0.1):

* hard: Judged@5 0.4 in q1 (2 of 5), Judged@10 0.7 (7 of the top 10 of 11): over the subset
  0.7 and 0.85 (0.3 and 0.15 below: holes), over all eight queries 0.925 and 0.9625 (none);
* easy: Judged@5 0.6 and Judged@10 0.8 (8 of 10) in q3..q8: over the subset 1.0 (none), over
  all 0.7 and 0.85 (holes);
* condensed: a judged ranking a1..a4 n1..n4 has P@5 0.8 and nDCG@10 1.0, the baseline's own
  P@5 0.6 and nDCG@10 BASE_NDCG10. hard over the subset: P@5 (0.8 + 0.6) / 2 = 0.7 (0.625
  over all eight), nDCG@10 (1 + BASE_NDCG10) / 2; easy over all: P@5 (2 x 0.6 + 6 x 0.8) / 8
  = 0.75, nDCG@10 (2 BASE_NDCG10 + 6) / 8.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from cli_helpers import run_many

from rankhouse import Warehouse
from rankhouse.backends.base import store_of
from rankhouse.compare import comparison
from rankhouse.errors import RankhouseWarning
from rankhouse.judgments.holes import computed_judged_means, judged_means, stored_judged_means

ir_measures = pytest.importorskip("ir_measures")

QUERIES = [f"q{i}" for i in range(1, 9)]
SUBSET = ["q1", "q2"]
UNJUDGED = {"hard": {"q1": 3}, "easy": {q: 2 for q in QUERIES[2:]}}
MEASURES = ["P@5", "nDCG@10"]
#: nDCG@10 of a1 n1 a2 n2 a3 n3 a4 n4 (binary gains at ranks 1, 3, 5, 7) by its formula.
BASE_NDCG10 = sum(1 / math.log2(r + 1) for r in (1, 3, 5, 7)) / sum(
    1 / math.log2(r + 1) for r in (1, 2, 3, 4)
)
HARD_WARNINGS = [
    "holes in the judgments: P@5: Judged@5 of hard 0.700, of the baseline base 1.000 (more "
    "than 0.1 below); condensed (judged-only) P@5: hard 0.7000, base 0.6000",
    "holes in the judgments: nDCG@10: Judged@10 of hard 0.850, of the baseline base 1.000 "
    "(more than 0.1 below); condensed (judged-only) nDCG@10: hard "
    f"{(1 + BASE_NDCG10) / 2:.4f}, base {BASE_NDCG10:.4f}",
]
EASY_WARNINGS = [
    "holes in the judgments: P@5: Judged@5 of easy 0.700, of the baseline base 1.000 (more "
    "than 0.1 below); condensed (judged-only) P@5: easy 0.7500, base 0.6000",
    "holes in the judgments: nDCG@10: Judged@10 of easy 0.850, of the baseline base 1.000 "
    "(more than 0.1 below); condensed (judged-only) nDCG@10: easy "
    f"{(2 * BASE_NDCG10 + 6) / 8:.4f}, base {BASE_NDCG10:.4f}",
]


def _qrels() -> list[tuple[str, str, int]]:
    return [
        (q, f"{kind}{i}", int(kind == "a")) for q in QUERIES for kind in "an" for i in range(1, 5)
    ]


def _runs() -> dict[str, list[tuple[str, str, float]]]:
    relevant, other = [f"a{i}" for i in range(1, 5)], [f"n{i}" for i in range(1, 5)]
    interleaved = [d for pair in zip(relevant, other, strict=True) for d in pair]
    runs: dict[str, list[tuple[str, str, float]]] = {"base": [], "hard": [], "easy": []}
    for q in QUERIES:
        for name, rows in runs.items():
            nx = UNJUDGED.get(name, {}).get(q, 0)
            ranked = [f"x{i}" for i in range(1, nx + 1)] + relevant + other if nx else interleaved
            rows += [(q, d, float(20 - r)) for r, d in enumerate(ranked, 1)]
    return runs


def _write(root: Path) -> Path:
    (root / "q.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in _qrels()))
    for name, rows in _runs().items():
        lines = [f"{q} Q0 {d} {r} {s} {name}\n" for r, (q, d, s) in enumerate(rows, 1)]
        (root / f"{name}.txt").write_text("".join(lines))
    (root / "hard-queries.txt").write_text("# the hard queries\nq1\nq2\n")
    return root


def _ingested(wh: Warehouse, root: Path) -> Warehouse:
    _write(root)
    wh.ingest_qrels(root / "q.txt", name="q")
    for name in _runs():
        wh.ingest_run(root / f"{name}.txt", name=name)
    return wh


def _reference(measure, runs: dict[str, list], queries: list[str]) -> dict[str, float]:
    """ir_measures' mean of ``measure`` per run over ``queries``."""
    qrels = [ir_measures.Qrel(q, d, g) for q, d, g in _qrels() if q in queries]
    found = {}
    for name, rows in runs.items():
        run = [ir_measures.ScoredDoc(q, d, s) for q, d, s in rows if q in queries]
        found[name] = ir_measures.calc_aggregate([measure], qrels, run)[measure]
    return found


def _judged_only(runs: dict[str, list]) -> dict[str, list]:
    """The runs without their unjudged documents (condensed lists, trec_eval -J)."""
    judged = {(q, d) for q, d, _ in _qrels()}
    return {name: [row for row in rows if row[:2] in judged] for name, rows in runs.items()}


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    root = _write(tmp_path_factory.mktemp("subset"))
    db = ["--db", str(root / "w.duckdb")]
    args = [*db, "compare", "q.txt", "base.txt", "hard.txt", "easy.txt", "-m", ",".join(MEASURES)]
    commands = {
        "all": [*args, "-b", "base"],
        "subset": [*args, "-b", "base", "--queries", "hard-queries.txt"],
        "subset 0.35": [*args, "-b", "base", "--queries", "hard-queries.txt"],
        "subset without a baseline": [*args, "--queries", "hard-queries.txt"],
    }
    commands["subset 0.35"] += ["--max-judged-drop", "0.35"]
    return dict(zip(commands, run_many(list(commands.values()), cwd=root, workers=1), strict=True))


def _warnings(result) -> list[str]:
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    return [line.removeprefix("Warning: ") for line in lines if line.startswith("Warning: holes")]


def test_the_warning_follows_the_queries_compared(compared):
    # over all eight queries easy has holes and hard has none; over q1 and q2, the other way
    assert _warnings(compared["all"]) == EASY_WARNINGS
    assert _warnings(compared["subset"]) == HARD_WARNINGS
    # the same threshold: Judged@5 lies 0.3 below, Judged@10 0.15
    assert _warnings(compared["subset 0.35"]) == []
    assert _warnings(compared["subset without a baseline"]) == []
    assert compared["subset 0.35"].stdout == compared["subset"].stdout  # a warning, no more


def test_the_subsets_values_are_ir_measures(any_warehouse, tmp_path):
    wh = _ingested(any_warehouse, tmp_path)
    with pytest.warns(RankhouseWarning) as caught:
        found = comparison(wh, "q", ["base", "hard", "easy"], MEASURES, baseline=0, queries=SUBSET)
    assert [str(w.message) for w in caught] == HARD_WARNINGS
    rows = {(row["run"], row["measure"]): row for row in found.holes}
    assert [(run, measure) for (run, measure), row in rows.items() if row["holes"]] == [
        ("hard", "P@5"),
        ("hard", "nDCG@10"),
    ]
    runs = _runs()
    judged_only = _judged_only(runs)
    for measure, k in (("P@5", 5), ("nDCG@10", 10)):
        judged = _reference(ir_measures.Judged @ k, runs, SUBSET)
        condensed = _reference(ir_measures.parse_measure(measure), judged_only, SUBSET)
        for run in ("hard", "easy"):  # condensed: of every run, where some run has holes
            row = rows[run, measure]
            assert row["k"] == k
            assert row["run_judged"] == pytest.approx(judged[run], abs=1e-12)
            assert row["baseline_judged"] == pytest.approx(judged["base"], abs=1e-12)
            assert row["run_condensed"] == pytest.approx(condensed[run], abs=1e-12)
            assert row["baseline_condensed"] == pytest.approx(condensed["base"], abs=1e-12)
    by_hand = {("hard", 5): 0.7, ("hard", 10): 0.85, ("easy", 5): 1.0, ("easy", 10): 1.0}
    for (run, k), value in by_hand.items():
        assert rows[run, {5: "P@5", 10: "nDCG@10"}[k]]["run_judged"] == pytest.approx(value)
    assert rows["hard", "P@5"]["run_condensed"] == pytest.approx(0.7)  # 0.625 over all eight


def test_a_subsets_stored_mean_is_the_computed_one_to_the_last_bit(any_warehouse, tmp_path):
    wh = _ingested(any_warehouse, tmp_path)
    wh.evaluate("q", list(_runs()), MEASURES)
    store = store_of(wh)
    ids = [1, 2, 3]  # base, hard, easy
    for subset in (SUBSET, ["q1", "q4", "q7", "q9"], ["q8", "q1", "q3"], ["q0"]):
        stored = stored_judged_means(store, 1, ids, [5, 10], set(subset))
        assert stored == computed_judged_means(store, 1, ids, [5, 10], set(subset))
        for (k, run_id), mean in stored.items():  # by hand: added in query-id byte order
            rows = _runs()[["base", "hard", "easy"][run_id - 1]]
            shares = []
            for q in sorted({q for q, _, _ in rows} & set(subset)):
                top = [d for r, d, _ in rows if r == q][:k]
                shares.append(sum(not d.startswith("x") for d in top) / len(top))
            total = 0.0
            for share in shares:
                total += share
            assert mean == (total / len(shares) if shares else 0.0)
    # evaluations stored before the shares were: computed on the subset, the same means
    stored = judged_means(store, 1, ids, [5, 10], set(SUBSET))
    with store.transaction() as conn:
        conn.execute("DELETE FROM evaluation_judged")
    assert stored_judged_means(store, 1, ids, [5, 10], set(SUBSET)) == {}
    assert judged_means(store, 1, ids, [5, 10], set(SUBSET)) == stored
    assert (stored[5, 2], stored[10, 2]) == pytest.approx((0.7, 0.85), abs=1e-15)
