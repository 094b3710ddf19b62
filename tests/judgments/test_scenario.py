"""Judgments as data, end to end (issue 38's scenario), through the CLI in subprocesses.

A team has human qrels for 20 queries, judged on the top 10 of its BM25 run (grades 0-3), and
two LLM judges that graded the same pairs: a faithful one (the human's grade but for one pair a
query) and a lenient one (every grade pushed up by one, at most 3). A new dense run ranks three
documents nobody has judged first (u1 to u3, truly of grades 3, 2, 2), then the judged documents
best first. Against the human qrels the dense run looks far worse: its unjudged documents count
as non-relevant. The story:

1. round 1: ``ingest judgments --rater`` for the three raters; ``qrels build dl --rule
   rater:human`` (dl, version 1); ``qrels agreement --raters`` says which judge to trust;
2. ``regress`` against the BM25 run on dl: unsettled (exit 3) with the holes warning, not
   regressed (which is what the same gate says when the holes rule is switched off);
3. ``rankhouse pool bm25 dense --depth 10 --qrels dl``: the documents to judge next, the same
   the gate's ``--pool-out`` wrote;
4. round 2: both LLM judges grade the pool; ``qrels build dl --rule rater:faithful`` (dl@2);
5. ``qrels diff dl dl@2``: the pool's pairs added, the faithful judge's 20 departures changed;
6. ``regress`` on dl@2 passes; ``qrels agreement dl dl@2 --runs`` shows the two runs swap.

Every expected value below is worked out from how the data are made, never read off rankhouse.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter

import pytest
from cli_helpers import finish, run_many, start
from sklearn.metrics import cohen_kappa_score

QUERIES = [f"q{n:02d}" for n in range(1, 21)]
#: The human grades of a query's h1..h10 (BM25's top 10, in BM25's order), four patterns in turn.
PATTERNS = [
    [3, 2, 0, 2, 1, 0, 1, 0, 0, 1],
    [2, 3, 1, 0, 0, 2, 0, 1, 0, 0],
    [1, 0, 3, 2, 0, 1, 0, 0, 2, 0],
    [3, 1, 1, 0, 2, 0, 0, 1, 0, 0],
]
#: The documents only the dense run retrieves, and their true grades.
NEW = {"u1": 3, "u2": 2, "u3": 2}
GATE = ["-m", "nDCG@10:0.05"]


def _human(query: str) -> dict[str, int]:
    return {f"h{i}": grade for i, grade in enumerate(PATTERNS[int(query[1:]) % 4], 1)}


def _departure(query: str) -> str:
    """The one document of each query the faithful judge grades otherwise than the human."""
    return f"h{10 - int(query[1:]) % 10}"


def _faithful(query: str, doc: str, grade: int) -> int:
    if doc != _departure(query):
        return grade
    return grade + 1 if grade < 3 else 2


def _lenient(grade: int) -> int:
    return min(grade + 1, 3)


def _ranking(query: str, run: str) -> list[str]:
    human = _human(query)
    if run == "bm25":
        return list(human)
    return list(NEW) + sorted(human, key=lambda doc: -human[doc])  # judged ones best first


def _qrels(rows) -> str:
    return "".join(f"{q} 0 {doc} {grade}\n" for q, doc, grade in rows)


ROUND_1 = [(q, doc, grade) for q in QUERIES for doc, grade in _human(q).items()]


def _judged(query: str, version: int) -> dict[str, int]:
    """dl's grades of a query: the human's (version 1), the faithful judge's on both rounds (2)."""
    if version == 1:
        return _human(query)
    return {doc: _faithful(query, doc, g) for doc, g in _human(query).items()} | NEW


