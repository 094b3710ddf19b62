"""Verdicts that see holes (issue 38 item 5): the gate reads both runs' judged share of their
top k, calls a drop where the run is much less judged than its baseline "unsettled", shows the
condensed (judged-only) value, and writes the unjudged documents as a pool to judge.

The data: 8 queries; each has relevant documents a1..a5 and b1..b5 and non-relevant n1..n10 in
the full qrels; the holed qrels lack the b documents. The baseline ranks n1, a1..a5, then n2..n10;
the candidate ranks nb (3, 4 or 5) b documents first, then a1..a5, then n documents. Under the
holed qrels the candidate drops (the b documents count as non-relevant); under the full qrels it
is better: it found relevant documents nobody judged. A slipping candidate finds the b documents
too but puts one more judged non-relevant document (n2) before a1..a5: its condensed nDCG@10
drops a little, and the gate's margin decides whether that is unsettled or regressed.
"""

from __future__ import annotations

import json
import math
import re

import pytest
import pytrec_eval
from cli_helpers import finish, start

QUERIES = [f"q{i}" for i in range(1, 9)]


def _nb(query: str) -> int:
    return 3 + int(query[1:]) % 3


def _qrels(with_b: bool) -> str:
    lines = []
    for q in QUERIES:
        lines += [f"{q} 0 a{i} 1" for i in range(1, 6)]
        lines += [f"{q} 0 b{i} 1" for i in range(1, 6)] if with_b else []
        lines += [f"{q} 0 n{i} 0" for i in range(1, 11)]
    return "\n".join(lines) + "\n"


def _ranking(query: str, kind: str) -> list[str]:
    a = [f"a{i}" for i in range(1, 6)]
    n = [f"n{i}" for i in range(1, 11)]
    if kind == "base":
        return n[:1] + a + n[1:]
    if kind == "same":  # the baseline with its non-relevant tail reordered: nothing changed
        return n[:1] + a + n[1:][::-1]
    b = [f"b{i}" for i in range(1, _nb(query) + 1)]
    if kind == "slip":  # b first, then the baseline's judged order with n2 moved up one place
        return b + n[:2] + a + n[2:]
    if kind == "worse":  # b first, then every n before the a documents in odd queries
        return b + (n + a if int(query[1:]) % 2 else n[:1] + a + n[1:])
    return b + a + n


def _run(kind: str, tag: str) -> str:
    lines = []
    for q in QUERIES:
        docs = _ranking(q, kind)
        lines += [f"{q} Q0 {d} {r} {100 - r} {tag}" for r, d in enumerate(docs, 1)]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    """One warehouse; the candidate and the unchanged run gated against the baseline."""
    root = tmp_path_factory.mktemp("holes")
    (root / "holed.txt").write_text(_qrels(False))
    (root / "base.txt").write_text(_run("base", "base"))
    (root / "cand.txt").write_text(_run("cand", "cand"))
    (root / "same.txt").write_text(_run("same", "same"))
    db = root / "wh.duckdb"
    first = finish(start(["--db", db, "ingest", "run", "base.txt"], cwd=root))
    assert first.exit_code == 0, first.stderr
    gate = ["--db", db, "regress", "--baseline", "base", "--qrels", "holed.txt"]
    gate += ["-m", "nDCG@10:0.01"]
    cand = finish(start([*gate[:3], "cand.txt", *gate[3:], "--pool-out", "pool.txt"], cwd=root))
    same = finish(start([*gate[:3], "same.txt", *gate[3:], "--format", "json"], cwd=root))
    (root / "worse.txt").write_text(_run("worse", "worse"))
    worse = finish(start([*gate[:3], "worse.txt", *gate[3:]], cwd=root))
    return root, cand, same, worse


def test_a_run_with_unjudged_relevant_documents_is_unsettled_not_regressed(gated):
    _, cand, *_ = gated
    assert cand.exit_code == 3, cand.stderr  # the undecided exit, not 1 (regressed)
    assert "UNSETTLED: holes in the judgments: nDCG@10 of cand" in cand.stderr
    # Judged@10 by hand: the candidate's top 10 holds nb unjudged b documents (3, 4 or 5:
    # queries 3 and 6 have 3, 1 4 7 have 4, 2 5 8 have 5), so its mean is 1 - 33/80
    run_judged = 1 - sum(_nb(q) for q in QUERIES) / 80
    shown = re.search(r"Judged@10 of the run ([0-9.]+), of the baseline ([0-9.]+)", cand.stderr)
    assert float(shown[1]) == pytest.approx(run_judged, abs=6e-4)  # printed to 3 decimals
    assert float(shown[2]) == 1.0


