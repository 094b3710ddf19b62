"""The Python API does what the CLI does, and says it the way Python callers write it.

* ``Warehouse.regress`` is ``rankhouse regress`` (same verdicts, stored, shown in history),
  and a notebook shows its result as the verdict table;
* a hint about a qrels frame's columns names the keyword that works for that call
  (``qrels_columns=`` in ``rankhouse.evaluate``; a rename where the call takes no mapping);
* qrels and runs given the wrong way round are named as swapped, as data (frames,
  ir_measures tuples) as well as files;
* a warning points at the caller's line, not at rankhouse's;
* data given without a name is named by its argument: ``qrels``, ``run`` or ``run1``,
  ``run2``... by position, or a dict's key, never ``dataframe-<sha8>``;
* ``relevance_level=2`` labels ``AP`` as ``AP(rel=2)`` in ``summary`` and ``per_query``, as
  the CLI and ``experiment()`` do.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from ir_measures import AP, nDCG

import rankhouse
from rankhouse import InputError, Warehouse
from rankhouse.regress import NoBaselineError, RegressResult

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
QRELS = EXAMPLES / "qrels.txt"
NIGHTS = EXAMPLES / "nights"


def _lines(path: Path) -> list[list[str]]:
    text = path.read_text(encoding="utf-8").splitlines()
    return [line.split() for line in text if line.strip() and not line.startswith("#")]


def _qrels_frame() -> pd.DataFrame:
    rows = [(q, d, int(g)) for q, _, d, g in _lines(QRELS)]
    return pd.DataFrame(rows, columns=["qid", "docno", "label"])


def _run_frame(path: Path = EXAMPLES / "run.bm25.txt") -> pd.DataFrame:
    rows = [(q, d, float(s)) for q, _, d, _, s, _ in _lines(path)]
    return pd.DataFrame(rows, columns=["qid", "docno", "score"])


# --- Warehouse.regress ---------------------------------------------------------------------


@pytest.fixture
def nights(tmp_path: Path) -> Path:
    """A warehouse with the qrels (``q``) and nights 1 to 3 of ``bm25`` (night 3 is worse)."""
    path = tmp_path / "w.duckdb"
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, name="q")
        for night in (1, 2, 3):
            wh.ingest_run(NIGHTS / f"bm25.night{night}.txt", name=f"night{night}")
    return path


def test_regress_is_the_cli_s_gate(nights, run_cli, tmp_path):
    wh = Warehouse(nights)
    result = wh.regress("night3", baseline="previous", qrels="q", measures=[nDCG @ 10, "AP"])
    assert isinstance(result, RegressResult)
    assert (result.run, result.baseline, result.passed) == ("night3", "night2", False)
    assert "nDCG@10" in result.regressed  # night 3 ranks documents judged non-relevant first
    assert wh.regress("night2", qrels="q", measures="AP").passed
    report = tmp_path / "gate.json"
    done = run_cli(
        "--db", str(nights), "regress", "night3", "--baseline", "previous", "--qrels", "q",
        "-m", "nDCG@10", "-m", "AP", "--json", str(report), db=False,
    )  # fmt: skip
    assert done.exit_code == 1  # the CLI's "regressed"
    cli_report = json.loads(report.read_text())
    assert cli_report["regressed"] == result.regressed
    cli_rows = cli_report["measures"]
    for ours, theirs in zip(result.verdict_rows, cli_rows, strict=True):
        assert ours["measure"] == theirs["measure"] and ours["status"] == theirs["status"]
        assert ours["p_value"] == theirs["p_value"] and ours["delta"] == theirs["delta"]
    gates = wh.history(measures="AP").set_index("run")["gate"]
    assert gates["night3"] == "fail" and gates["night2"] == "pass"
    wh.close()


def test_regress_shows_its_verdicts_in_a_notebook(nights):
    with Warehouse(nights) as wh:
        failed = wh.regress("night3", baseline="night2", qrels="q", measures=["AP"])
        passed = wh.regress("night2", baseline="night1", qrels="q", measures=["AP"])
        first = wh.regress("night1", qrels="q", measures=["AP"], allow_missing_baseline=True)
        with pytest.raises(NoBaselineError, match="allow_missing_baseline=True"):
            wh.regress("night1", qrels="q", measures=["AP"])
    html = failed._repr_html_()
    # the caption says what the command line says last, then what the margins mean
    assert "<caption>FAIL: AP regressed (" in html and ") against night2 " in html
    assert failed.headline.startswith("FAIL: AP regressed (") and failed.meaning
    assert "fails an unchanged night about" in html
    assert '<td class="text fail">regressed</td>' in html
    assert (
        "<caption>PASS: every measure of night2 is shown no worse than night1 by more than its "
        "margin"
    ) in passed._repr_html_()
    assert "night1 is the first run of system &#x27;bm25&#x27;" in first._repr_html_()
    baseline_mean = failed.verdict_rows[0]["baseline_value"]
    assert f"<td>{baseline_mean:.2f}</td>" in failed.styled(round=2).html
    # the interval of the paired difference (held to scipy in test_regress_gate), the bound,
    # the queries paired and the verdict word, as the command line prints them
    row = failed.verdict_rows[0]
    assert f"<td>[{row['delta_low']:+.4f}, {row['delta_high']:+.4f}]</td>" in html
    assert f"<td>{row['bound']:+.4f}</td>" in html and f"<td>{row['num_q']}</td>" in html
    assert f'<td class="text">{row["verdict"]}</td>' in html


# --- the column hint names the keyword of the call -------------------------------------------


def test_a_qrels_frame_s_hint_names_qrels_columns_in_rankhouse_evaluate():
    qrels = _qrels_frame().rename(columns={"label": "judgment"})
    with pytest.raises(InputError, match=r"pass qrels_columns=\{'rel': '<column>'\}$") as raised:
        rankhouse.evaluate(qrels, _run_frame(), ["AP"])
    assert raised.value.cli_text().endswith("pass --qrels-columns rel=<column>")  # eval's
    result = rankhouse.evaluate(qrels, _run_frame(), ["AP"], qrels_columns={"rel": "judgment"})
    assert result.summary.shape == (1, 2)  # the keyword named works


def test_a_run_frame_s_hint_names_columns_in_rankhouse_evaluate():
    run = _run_frame().rename(columns={"score": "points"})
    with pytest.raises(InputError, match=r"pass columns=\{'score': '<column>'\}$"):
        rankhouse.evaluate(_qrels_frame(), run, ["AP"])


@pytest.mark.parametrize(
    "call",
    [
        lambda q, r: rankhouse.experiment(q, [r, r], ["AP"]),
        lambda q, r: Warehouse(":memory:").compare(q, [r], ["AP"]),
    ],
    ids=["experiment", "Warehouse.compare"],
)
def test_a_call_without_a_column_mapping_says_to_rename(call):
    qrels = _qrels_frame().rename(columns={"label": "judgment"})
    with pytest.raises(InputError, match=r"frame\.rename\(columns=\{'<column>': 'rel'\}\)"):
        call(qrels, _run_frame())


# --- swapped qrels and runs ------------------------------------------------------------------

SWAPPED = "the qrels and the run look swapped"


@pytest.mark.parametrize(
    "call",
    [
        lambda q, r: rankhouse.evaluate(r, q, ["AP"]),
        lambda q, r: rankhouse.evaluate(r, [q], ["AP"]),
        lambda q, r: rankhouse.evaluate(r, {"mine": q}, ["AP"]),
        lambda q, r: rankhouse.experiment(r, [q, r], ["AP"]),
        lambda q, r: Warehouse(":memory:").evaluate(r, q, ["AP"]),
        lambda q, r: Warehouse(":memory:").compare(r, [q], ["AP"]),
    ],
    ids=["evaluate", "list", "dict", "experiment", "Warehouse.evaluate", "Warehouse.compare"],
)
def test_frames_given_the_wrong_way_round_are_named_swapped(call):
    with pytest.raises(InputError, match=SWAPPED):
        call(_qrels_frame(), _run_frame())


def test_ir_measures_tuples_given_the_wrong_way_round_are_named_swapped():
    qrels = [ir_measures.Qrel(q, d, int(g)) for q, _, d, g in _lines(QRELS)]
    run = [
        ir_measures.ScoredDoc(q, d, float(s))
        for q, _, d, _, s, _ in _lines(NIGHTS / "bm25.night1.txt")
    ]  # noqa: E501
    with pytest.raises(InputError, match=SWAPPED + r".*\(ScoredDoc tuples\).*\(Qrel tuples\)"):
        rankhouse.evaluate(run, qrels, [AP])


def test_files_given_the_wrong_way_round_are_named_swapped():
    with pytest.raises(InputError, match=SWAPPED):
        Warehouse(":memory:").evaluate(EXAMPLES / "run.bm25.txt", QRELS, ["AP"])
    with pytest.raises(InputError, match=SWAPPED):
        rankhouse.experiment(str(EXAMPLES / "run.bm25.txt"), [str(QRELS)], ["AP"])


def test_a_run_given_as_qrels_alone_is_named():
    with pytest.raises(InputError, match="the qrels given look like a run"):
        rankhouse.evaluate(_run_frame(), _run_frame(NIGHTS / "bm25.night1.txt"), ["AP"])


# --- warnings at the caller's line -----------------------------------------------------------


def _few_queries() -> pd.DataFrame:
    run = _run_frame()
    return run[run["qid"] == "q1"]  # answers 1 of the 8 queries: a warning


def _ranks_disagree() -> pd.DataFrame:
    run = _run_frame()
    return run.assign(rank=range(len(run), 0, -1))  # ranks against the scores: a warning


CALLS = {
    "rankhouse.evaluate": lambda: rankhouse.evaluate(QRELS, _few_queries(), ["AP"]),
    "rankhouse.experiment": lambda: rankhouse.experiment(QRELS, [_few_queries()], ["AP"]),
    "Warehouse.evaluate": lambda: Warehouse(":memory:").evaluate(QRELS, _few_queries(), "AP"),
    "Warehouse.compare": lambda: Warehouse(":memory:").compare(QRELS, [_few_queries()], "AP"),
    "Warehouse.ingest_run": lambda: Warehouse(":memory:").ingest_run(_ranks_disagree()),
    "ranks in evaluate": lambda: rankhouse.evaluate(QRELS, _ranks_disagree(), ["AP"]),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_a_warning_points_at_the_caller_s_line(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    found = [w for w in caught if issubclass(w.category, rankhouse.RankhouseWarning)]
    assert found, [str(w.message) for w in caught]
    assert {w.filename for w in found} == {__file__}


# --- names of data given without one ---------------------------------------------------------

#: the runs below that answer one query of eight warn so; what is tested here is their names
few_answered = pytest.mark.filterwarnings("ignore:run .* answers 1 of the 8:UserWarning")


@few_answered
def test_frames_are_named_by_their_argument():
    one = rankhouse.evaluate(_qrels_frame(), _run_frame(), ["AP"])
    assert (one.qrels, one.runs) == ("qrels", ["run"])
    several = rankhouse.evaluate(
        QRELS, [_run_frame(), EXAMPLES / "run.dense.txt", _few_queries()], "AP"
    )  # noqa: E501
    assert several.runs == ["run1", "dense", "run3"]
    keyed = rankhouse.evaluate(QRELS, {"bm25": _run_frame(), "few": _few_queries()}, "AP")
    assert keyed.runs == ["bm25", "few"]
    tagged = _run_frame().assign(name="BM25")  # PyTerrier's name column names its run
    assert rankhouse.evaluate(QRELS, [tagged, _few_queries()], "AP").runs == ["BM25", "run2"]


def test_experiment_names_its_data_by_argument():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = rankhouse.experiment(_qrels_frame(), [_run_frame(), _few_queries()], ["AP"])
    assert list(dict.fromkeys(frame["run"])) == ["run1", "run2"]
    [warning] = [w for w in caught if issubclass(w.category, rankhouse.RankhouseWarning)]
    assert "run 'run2' answers 1 of the 8 queries of qrels set 'qrels'" in str(warning.message)


@few_answered
def test_a_warehouse_names_frames_by_position_and_keeps_versions(tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        wh.ingest_qrels(QRELS, name="q")
        first = wh.evaluate("q", [_run_frame(), _few_queries()], "AP")
        assert first.runs == ["run1", "run2"]
        again = wh.evaluate("q", [_run_frame(NIGHTS / "bm25.night1.txt")], "AP")
        assert again.runs == ["run"]
        other = wh.evaluate("q", [_few_queries(), _run_frame(NIGHTS / "bm25.night2.txt")], "AP")
        assert other.runs == ["run2", "run2@2"]  # the same content is its stored run
        named = wh.evaluate("q", _run_frame(NIGHTS / "bm25.night3.txt"), "AP", name="n3")
        assert named.runs == ["n3"]


# --- labels ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "evaluate",
    [rankhouse.evaluate, lambda *a, **k: Warehouse(":memory:").evaluate(*a, **k)],
    ids=["rankhouse.evaluate", "Warehouse.evaluate"],
)
def test_a_relevance_level_labels_the_columns(evaluate, run_cli):
    result = evaluate(QRELS, EXAMPLES / "run.bm25.txt", ["AP", "P@5", "nDCG@10"], relevance_level=2)
    labels = ["AP(rel=2)", "P(rel=2)@5", "nDCG@10"]  # nDCG uses grades, not a level
    assert list(result.summary.columns) == ["run", *labels]
    assert list(result.labels.values()) == labels
    assert list(result.per_query["measure"].cat.categories) == labels
    compared = rankhouse.experiment(
        QRELS, [EXAMPLES / "run.bm25.txt"], ["AP", "P@5", "nDCG@10"], relevance_level=2
    )  # noqa: E501
    assert list(dict.fromkeys(compared["measure"])) == labels
    done = run_cli(
        "eval", QRELS, EXAMPLES / "run.bm25.txt", "-m", "AP", "-m", "P@5", "-m", "nDCG@10",
        "-l", "2", "--format", "csv",
    )  # fmt: skip
    bounded = [f"{name}{end}" for name in labels for end in ("", " low", " high")]
    assert done.stdout.splitlines()[0] == ",".join(["run", "num_q", *bounded])
    assert list(result.intervals.columns) == ["run", "num_q", *bounded]
    unlabelled = evaluate(QRELS, EXAMPLES / "run.bm25.txt", ["AP"])
    assert list(unlabelled.summary.columns) == ["run", "AP"]  # the defaults: the plain name
