"""The Python API's shape: qrels before runs everywhere, the CLI's option names as keywords,
every parameter visible to help() (no ``**options``)."""

from __future__ import annotations

import inspect

import pandas as pd
import pytest
import typer.main

import rankhouse
from rankhouse import Warehouse
from rankhouse.cli import app

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
    return names - {"fmt", "long", "per_query", "qrels", "runs", "measures"}


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