def _mean_ndcg10(run: str, version: int) -> float:
    """trec_eval's ndcg_cut_10 by its formula (gain = grade, discount log2(rank + 1)), averaged
    over the queries; an unjudged document gains nothing."""
    values = []
    for q in QUERIES:
        judged = _judged(q, version)
        dcg = sum(
            judged.get(d, 0) / math.log2(r + 1)
            for r, d in enumerate(_ranking(q, run), 1)
            if r <= 10
        )
        ideal = sorted(judged.values(), reverse=True)[:10]
        values.append(dcg / sum(g / math.log2(r + 1) for r, g in enumerate(ideal, 1)))
    return sum(values) / len(values)


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    root = tmp_path_factory.mktemp("scenario")
    db = ["--db", str(root / "dl.duckdb")]
    files = {
        "human.qrels": _qrels(ROUND_1),
        "faithful.qrels": _qrels((q, d, _faithful(q, d, g)) for q, d, g in ROUND_1),
        "lenient.qrels": _qrels((q, d, _lenient(g)) for q, d, g in ROUND_1),
    }
    for run in ("bm25", "dense"):
        files[f"{run}.run"] = "".join(
            f"{q} Q0 {doc} {r} {100 - r} {run}\n"
            for q in QUERIES
            for r, doc in enumerate(_ranking(q, run), 1)
        )
    for name, text in files.items():
        (root / name).write_text(text)
    done = {}

    def step(key: str, *args: str):
        done[key] = finish(start([*db, *args], cwd=root))
        assert done[key].exit_code in (0, 1, 3), (key, done[key].stderr)

    step("human", "ingest", "judgments", "human.qrels", "--rater", "human", "--kind", "human")
    for rater, model in (("faithful", "judge-a"), ("lenient", "judge-b")):
        step(rater, "ingest", "judgments", f"{rater}.qrels", "--rater", rater, "--kind", "llm",
             "--meta", f"model={model}")  # fmt: skip
    step("bm25", "ingest", "run", "bm25.run")
    step("dense", "ingest", "run", "dense.run")
    step("v1", "qrels", "build", "dl", "--from-judgments", "--rule", "rater:human")
    gate = ["regress", "dense", "--baseline", "bm25", *GATE, "-f", "json"]
    step("gate v1", *gate, "--qrels", "dl", "--pool-out", "gate-pool.txt")
    step("gate v1 blind", *gate, "--qrels", "dl", "--max-judged-drop", "1")
    reads = [
        ["qrels", "agreement", "--raters", "human,faithful,lenient", "-f", "csv"],
        ["pool", "bm25", "dense", "--depth", "10", "--qrels", "dl", "-o", "pool.txt"],
    ]
    for args, result in zip(reads, run_many([[*db, *a] for a in reads], cwd=root), strict=True):
        done[args[0] + " " + args[1]] = result
    # round 2: the two LLM judges grade the pool, as an LLM judge's script reads it
    pool = [line.split() for line in (root / "pool.txt").read_text().splitlines()]
    (root / "faithful2.qrels").write_text(_qrels((q, d, NEW[d]) for q, d in pool))
    (root / "lenient2.qrels").write_text(_qrels((q, d, _lenient(NEW[d])) for q, d in pool))
    step("faithful 2", "ingest", "judgments", "faithful2.qrels", "--rater", "faithful")
    step("lenient 2", "ingest", "judgments", "lenient2.qrels", "--rater", "lenient")
    step("v2", "qrels", "build", "dl", "--from-judgments", "--rule", "rater:faithful")
    step("gate v2", *gate, "--qrels", "dl@2")
    step("swaps", "qrels", "agreement", "dl", "dl@2", "--runs", "bm25,dense", "-m",
         "nDCG@10", "--resamples", "0", "--show", "swaps", "-f", "csv")  # fmt: skip
    diffs = [
        ["qrels", "diff", "dl", "dl@2", "--section", "totals", "-f", "csv"],
        ["qrels", "diff", "dl", "dl@2", "--section", "transitions", "-f", "csv"],
        ["qrels", "diff", "dl", "dl@2", "--changes", "--section", "changes", "-f", "csv"],
    ]
    for args, result in zip(diffs, run_many([[*db, *a] for a in diffs], cwd=root), strict=True):
        done["diff " + args[args.index("--section") + 1]] = result
    return root, done


def _csv(result) -> list[dict[str, str]]:
    assert result.exit_code == 0, result.stderr
    return list(csv.DictReader(io.StringIO(result.stdout)))


def _gate(result, exit_code: int) -> dict:
    """The gate's JSON report, its exit code checked."""
    assert result.exit_code == exit_code, result.stderr
    return json.loads(result.stdout)


def _values(report: dict) -> tuple[float, float]:
    """The run's and the baseline's mean of the gated measure."""
    measure = report["measures"][0]
    return measure["run_value"], measure["baseline_value"]


def test_the_raters_agreement_says_which_judge_to_trust(story):
    _, done = story
    rows = {(r["sets"], r["statistic"]): float(r["value"]) for r in _csv(done["qrels agreement"])}
    # one departure a query in 200 pairs; the lenient judge agrees only where the human gave 3
    # (one pair a query: each pattern holds one 3)
    assert rows["human,faithful", "exact_agreement"] == pytest.approx(180 / 200)
    assert rows["human,lenient", "exact_agreement"] == pytest.approx(20 / 200)
    human = [g for _, _, g in ROUND_1]
    for rater, grades in (
        ("faithful", [_faithful(q, d, g) for q, d, g in ROUND_1]),
        ("lenient", [_lenient(g) for g in human]),
    ):
        assert rows[f"human,{rater}", "cohen_kappa"] == pytest.approx(
            cohen_kappa_score(human, grades), abs=1e-12
        )
        assert rows[f"human,{rater}", "cohen_kappa_quadratic"] == pytest.approx(
            cohen_kappa_score(human, grades, weights="quadratic"), abs=1e-12
        )
    assert rows["human,faithful", "cohen_kappa"] > 0.8 > rows["human,lenient", "cohen_kappa"]


