"""The Python API's shape: qrels before runs everywhere, the CLI's option names as keywords,
every parameter visible to help() (no ``**options``)."""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import pandas as pd
import pytest
import typer.main

import rankhouse
from rankhouse import Warehouse
from rankhouse.cli.app import app
from rankhouse.regress import GateOptions

PUBLIC = [
    rankhouse.evaluate,
    Warehouse.evaluate,
    Warehouse.compare,
    Warehouse.history,
    Warehouse.ingest_qrels,
    Warehouse.ingest_run,
]


def _positional(function) -> list[str]:
    return [
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "self"
    ]


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        (rankhouse.evaluate, ["qrels", "run", "measures"]),
        (Warehouse.evaluate, ["qrels", "runs", "measures"]),
        (Warehouse.compare, ["qrels", "runs", "measures"]),
    ],
)
def test_qrels_come_first_as_in_the_cli(function, expected):
    assert _positional(function) == expected


@pytest.mark.parametrize("function", PUBLIC, ids=lambda f: f.__qualname__)
def test_no_parameter_is_hidden_behind_kwargs(function):
    kinds = {p.kind for p in inspect.signature(function).parameters.values()}
    assert inspect.Parameter.VAR_KEYWORD not in kinds
    assert inspect.Parameter.VAR_POSITIONAL not in kinds
    assert function.__doc__ and "Args:" in function.__doc__


def _cli_options(command: str) -> set[str]:
    """The Python names of a command's value-changing options (not output ones)."""
    click_command = typer.main.get_command(app).commands[command]
    names = {p.name for p in click_command.params}
    # --all-pairs is its own method in Python (Warehouse.all_pairs), as --ranked-labels is
    # (Warehouse.evaluate_ranked_labels); --wide shapes the output
    return (
        names
        - {
            "fmt",
            "long",
            "wide",
            "all_pairs",
            "ranked_labels",
            "per_query",
            "qrels",
            "runs",
            "measures",
            "intervals",  # the paper formats' (paper_table(intervals=...) in Python)
        }
        - ({"round"} if command == "eval" else set())
    )


@pytest.mark.parametrize(
    ("command", "function"), [("eval", Warehouse.evaluate), ("compare", Warehouse.compare)]
)
def test_keywords_are_named_as_the_cli_options(command, function):
    keywords = set(inspect.signature(function).parameters)
    assert _cli_options(command) <= keywords


def test_evaluate_takes_qrels_then_run():
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    result = rankhouse.evaluate(qrels, run, ["RR"])
    assert result.summary["RR"].tolist() == [0.5]
    by_keyword = rankhouse.evaluate(run=run, qrels=qrels, measures="RR")
    assert by_keyword.summary["RR"].tolist() == [0.5]


def test_warehouse_evaluate_and_compare_take_qrels_then_runs(warehouse):
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    warehouse.ingest_qrels(qrels, name="q")
    warehouse.ingest_run(run, name="r")
    assert warehouse.evaluate("q", "r", "RR").summary["RR"].tolist() == [0.5]
    assert warehouse.compare("q", ["r"], ["RR"])["mean"].tolist() == [0.5]


# Keywords that only Python has: engine options trec-eval passes, bookkeeping of the API.
PYTHON_ONLY = {"options", "with_query_counts", "with_per_query", "progress", "new_version"}
# PyTerrier's Experiment names that compare takes besides: perquery (shown on the command line
# by the output option --per-query) and correction_alpha (alpha's other name, --alpha's alias
# --correction-alpha).
PYTHON_ONLY |= {"perquery", "correction_alpha"}
# Options that only shape what the CLI prints (their Python names in the commands).
OUTPUT_ONLY = {"fmt", "per_query", "long", "wide", "markdown", "json_file", "junit", "output"}
# compare --all-pairs is the method Warehouse.all_pairs in Python, eval --ranked-labels
# Warehouse.evaluate_ranked_labels.
OUTPUT_ONLY |= {"all_pairs", "ranked_labels"}
# history's --limit: how many runs of each system a listing prints (the API returns them all)
OUTPUT_ONLY |= {"limit"}
# --intervals of the paper formats (markdown, latex): paper_table(intervals=...) in Python
OUTPUT_ONLY |= {"intervals"}
# regress --pool-out writes the unjudged documents to judge (a file, as --junit)
OUTPUT_ONLY |= {"pool_out"}
# eval's --round rounds only its paper formats (paper_table(round=...)); compare's is a keyword
OUTPUT_ONLY_OF = {("eval",): {"round"}}
# A keyword that takes a list is the repeatable option in the singular.
SINGULAR = {"measures": "--measure", "runs": "--run", "systems": "--system"}


def _flags(path: tuple[str, ...]) -> set[str]:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return {
        next(o for o in p.opts if o.startswith("--"))
        for p in command.params
        if p.param_type_name == "option"
        and p.name not in OUTPUT_ONLY | OUTPUT_ONLY_OF.get(path, set())
    }


def _keywords(function) -> set[str]:
    return {
        SINGULAR.get(p.name, "--" + p.name.replace("_", "-"))
        for p in inspect.signature(function).parameters.values()
        # measures is positional in Python and the option -m on the command line
        if (p.kind is p.KEYWORD_ONLY or p.name == "measures") and p.name not in PYTHON_ONLY
    }


