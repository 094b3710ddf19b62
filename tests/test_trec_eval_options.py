"""trec_eval's command line, -m parsing and C conversions (spec 1, 1.1, 2, 3)."""

from __future__ import annotations

import math

import pytest

from rankhouse.trec_eval.options import TrecEvalExit, atof, atol, parse_args, resolve_measures


@pytest.mark.parametrize(
    ("text", "value"),
    [("1.7", 1), ("0.5", 0), ("2e1", 2), ("+3", 3), ("abc", 0), ("-7", -7), ("", 0)],
)
def test_atol(text, value):
    assert atol(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.5abc", 1.5),
        ("abc", 0.0),
        ("0x10", 16.0),
        ("1e400", math.inf),
        ("-inf", -math.inf),
        ("1e-400", 0.0),
        (".5", 0.5),
        ("1_0", 1.0),
        ("0x1p3", 8.0),
        ("5.", 5.0),
    ],
)
def test_atof(text, value):
    assert atof(text) == value


def test_short_options_attached_and_separate():
    options = parse_args(["-q", "-c", "-l2", "-M", "100", "-N1000", "-mP.5", "q", "r", "-J"])
    assert (options.per_topic, options.complete, options.judged_only) == (True, True, True)
    assert (options.level, options.max_docs, options.num_docs_in_coll) == (2, 100, 1000)
    assert (options.qrels, options.results, options.specs) == ("q", "r", ["P.5"])


def test_names_follow_parameter_kinds():
    requests = resolve_measures(
        ["P.5,7,3", "iprec_at_recall..10,.20", "utility.2,-1,0,0", "ndcg.1=3", "map", "P.9"]
    )
    names = [name for r in requests for name in r.line_names()]
    assert names == [
        "map",
        "iprec_at_recall_0.10",
        "iprec_at_recall_0.20",
        "P_3",
        "P_5",
        "P_7",
        "utility_2,-1,0,0",
        "ndcg_1=3",
    ]


def test_all_trec_has_99_summary_lines():
    requests = [r for r in resolve_measures(["all_trec"]) if r.name != "relstring"]
    assert sum(len(r.line_names()) for r in requests) == 99


@pytest.mark.parametrize(
    ("spec", "code"), [("nope", 1), ("P.", 1), ("P.0", 2), ("P.5,5", 2), ("Rprec_mult.1,1", 2)]
)
def test_bad_measures_exit_like_trec_eval(spec, code):
    with pytest.raises(TrecEvalExit) as stop:
        resolve_measures([spec])
    assert stop.value.code == code


def test_missing_file_argument_is_a_usage_error():
    with pytest.raises(TrecEvalExit) as stop:
        parse_args(["-q", "qrels"])
    assert stop.value.code == 1