def test_the_gate_calls_the_dense_run_unsettled_not_regressed(story):
    _, done = story
    report = _gate(done["gate v1"], 3)
    assert report["outcome"] == "unsettled"
    expected = (_mean_ndcg10("dense", 1), _mean_ndcg10("bm25", 1))
    assert _values(report) == pytest.approx(expected, abs=1e-12)
    assert expected[0] < expected[1] - 0.25  # against the human qrels, far worse
    # dense's top 10 holds three unjudged documents in every query, BM25's none; condensed,
    # dense's judged documents stand in the ideal order (1.0) and BM25's ranking is unchanged
    holes = "Judged@10 of the run 0.700, of the baseline 1.000 (more than 0.1 below)"
    condensed = f"run 1.0000, baseline {_mean_ndcg10('bm25', 1):.4f}"
    assert f"holes in the judgments: nDCG@10: {holes}; condensed (judged-only) nDCG@10: " \
        f"{condensed}" in report["warnings"]  # fmt: skip


def test_without_the_holes_rule_the_same_gate_calls_it_regressed(story):
    _, done = story
    report = _gate(done["gate v1 blind"], 1)
    assert (report["outcome"], report["regressed"]) == ("regressed", ["nDCG@10"])
    assert not any("holes" in warning for warning in report["warnings"])


def test_the_pool_is_the_dense_runs_unjudged_documents(story):
    root, done = story
    assert done["pool bm25"].exit_code == 0, done["pool bm25"].stderr
    # BM25's top 10 is all judged; dense's u1, u2, u3 are at ranks 1, 2, 3 (depth order)
    expected = "".join(f"{q} {doc}\n" for q in QUERIES for doc in NEW)
    assert (root / "pool.txt").read_text() == expected
    assert (root / "gate-pool.txt").read_text() == expected


def test_the_new_version_adds_the_pool_and_takes_the_faithful_judges_grades(story):
    _, done = story
    assert done["v2"].stderr.startswith("built qrels set 'dl@2' (id 2): 260 judgments of 20 ")
    totals = _csv(done["diff totals"])[0]
    assert {k: int(totals[k]) for k in ("added", "removed", "changed", "unchanged")} == {
        "added": 60, "removed": 0, "changed": 20, "unchanged": 180,
    }  # fmt: skip
    changes = {(r["query"], r["doc"], r["grade_a"], r["grade_b"], r["change"])
               for r in _csv(done["diff changes"])}  # fmt: skip
    added = {(q, doc, "", str(grade), "added") for q in QUERIES for doc, grade in NEW.items()}
    changed = {
        (q, d, str(g), str(_faithful(q, d, g)), "changed")
        for q, d, g in ROUND_1
        if d == _departure(q)
    }
    assert changes == added | changed
    transitions = Counter((str(g), str(_faithful(q, d, g))) for q, d, g in ROUND_1)
    transitions += Counter(("absent", str(grade)) for grade in NEW.values() for _ in QUERIES)
    table = {(row["grade_a"], b): int(n) for row in _csv(done["diff transitions"])
             for b, n in row.items() if b != "grade_a" and n}  # fmt: skip
    assert {key: n for key, n in table.items() if n} == dict(transitions)


def test_once_the_holes_are_judged_the_gate_passes_and_the_runs_swap(story):
    _, done = story
    report = _gate(done["gate v2"], 0)
    assert report["outcome"] == "passed"
    assert not any("holes" in warning for warning in report["warnings"])
    expected = (_mean_ndcg10("dense", 2), _mean_ndcg10("bm25", 2))
    assert _values(report) == pytest.approx(expected, abs=1e-12)
    assert expected[0] > expected[1] + 0.25  # judged, the dense run is far better
    (swap,) = _csv(done["swaps"])
    assert (swap["run"], swap["other"]) == ("bm25", "dense")
    assert float(swap["difference_first"]) == pytest.approx(
        _mean_ndcg10("bm25", 1) - _mean_ndcg10("dense", 1), abs=1e-12
    )