@pytest.mark.parametrize(
    ("path", "function"),
    [
        (("eval",), Warehouse.evaluate),
        (("compare",), Warehouse.compare),
        (("history",), Warehouse.history),
        (("report",), Warehouse.report),
        (("ingest", "qrels"), Warehouse.ingest_qrels),
        (("ingest", "run"), Warehouse.ingest_run),
        (("regress",), Warehouse.regress),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else v.__qualname__,
)
def test_every_keyword_is_a_cli_option_of_the_same_name(path, function):
    assert _keywords(function) == _flags(path)


def test_every_gate_option_is_a_cli_option_of_the_same_name():
    options = {"--" + f.name.replace("_", "-") for f in dataclasses.fields(GateOptions)}
    assert options | {"--qrels", "--measure"} == _flags(("regress",))


def _ranked(tmp_path):
    """A CSV run with ranks and no scores: d2 first, d1 second."""
    path = tmp_path / "ranks.csv"
    path.write_text("qid,docid,rank\n1,d2,1\n1,d1,2\n")
    return path


def test_library_errors_name_keywords_in_python_and_flags_on_the_cli(tmp_path, run_cli):
    with pytest.raises(rankhouse.InputError) as raised:
        Warehouse(":memory:").ingest_run(_ranked(tmp_path))
    assert str(raised.value).endswith("this run has ranks but no scores: pass order='rank'")
    done = run_cli("ingest", "run", _ranked(tmp_path))
    assert done.exit_code == 1
    assert done.stderr.rstrip().endswith("this run has ranks but no scores: pass --order rank")

    headless = tmp_path / "x.csv"
    headless.write_text("Q,D,S\n1,a,1.0\n")
    with pytest.raises(rankhouse.InputError) as raised:
        Warehouse(":memory:").ingest_run(headless)
    assert str(raised.value).endswith(
        "its columns are Q, D, S; pass columns={'qid': '<column>', 'docid': '<column>', "
        "'score': '<column>'}"
    )
    done = run_cli("ingest", "run", headless)
    assert done.stderr.rstrip().endswith(
        "its columns are Q, D, S; pass --columns qid=<column>,docid=<column>,score=<column>"
    )


def test_conflicts_and_first_runs_name_the_way_out(tmp_path, run_cli, db_path):
    run = tmp_path / "r.txt"
    run.write_text("1 Q0 a 1 1.0 sys\n")
    assert run_cli("ingest", "run", run).exit_code == 0
    run.write_text("1 Q0 b 1 1.0 sys\n")
    done = run_cli("ingest", "run", run)
    assert done.stderr.rstrip().endswith(
        "pass --replace to overwrite it, or --name to choose another name"
    )
    with Warehouse(db_path) as wh, pytest.raises(rankhouse.ConflictError) as raised:
        wh.ingest_run(run)
    assert str(raised.value).endswith(
        "pass replace=True to overwrite it, or name to choose another name"
    )


def test_a_run_frame_without_scores_is_ranked_by_its_ranks():
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "rank": [2, 1]})
    with pytest.raises(rankhouse.InputError, match="pass order='rank'$"):
        rankhouse.evaluate(qrels, run, ["RR"])
    result = rankhouse.evaluate(qrels, run, ["RR", "P@1"], order="rank")
    assert result.summary[["RR", "P@1"]].values.tolist() == [[0.5, 0.0]]  # b ranks first


def test_ranks_that_disagree_with_scores_are_a_warning(tmp_path, run_cli):
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    run = pd.DataFrame(
        {"query_id": ["1", "1"], "doc_id": ["a", "b"], "rank": [2, 1], "score": [2.0, 1.0]}
    )
    message = (
        r"its ranks disagree with its scores \(query '1': rank 1 is 'b' with score 1.0, rank 2 "
        r"is 'a' with the higher score 2.0\); rankhouse ranks by score, as trec_eval does, and "
        r"ignores ranks: pass order='rank' to take the given ranks as the ranking$"
    )
    with pytest.warns(rankhouse.RankhouseWarning, match=message):
        by_score = rankhouse.evaluate(qrels, run, ["RR"])
    assert by_score.summary["RR"].tolist() == [1.0]  # a has the higher score: first
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning once the ranks are the ranking
        assert rankhouse.evaluate(qrels, run, ["RR"], order="rank").summary["RR"].tolist() == [0.5]
        agreeing = run.assign(rank=[1, 2])
        rankhouse.evaluate(qrels, agreeing, ["RR"])

    path = tmp_path / "run.txt"
    path.write_text("1 Q0 a 2 2.0 sys\n1 Q0 b 1 1.0 sys\n")
    done = run_cli("ingest", "run", path)
    assert done.exit_code == 0, done.stderr
    assert done.stderr.splitlines()[0] == (
        "Warning: run 'sys': its ranks disagree with its scores (query '1': rank 1 is 'b' with "
        "score 1.0, rank 2 is 'a' with the higher score 2.0); rankhouse ranks by score, as "
        "trec_eval does, and ignores ranks: pass --order rank to take the given ranks as the "
        "ranking"
    )


def test_the_rank_check_runs_on_every_backend(any_warehouse, tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 a 2 2.0 sys\n1 Q0 b 1 1.0 sys\n2 Q0 c 1 3.0 sys\n")
    with pytest.warns(rankhouse.RankhouseWarning, match=r"^run 'sys': its ranks disagree"):
        any_warehouse.ingest_run(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        any_warehouse.ingest_run(path)  # stored already: checked when it was new
        any_warehouse.ingest_run(path, order="rank", name="by-rank")
