"""``Warehouse.qrels_agreement`` and ``rankhouse qrels agreement`` on stored qrels sets (both
backends): each number against a reference computed here from the files themselves
(scikit-learn, statsmodels, the ``krippendorff`` package; pytrec_eval's nDCG@10 and AP and
scipy's ``kendalltau`` and ``spearmanr`` for the system rankings), the coverage by set
arithmetic, and the command's tables, CSV, JSON and errors."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from cli_helpers import ERROR_LINE, run_many
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sklearn_confusion
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from rankhouse import InputError, NotFoundError, Warehouse

TOLERANCE = 1e-9
SETS = ("human", "faithful", "lenient")
RUNS = ("bm25", "dense", "hybrid", "rerank")


def _write(folder: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """Three qrels files (a human set and two simulated LLM raters, one faithful, one that
    grades up; each leaves out about a tenth of the pairs) and four run files; their contents
    as {name: {(query, doc): grade}} and {run: {query: {doc: score}}}."""
    rng = np.random.default_rng(7)
    qrels: dict[str, dict] = {name: {} for name in SETS}
    runs: dict[str, dict] = {name: {} for name in RUNS}
    for query in map(str, range(1, 9)):
        docs = [f"d{query}-{k}" for k in range(25)]
        for doc in docs:
            grade = int(rng.integers(0, 4))
            shown = {
                "human": grade,
                "faithful": int(np.clip(grade + rng.integers(-1, 2), 0, 3)),
                "lenient": int(np.clip(grade + rng.integers(0, 2), 0, 3)),
            }
            for name in SETS:
                if doc == docs[0] or rng.random() > 0.1:  # every query judged by every set
                    qrels[name][(query, doc)] = shown[name]
        for name in RUNS:
            ranked = rng.permutation(docs)[:15]
            runs[name][query] = {doc: float(15 - k) for k, doc in enumerate(ranked)}
    for name, judged in qrels.items():
        lines = [f"{q} 0 {d} {g}\n" for (q, d), g in judged.items()]
        (folder / f"{name}.qrels").write_text("".join(lines))
    for name, ranked in runs.items():
        lines = [
            f"{q} Q0 {d} {k + 1} {score} {name}\n"
            for q, docs in ranked.items()
            for k, (d, score) in enumerate(docs.items())
        ]
        (folder / f"{name}.run").write_text("".join(lines))
    return qrels, runs


@pytest.fixture
def stored(any_warehouse, tmp_path):
    qrels, runs = _write(tmp_path)
    for name in SETS:
        any_warehouse.ingest_qrels(tmp_path / f"{name}.qrels", name=name)
    for name in RUNS:
        any_warehouse.ingest_run(tmp_path / f"{name}.run", name=name)
    return any_warehouse, qrels, runs


def _common(qrels, names):
    pairs = sorted(set.intersection(*(set(qrels[n]) for n in names)))
    return pairs, np.array([[qrels[n][p] for n in names] for p in pairs])


def test_two_sets_against_the_references(stored):
    wh, qrels, _ = stored
    found = wh.qrels_agreement(["human", "faithful"])
    pairs, grades = _common(qrels, ["human", "faithful"])
    a, b = grades.T
    scale = list(range(grades.min(), grades.max() + 1))
    values = {row["statistic"]: row["value"] for row in found.summary}
    assert {row["pairs"] for row in found.summary} == {len(pairs)}
    assert values["exact_agreement"] == pytest.approx(np.mean(a == b), abs=TOLERANCE)
    for weights, name in [(None, ""), ("linear", "_linear"), ("quadratic", "_quadratic")]:
        expected = cohen_kappa_score(a, b, weights=weights, labels=scale)
        assert values[f"cohen_kappa{name}"] == pytest.approx(expected, abs=TOLERANCE)
    alpha = krippendorff.alpha(reliability_data=grades.T, level_of_measurement="ordinal")
    assert values["krippendorff_alpha_ordinal"] == pytest.approx(alpha, abs=TOLERANCE)
    assert found.grades == scale
    assert found.confusion == sklearn_confusion(a, b, labels=scale).tolist()
    # per query: sklearn's kappa of that query's common pairs
    for row in found.queries:
        mine = [k for k, (q, _) in enumerate(pairs) if q == row["query"]]
        assert row["pairs"] == len(mine)
        expected = cohen_kappa_score(a[mine], b[mine], labels=scale)
        assert row["kappa"] == pytest.approx(expected, abs=TOLERANCE, nan_ok=True)
        assert row["exact_agreement"] == pytest.approx(np.mean(a[mine] == b[mine]))
    # coverage: set arithmetic on the files
    human, faithful = set(qrels["human"]), set(qrels["faithful"])
    assert found.coverage == [
        {
            "set": "human",
            "judged": len(human),
            "common": len(pairs),
            "only_this_set": len(human - faithful),
        },
        {
            "set": "faithful",
            "judged": len(faithful),
            "common": len(pairs),
            "only_this_set": len(faithful - human),
        },
    ]


def test_three_sets_fleiss_and_alpha_with_missing_pairs(stored):
    wh, qrels, _ = stored
    found = wh.qrels_agreement(list(SETS))
    everyone = [row for row in found.summary if row["sets"] == ",".join(SETS)]
    values = {row["statistic"]: row for row in everyone}
    pairs, grades = _common(qrels, SETS)
    expected = fleiss_kappa(aggregate_raters(grades)[0])
    assert values["fleiss_kappa"]["value"] == pytest.approx(expected, abs=TOLERANCE)
    assert values["fleiss_kappa"]["pairs"] == len(pairs)
    # alpha over every pair two or more sets judged, the rest missing
    every = sorted(set().union(*(qrels[n] for n in SETS)))
    data = np.array([[qrels[n].get(p, np.nan) for p in every] for n in SETS], dtype=float)
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    assert values["krippendorff_alpha_ordinal"]["value"] == pytest.approx(alpha, abs=TOLERANCE)
    assert values["krippendorff_alpha_ordinal"]["pairs"] == int(
        ((~np.isnan(data)).sum(axis=0) >= 2).sum()
    )
    assert found.confusion is None
    # each two sets get their kappas too
    assert {row["sets"] for row in found.summary} == {
        "human,faithful",
        "human,lenient",
        "faithful,lenient",
        "human,faithful,lenient",
    }
    only = set(qrels["lenient"]) - set(qrels["human"]) - set(qrels["faithful"])
    assert found.coverage[2]["only_this_set"] == len(only)
    for row in found.queries:
        mine = [k for k, (q, _) in enumerate(pairs) if q == row["query"]]
        expected = fleiss_kappa(aggregate_raters(grades[mine])[0])
        assert row["kappa"] == pytest.approx(expected, abs=TOLERANCE, nan_ok=True)


def test_system_rankings_against_pytrec_eval_and_scipy(stored, pytrec):
    wh, qrels, runs = stored
    found = wh.qrels_agreement(["human", "lenient"], runs=list(RUNS), resamples=50)
    means = {}
    for name in ("human", "lenient"):
        judged: dict[str, dict[str, int]] = {}
        for (q, d), g in qrels[name].items():
            judged.setdefault(q, {})[d] = g
        for run in RUNS:
            values = pytrec.evaluate(judged, runs[run], {"ndcg_cut_10", "map"})
            means[name, run] = {
                "nDCG@10": np.mean([v["ndcg_cut_10"] for v in values.values()]),
                "AP": np.mean([v["map"] for v in values.values()]),
            }
    assert [row["measure"] for row in found.rankings] == ["nDCG@10", "AP"]
    for row in found.rankings:
        first = [means["human", run][row["measure"]] for run in RUNS]
        second = [means["lenient", run][row["measure"]] for run in RUNS]
        tau = scipy_stats.kendalltau(first, second).statistic
        assert row["kendall_tau"] == pytest.approx(tau, abs=TOLERANCE)
        rho = scipy_stats.spearmanr(first, second).statistic
        assert row["spearman_rho"] == pytest.approx(rho, abs=TOLERANCE)
        assert row["queries"] == 8 and row["runs"] == 4
        assert row["kendall_tau_low"] <= row["kendall_tau_high"]
        shifts = [s for s in found.shifts if s["measure"] == row["measure"]]
        assert [s["shift"] for s in shifts] == pytest.approx(
            np.subtract(second, first).tolist(), abs=TOLERANCE
        )
        swapped = [s for s in found.swaps if s["measure"] == row["measure"]]
        assert row["swaps"] == len(swapped)
    # the evaluations are stored, as eval stores them
    history = wh.history(qrels="lenient", measures="AP")
    stored_runs = set(history["run"] if "run" in history else history["run_name"])
    assert stored_runs >= set(RUNS)


def test_refusals(stored):
    wh, _, _ = stored
    with pytest.raises(InputError, match="at least two qrels sets"):
        wh.qrels_agreement(["human"])
    with pytest.raises(InputError, match="named twice"):
        wh.qrels_agreement(["human", "human"])
    with pytest.raises(InputError, match="exactly two"):
        wh.qrels_agreement(list(SETS), runs=["bm25", "dense"])
    with pytest.raises(NotFoundError, match="no run named 'nope'"):
        wh.qrels_agreement(["human", "lenient"], runs=["bm25", "nope"])
    with pytest.raises(InputError, match="at least two runs"):
        wh.qrels_agreement(["human", "lenient"], runs="bm25")


# --- the command line -------------------------------------------------------------------------


REFUSALS = [
    (["human"], "at least two qrels sets"),
    (["human", "nope"], "no qrels set named 'nope'"),
    ([*SETS, "--show", "confusion"], "the confusion matrix is of two sets"),
    (["human", "lenient", "--show", "swaps"], "come with --runs"),
    ([*SETS, "--runs", "bm25,dense"], "exactly two"),
]
CSV = ["human", "faithful", "--format", "csv"]
JSON = ["human", "lenient", "--runs", "bm25,dense", "--runs", "hybrid", "-m", "P@5"]
JSON += ["--resamples", "0", "--format", "json"]
TSV = [*SETS, "--show", "queries", "--format", "tsv"]
READ_ONLY = [
    ["human", "lenient", "--runs", "bm25,dense,hybrid", "-m", "P@5", "--format", "csv"],
    ["human", "lenient", "--runs", "bm25,dense,hybrid", "-m", "AP", "--format", "csv"],
]


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    """One warehouse file (stored through the library), every command run on it at once: the
    table, CSV, JSON and TSV outputs and the refusals, as {args: CliResult}."""
    folder = tmp_path_factory.mktemp("cli")
    _write(folder)
    db = folder / "w.duckdb"
    with Warehouse(db) as wh:
        for name in SETS:
            wh.ingest_qrels(folder / f"{name}.qrels", name=name)
        for name in RUNS:
            wh.ingest_run(folder / f"{name}.run", name=name)
        expected = wh.qrels_agreement(["human", "faithful"]).summary
    # --runs stores evaluations (it holds the file): one at a time; the readers share it
    writers = [args for args in [JSON, *(a for a, _ in REFUSALS)] if "--runs" in args]
    readers = [["human", "faithful"], CSV, TSV, *(a for a, _ in REFUSALS if a not in writers)]
    commands = writers + readers
    calls = [["--db", str(db), "qrels", "agreement", *args] for args in commands]
    done = run_many(calls[: len(writers)], cwd=folder, workers=1)
    done += run_many(calls[len(writers) :], cwd=folder)
    # --read-only serves the evaluations JSON's command stored, and names those it lacks
    read_only = [
        ["--db", str(db), "--read-only", "qrels", "agreement", *args] for args in READ_ONLY
    ]
    done += run_many(read_only, cwd=folder)
    commands += READ_ONLY
    return {tuple(args): result for args, result in zip(commands, done, strict=True)}, expected


def test_the_command_prints_what_the_library_finds(cli):
    results, expected = cli
    table = results["human", "faithful"]
    assert table.exit_code == 0, table.stderr
    for part in ("summary", "coverage", "confusion", "queries"):
        assert f"qrels agreement: {part}" in table.stdout
    assert "human \\ faithful" in table.stdout
    rows = list(csv.DictReader(io.StringIO(results[tuple(CSV)].stdout)))
    assert [(r["statistic"], float(r["value"])) for r in rows] == [
        (r["statistic"], r["value"]) for r in expected
    ]
    document = json.loads(results[tuple(JSON)].stdout)
    assert set(document) == {
        "sets", "summary", "coverage", "confusion", "queries", "rankings", "swaps", "shifts",
    }  # fmt: skip
    assert [row["measure"] for row in document["rankings"]] == ["P@5"]
    assert "kendall_tau_low" not in document["rankings"][0]
    assert len(document["shifts"]) == 3
    header = results[tuple(TSV)].stdout.splitlines()[0].split("\t")
    assert header == ["query", "pairs", "exact_agreement", "kappa"]


def test_read_only_serves_stored_evaluations_alone(cli):
    stored, missing = (cli[0][tuple(args)] for args in READ_ONLY)
    assert stored.exit_code == 0, stored.stderr
    assert stored.stdout.splitlines()[1].startswith("P@5,3,8,")
    assert missing.exit_code == 1
    assert "read-only and these values are not stored: AP of run 'bm25'" in missing.stderr


@pytest.mark.parametrize(("args", "message"), REFUSALS)
def test_the_command_refuses_in_one_line(cli, args, message):
    done = cli[0][tuple(args)]
    assert done.exit_code == 1
    assert message in done.stderr
    assert re.match(ERROR_LINE, done.stderr)
