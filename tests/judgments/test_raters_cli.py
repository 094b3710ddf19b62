"""``rankhouse ingest judgments``, ``qrels raters``, ``qrels build``, ``qrels builds`` and
``qrels agreement --raters`` in subprocesses on one warehouse file; and ``qrels agreement A B
--runs`` storing its evaluations so that ``history`` shows a run under both qrels sets."""

from __future__ import annotations

import csv
import io
import re

import pytest
from cli_helpers import ERROR_LINE, run_many

#: (rater, file, its text, options): a human's TREC qrels, an LLM judge's CSV, a second judge.
FILES = [
    ("human", "human.qrels", "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\nq2 0 d2 3\n", ["--kind", "human"]),
    (
        "judge",
        "judge.tsv",
        "query\tdoc\tgrade\ttime\trationale\nq1\td1\t3\t12\tclear\nq1\td2\t0\t8\toff\n"
        "q2\td1\t1\t5\tpartly\nq2\td2\t2\t9\tclose\n",
        ["--kind", "llm", "--meta", "model=m1", "--meta", "prompt=p1"],
    ),
    ("second", "second.qrels", "q1 0 d1 2\nq1 0 d2 1\nq2 0 d1 1\nq2 0 d2 2\n", ["--kind", "llm"]),
]
#: Two runs: r1 ranks d1 first, r2 d2 first.
RUNS = {
    "r1": "q1 Q0 d1 1 2 r1\nq1 Q0 d2 2 1 r1\nq2 Q0 d1 1 2 r1\nq2 Q0 d2 2 1 r1\n",
    "r2": "q1 Q0 d2 1 2 r2\nq1 Q0 d1 2 1 r2\nq2 Q0 d2 1 2 r2\nq2 Q0 d1 2 1 r2\n",
}
REFUSALS = [
    (["qrels", "build", "x", "--rule", "max"], "pass --from-judgments"),
    (["qrels", "build", "x", "--from-judgments", "--rule", "median"], "unknown rule 'median'"),
    (["qrels", "build", "x", "--from-judgments", "--rule", "max", "--raters", "nobody"],
     "no rater named 'nobody'"),
    (["qrels", "agreement", "panel", "--raters", "human,judge"], "name no qrels set"),
    (["ingest", "judgments", "judge.tsv", "--rater", "judge", "--meta", "model=m2"],
     "kind and metadata are fixed"),
]  # fmt: skip


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    folder = tmp_path_factory.mktemp("raters")
    db = ["--db", str(folder / "w.duckdb")]
    writes = []
    for rater, name, text, options in FILES:
        (folder / name).write_text(text)
        writes.append([*db, "ingest", "judgments", name, "--rater", rater, *options])
    for run, text in RUNS.items():
        (folder / f"{run}.run").write_text(text)
        writes.append([*db, "ingest", "run", f"{run}.run", "--name", run])
    writes += [
        [*db, "qrels", "build", "panel", "--from-judgments", "--rule", "majority"],
        [*db, "qrels", "build", "panel", "--from-judgments", "--rule", "rater:judge"],
        [*db, "qrels", "agreement", "panel", "panel@2", "--runs", "r1,r2", "-m", "P@1"]
        + ["--resamples", "0", "-f", "csv"],
        *([*db, *args] for args, _ in REFUSALS),
    ]
    reads = [
        [*db, "qrels", "raters", "-f", "csv"],
        [*db, "qrels", "builds", "-f", "csv"],
        [*db, "qrels", "agreement", "--raters", "human,judge,second", "-f", "csv"],
        [*db, "history", "--run", "r1", "-m", "P@1", "-f", "csv"],
    ]
    results = run_many(writes, cwd=folder, workers=1) + run_many(reads, cwd=folder)
    return {tuple(args[2:]): result for args, result in zip(writes + reads, results, strict=True)}


def _csv(result) -> list[dict[str, str]]:
    assert result.exit_code == 0, result.stderr
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_ingest_list_and_build(done):
    ingested = done["ingest", "judgments", "judge.tsv", "--rater", "judge", *FILES[1][3]]
    assert ingested.stderr.endswith(
        "judge.tsv: stored 4 judgments of 2 queries (4 with a time, 4 with a rationale) as "
        "judgment set 2 of rater 'judge'\n"
    )
    raters = _csv(done["qrels", "raters", "-f", "csv"])
    assert [(r["rater"], r["kind"], r["metadata"], r["judgments"]) for r in raters] == [
        ("human", "human", "", "4"),
        ("judge", "llm", "model=m1, prompt=p1", "4"),
        ("second", "llm", "", "4"),
    ]
    built = done["qrels", "build", "panel", "--from-judgments", "--rule", "majority"]
    # q1 d1: 2,3,2 -> 2; q1 d2: 0,0,1 -> 0; q2 d1: 1,1,1 -> 1; q2 d2: 3,2,2 -> 2
    assert built.stderr == (
        "built qrels set 'panel' (id 1): 4 judgments of 2 queries by majority of human (set 1),"
        " judge (set 2), second (set 3); 0 pairs decided by a tie, 0 judged by one rater only\n"
    )
    assert done[
        "qrels", "build", "panel", "--from-judgments", "--rule", "rater:judge"
    ].stderr.startswith("built qrels set 'panel@2' (id 2)")
    builds = _csv(done["qrels", "builds", "-f", "csv"])
    assert [(b["qrels"], b["rule"], b["rater"]) for b in builds] == [
        ("panel", "majority", "human"),
        ("panel", "majority", "judge"),
        ("panel", "majority", "second"),
        ("panel@2", "rater:judge", "judge"),
    ]


def test_agreement_of_raters(done):
    rows = _csv(done["qrels", "agreement", "--raters", "human,judge,second", "-f", "csv"])
    values = {(r["sets"], r["statistic"]): float(r["value"]) for r in rows}
    # human and judge agree on q1 d2 and q2 d1 of 4 pairs
    assert values["human,judge", "exact_agreement"] == 0.5
    assert values["judge,second", "exact_agreement"] == 0.5
    assert ("human,judge,second", "fleiss_kappa") in values


def test_agreement_runs_are_stored_for_history(done):
    """Each run evaluated under both sets is stored as eval stores it: history shows r1 under
    panel and panel@2 (P@1: panel grades d1 2 for q1 and 1 for q2, judge 3 and 1)."""
    rows = _csv(done["history", "--run", "r1", "-m", "P@1", "-f", "csv"])
    assert sorted((r["qrels"], float(r["P@1"])) for r in rows) == [("panel", 1.0), ("panel@2", 1.0)]


@pytest.mark.parametrize(("args", "message"), REFUSALS)
def test_refusals_in_one_line(done, args, message):
    refused = done[tuple(args)]
    assert refused.exit_code == 1 and message in refused.stderr
    assert re.match(ERROR_LINE, refused.stderr), refused.stderr
