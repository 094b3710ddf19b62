"""Holes in the judgments in ``eval``, ``compare`` and the report (issue 38 item 5): a run whose
top k is much less judged than the baseline's (the first run, for ``eval``) is warned of, with
both mean Judged@k (k the measure's cutoff, 10 without one) and both condensed values.

The data: 4 queries judge a1..a4 relevant and n1..n4 not. The baseline ranks a1 n1 a2 n2 a3 n3
a4 n4, all judged. The candidate ranks nx unjudged documents x1.. first (nx = 3, 2, 1, 0 in
q1..q4), then a1..a4, then n1..n4. By hand:

* Judged@5: (5 - nx) / 5 = 0.4, 0.6, 0.8, 1.0, mean 0.7 (the baseline's 1.0: 0.3 below);
* Judged@10: the top min(10, nx + 8): 7/10, 8/10, 8/9, 8/8, mean 0.8472 (0.1528 below);
* P@5 condensed: the candidate's judged ranking starts a1..a4 n1: 0.8 in every query; the
  baseline's is its own ranking, 3/5 = 0.6.
"""

from __future__ import annotations

import math
import warnings

import pytest
from cli_helpers import finish, run_many, start

from rankhouse import Warehouse
from rankhouse.compare import compare
from rankhouse.errors import RankhouseError, RankhouseWarning

NX = {"q1": 3, "q2": 2, "q3": 1, "q4": 0}
JUDGED_5 = sum((5 - nx) / 5 for nx in NX.values()) / 4
JUDGED_10 = sum((min(10, nx + 8) - nx) / min(10, nx + 8) for nx in NX.values()) / 4
#: nDCG@10 of a1 n1 a2 n2 a3 n3 a4 n4 (binary gains at ranks 1, 3, 5, 7) by its formula; the
#: candidate's judged ranking puts a1..a4 first: 1.0.
BASE_NDCG10 = sum(1 / math.log2(r + 1) for r in (1, 3, 5, 7)) / sum(
    1 / math.log2(r + 1) for r in (1, 2, 3, 4)
)
P5_WARNING = (
    f"holes in the judgments: P@5: Judged@5 of cand {JUDGED_5:.3f}, of the baseline base "
    "1.000 (more than 0.1 below); condensed (judged-only) P@5: cand 0.8000, base 0.6000"
)
NDCG10_WARNING = (
    f"holes in the judgments: nDCG@10: Judged@10 of cand {JUDGED_10:.3f}, of the baseline base "
    "1.000 (more than 0.1 below); condensed (judged-only) nDCG@10: cand 1.0000, base "
    f"{BASE_NDCG10:.4f}"
)


def _files(root) -> None:
    judged = [f"a{i}" for i in range(1, 5)], [f"n{i}" for i in range(1, 5)]
    qrels, base, cand = [], [], []
    for q, nx in NX.items():
        qrels += [f"{q} 0 {d} 1" for d in judged[0]] + [f"{q} 0 {d} 0" for d in judged[1]]
        ranked = [d for pair in zip(*judged, strict=True) for d in pair]
        base += [f"{q} Q0 {d} {r} {20 - r} base" for r, d in enumerate(ranked, 1)]
        ranked = [f"x{i}" for i in range(1, nx + 1)] + judged[0] + judged[1]
        cand += [f"{q} Q0 {d} {r} {20 - r} cand" for r, d in enumerate(ranked, 1)]
    for name, lines in (("q.txt", qrels), ("base.txt", base), ("cand.txt", cand)):
        (root / name).write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def warned(tmp_path_factory):
    root = tmp_path_factory.mktemp("judged")
    _files(root)
    db = ["--db", str(root / "w.duckdb")]
    measures = ["-m", "P@5,nDCG@10"]
    first = finish(start([*db, "eval", "q.txt", "base.txt", "cand.txt", *measures], cwd=root))
    compare_args = [*db, "compare", "q", "base", "cand", *measures, "-b", "base"]
    commands = {
        "eval reversed": [*db, "eval", "q", "cand", "base", *measures, "--recompute"],
        "eval stored": [*db, "eval", "q", "base", "cand", *measures],
        "compare": compare_args,
        "compare 0.2": [*compare_args, "--max-judged-drop", "0.2"],
        "compare 0.35": [*compare_args, "--max-judged-drop", "0.35"],
        "read-only": [*db, "--read-only", *compare_args[2:]],
        "report": [*db, "report", "-o", "r.html", "--baseline", "base", "-m", "P@5"],
    }
    results = run_many(list(commands.values()), cwd=root, workers=1)  # one writer at a time
    return root, {"eval": first, **dict(zip(commands, results, strict=True))}