def test_the_condensed_value_is_pytrec_evals_on_the_judged_documents(gated):
    _, cand, *_ = gated
    holed = {}
    for line in _qrels(False).splitlines():
        q, _, d, g = line.split()
        holed.setdefault(q, {})[d] = int(g)
    evaluator = pytrec_eval.RelevanceEvaluator(holed, {"ndcg_cut.10"})

    def condensed(kind: str) -> float:
        run = {
            q: {d: float(100 - r) for r, d in enumerate(_ranking(q, kind), 1) if d in holed[q]}
            for q in QUERIES
        }
        values = evaluator.evaluate(run)
        return sum(v["ndcg_cut_10"] for v in values.values()) / len(values)

    shown = f"run {condensed('cand'):.4f}, baseline {condensed('base'):.4f}"
    assert f"condensed (judged-only) nDCG@10: {shown}" in cand.stderr


def test_an_unchanged_run_has_no_holes_warning(gated):
    _, _, same, *_ = gated
    assert same.exit_code == 0, same.stderr
    assert "holes" not in same.stderr
    assert json.loads(same.stdout)["outcome"] == "passed"


def test_pool_out_holds_the_unjudged_top_k_documents(gated):
    root, *_ = gated
    expected = "".join(
        f"{q} b{i}\n" for q in sorted(QUERIES) for i in range(1, _nb(q) + 1)
    )  # the baseline's top 10 is all judged; the candidate's b documents are not
    assert (root / "pool.txt").read_text() == expected


def _condensed_shown(done) -> tuple[float, float]:
    shown = re.search(
        r"condensed \(judged-only\) nDCG@10: run ([0-9.]+), baseline ([0-9.]+)", done.stderr
    )
    return float(shown[1]), float(shown[2])


def test_a_drop_the_judged_documents_show_too_is_regressed(gated):
    """Four queries of eight rank every judged non-relevant document above the relevant
    ones: the judged documents alone show the drop, so holes or not the run regressed."""
    *_, worse = gated
    run, base = _condensed_shown(worse)
    assert run < base - 0.3
    assert worse.exit_code == 1, worse.stderr
    assert "holes in the judgments: nDCG@10" in worse.stderr
    assert "UNSETTLED" not in worse.stderr


def test_the_markdown_report_says_unsettled(gated):
    root, *_ = gated
    gate = ["--db", root / "wh.duckdb", "regress", "cand.txt", "--baseline", "base"]
    done = finish(
        start([*gate, "--qrels", "holed.txt", "-m", "nDCG@10:0.01", "--markdown", "-"], cwd=root)
    )
    assert done.exit_code == 3, done.stderr
    assert "UNSETTLED (holes in the judgments: judge them before calling it)" in done.stdout


def _dcg(ranks) -> float:
    return sum(1 / math.log2(rank + 1) for rank in ranks)


@pytest.fixture(scope="module")
def slipped(gated):
    """The slipping candidate gated with margins on either side of its condensed drop."""
    root = gated[0]
    (root / "slip.txt").write_text(_run("slip", "slip"))
    gate = ["--db", root / "wh.duckdb", "regress", "slip.txt", "--baseline", "base"]
    gate += ["--qrels", "holed.txt"]
    margins = ("0.15", "0.05", "20%", "10%")
    return {m: finish(start([*gate, "-m", f"nDCG@10:{m}"], cwd=root)) for m in margins}


# By hand, on the holed qrels (a1..a5 of grade 1, every n of grade 0; trec_eval's linear gain):
# the ideal DCG@10 is that of ranks 1-5. Condensed, the baseline holds a1..a5 at ranks 2-6, the
# slipping candidate at ranks 3-7, in every query: a drop of (1/log2 3 - 1/log2 8) / IDCG.
IDEAL = _dcg(range(1, 6))
BASE_NDCG = _dcg(range(2, 7)) / IDEAL  # the baseline's nDCG@10, condensed or not
SLIP_DROP = (_dcg([2]) - _dcg([7])) / IDEAL


def test_the_slipping_candidates_condensed_drop_is_worked_out_by_hand(slipped):
    assert 0.10 < SLIP_DROP < 0.11  # 0.1009: between the margins tried below
    run, base = _condensed_shown(slipped["0.15"])
    assert base == pytest.approx(BASE_NDCG, abs=6e-5)  # printed to 4 decimals
    assert run == pytest.approx(BASE_NDCG - SLIP_DROP, abs=6e-5)


@pytest.mark.parametrize(
    ("margin", "held", "exit_code"),
    [
        ("0.15", 0.15, 3),  # the condensed drop 0.1009 is within the margin: unsettled
        ("0.05", 0.05, 1),  # beyond it: the judged documents show a drop the gate fails
        ("20%", 0.20 * BASE_NDCG, 3),  # a percent of the baseline's mean (0.1563): within
        ("10%", 0.10 * BASE_NDCG, 1),  # 0.0782: beyond
    ],
)
def test_a_condensed_drop_within_the_margin_is_unsettled_beyond_it_regressed(
    slipped, margin, held, exit_code
):
    done = slipped[margin]
    assert done.exit_code == exit_code, done.stderr
    assert "holes in the judgments: nDCG@10" in done.stderr  # both fail under the warning
    assert ("UNSETTLED" in done.stderr) == (held >= SLIP_DROP)
    if exit_code == 1:
        assert "FAIL: nDCG@10 regressed" in done.stderr