def _warnings(result) -> list[str]:
    assert result.exit_code == 0, result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("Warning: holes")]


def test_eval_warns_of_each_run_against_the_first(warned):
    _, done = warned
    assert _warnings(done["eval"]) == [
        "Warning: " + line.replace("the baseline base", "the first run base")
        for line in (P5_WARNING, NDCG10_WARNING)
    ]
    assert _warnings(done["eval reversed"]) == []  # the first run is the less judged one
    # values read from the store: no check (a read stays a read; compare -b checks each time)
    assert "reused from storage" in done["eval stored"].stderr
    assert _warnings(done["eval stored"]) == []


def test_compare_warns_per_measure_at_its_own_cutoff_and_threshold(warned):
    _, done = warned
    assert _warnings(done["compare"]) == ["Warning: " + P5_WARNING, "Warning: " + NDCG10_WARNING]
    # 0.2: Judged@5 lies 0.3 below (warned), Judged@10 0.153 below (not); 0.35: neither
    assert _warnings(done["compare 0.2"]) == ["Warning: " + P5_WARNING.replace("0.1 ", "0.2 ")]
    assert _warnings(done["compare 0.35"]) == []
    # a warehouse opened read-only checks as well: the stored shares read, the condensed
    # values computed in the engine's own tables (nothing written)
    assert _warnings(done["read-only"]) == _warnings(done["compare"])
    assert done["read-only"].stdout == done["compare"].stdout


def test_the_report_shows_the_warning_beside_the_comparison(warned):
    root, done = warned
    assert done["report"].exit_code == 0, done["report"].stderr
    page = (root / "r.html").read_text()
    assert f'<p class="warning">Warning: {P5_WARNING}</p>' in page
    assert page.index(P5_WARNING) > page.index('-comparison">Comparison</h3>')


def test_the_python_api_warns_and_keeps_the_rows(warned):
    root, _ = warned
    with Warehouse(root / "w.duckdb") as wh:
        with pytest.warns(RankhouseWarning, match="Judged@5 of cand 0.700"):
            compare(wh, "q", ["base", "cand"], ["P@5"], baseline="base")
        with pytest.raises(RankhouseError, match="max_judged_drop must lie between 0 and 1"):
            compare(wh, "q", ["base", "cand"], ["P@5"], baseline="base", max_judged_drop=1.5)
        with warnings.catch_warnings():  # the Warehouse's keyword: Judged@5 lies 0.3 below
            warnings.simplefilter("error", RankhouseWarning)
            frame = wh.compare(
                "q", ["base", "cand"], ["P@5"], baseline="base", max_judged_drop=0.35
            )
        assert list(frame["run"]) == ["base", "cand"]
        with pytest.warns(RankhouseWarning, match="Judged@5 of cand 0.700"):
            wh.compare("q", ["base", "cand"], ["P@5"], baseline="base", max_judged_drop=0.2)


def test_a_server_warehouse_warns_the_same(postgres_url, tmp_path):
    _files(tmp_path)
    with Warehouse(postgres_url) as wh, pytest.warns(RankhouseWarning) as caught:
        wh.ingest_qrels(tmp_path / "q.txt", name="q")
        for run in ("base", "cand"):
            wh.ingest_run(tmp_path / f"{run}.txt", name=run)
        compare(wh, "q", ["base", "cand"], ["P@5", "nDCG@10"], baseline="base")
    assert [str(w.message) for w in caught] == [P5_WARNING, NDCG10_WARNING]
