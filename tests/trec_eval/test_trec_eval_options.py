"""trec_eval's command line, -m parsing and C conversions (spec 1, 1.1, 2, 3)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from rankhouse.errors import MeasureError
from rankhouse.measures import REGISTRY, parse_measure
from rankhouse.measures.trec import BY_NAME, OWN_LINES, TABLE_ORDER, Kind, Summary
from rankhouse.trec_eval.options import (
    Options,
    TrecEvalExit,
    atof,
    atol,
    line_measures,
    parse_args,
    parse_params,
    resolve_measures,
)


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


def test_the_table_is_the_registrys_trec_eval_names_in_trec_evals_order():
    """Every trec_eval name a measure declares has its place in the output order, and the
    table holds nothing else but trec_eval's own lines."""
    assert len(set(TABLE_ORDER)) == len(TABLE_ORDER)
    assert set(TABLE_ORDER) == set(REGISTRY.trec_names()) | set(OWN_LINES)
    assert list(BY_NAME) == list(TABLE_ORDER)


_CUTS = "5,10,15,20,30,100,200,500,1000"
_POINTS = "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0"


# trec_eval 10's measure table (its measures' parameter kinds, defaults and summaries)
@pytest.mark.parametrize(
    ("name", "kind", "default", "summary", "integer", "per_topic"),
    [
        ("runid", Kind.PLAIN, None, Summary.RUNID, False, False),
        ("num_q", Kind.PLAIN, None, Summary.COUNT, True, False),
        ("num_ret", Kind.PLAIN, None, Summary.SUM, True, True),
        ("map", Kind.PLAIN, None, Summary.MEAN, False, True),
        ("gm_map", Kind.PLAIN, None, Summary.GMEAN, False, False),
        ("iprec_at_recall", Kind.REAL_CUTOFFS, _POINTS, Summary.MEAN, False, True),
        ("P", Kind.INT_CUTOFFS, _CUTS, Summary.MEAN, False, True),
        ("relstring", Kind.REAL_LIST, "10", Summary.NONE, False, True),
        ("gm_bpref", Kind.PLAIN, None, Summary.GMEAN, False, False),
        (
            "Rprec_mult",
            Kind.REAL_CUTOFFS,
            "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0",
            Summary.MEAN,
            False,
            True,
        ),
        ("utility", Kind.REAL_LIST, "1,-1,0,0", Summary.MEAN, False, True),
        ("11pt_avg", Kind.REAL_LIST, _POINTS, Summary.MEAN, False, True),
        ("G", Kind.PAIRS, None, Summary.MEAN, False, True),
        ("ndcg", Kind.PAIRS, None, Summary.MEAN, False, True),
        ("ndcg_cut", Kind.INT_CUTOFFS, _CUTS, Summary.MEAN, False, True),
        ("success", Kind.INT_CUTOFFS, "1,5,10", Summary.MEAN, False, True),
        ("set_F", Kind.REAL_LIST, "1.0", Summary.MEAN, False, True),
        ("num_nonrel_judged_ret", Kind.PLAIN, None, Summary.SUM, True, True),
        ("rbp", Kind.PAIRS, None, Summary.MEAN, False, True),
        ("rbp_resid", Kind.PAIRS, None, Summary.MEAN, False, True),
        ("unj", Kind.INT_CUTOFFS, "5,10,20", Summary.MEAN, False, True),
    ],
)
def test_table_entries_from_the_registry_are_trec_evals(
    name, kind, default, summary, integer, per_topic
):
    entry = BY_NAME[name]
    assert (entry.kind, entry.summary, entry.integer, entry.per_topic) == (
        kind,
        summary,
        integer,
        per_topic,
    )
    if default is None:
        assert entry.default is None
    else:  # the same parameters (utility's default is written 1.0,-1.0,0.0,0.0)
        assert parse_params(entry, entry.default) == parse_params(entry, default)


def test_a_list_of_the_wrong_length_is_no_measure():
    """utility takes four coefficients: with two, trec_eval calculates nothing (it stops with
    "improper number of coefficients", exit 4) and the name does not parse."""
    [request] = resolve_measures(["utility.1,2"])
    assert line_measures(request, Options("q", "r")) == []
    with pytest.raises(MeasureError, match="unknown measure"):
        parse_measure("utility.1,2")


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


@pytest.mark.parametrize(
    ("trec", "canonical"),
    [
        ("set_P", "SetP"),
        ("set_relative_P", "SetRelP"),
        ("set_recall", "SetR"),
        ("set_map", "SetAP"),
        ("set_F", "SetF"),
        ("set_F.0.5", "SetF(beta=0.5)"),
        ("set_F_4", "SetF(beta=4.0)"),
        ("num_nonrel_judged_ret", "NumNonRelJudgedRet"),
        ("gm_bpref", "GMBpref"),
        ("utility", "Utility"),
        ("utility.2,-1,0,0", "Utility(rel_ret=2.0)"),
        ("utility_1,-1,-1,0.01", "Utility(rel_nonret=-1.0,nonrel_nonret=0.01)"),
        ("relative_P_5", "RelP@5"),
        ("Rprec_mult_0.20", "RprecMult@0.2"),
        ("binG", "binG"),
        ("unj_10", "Unj@10"),
        ("11pt_avg", "IPrecAvg"),
        ("11pt_avg.1.0,0", "IPrecAvg(points='1.0;0.0')"),
        ("G", "G"),
        ("G_2=5", "G(gains='2=5.0')"),
        ("ndcg.1=3,2=9", "nDCG_gains(gains='1=3.0;2=9.0')"),
        ("ndcg_rel", "nDCG_rel"),
        ("Rndcg.1=0", "Rndcg(gains='1=0.0')"),
        ("rbp", "RBP_gains(p=0.9)"),
        ("rbp_p=0.8", "RBP_gains"),
        ("rbp.p=0.5,1=2", "RBP_gains(p=0.5,gains='1=2.0')"),
        ("rbp_resid", "RBP_resid(p=0.9)"),
    ],
)
def test_trec_names_parse_to_canonical_names_that_round_trip(trec, canonical):
    from rankhouse.measures import parse_measure, trec_name

    measure = parse_measure(trec)
    assert measure.name == canonical
    assert parse_measure(measure.name) == measure
    if "." not in trec and "=" not in trec and "," not in trec:
        printed = trec_name(measure)
        assert printed is None or parse_measure(printed) == measure


def _trec_eval(tmp_path, args: list[str]) -> tuple[int, str]:
    import io

    from rankhouse.trec_eval.runner import main

    (tmp_path / "q").write_text("q1 0 a 1\nq1 0 c 0\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 1 r\nq1 Q0 b 2 0.5 r\nq1 Q0 c 3 0.2 r\n")
    out, err = io.StringIO(), io.StringIO()
    code = main([*args, str(tmp_path / "q"), str(tmp_path / "r")], out=out, err=err)
    return code, out.getvalue()


@pytest.mark.parametrize(
    ("args", "same_as"),
    [
        (["-M", "3000000000", "-m", "P.1,5"], ["-m", "P.1,5"]),
        (["-q", "-m", "relstring.3000000000"], ["-q", "-m", "relstring.3000000000", "-M", "9"]),
        (["-q", "-m", "relstring.1e30"], ["-q", "-m", "relstring.1e30", "-M", "9"]),
    ],
)
def test_depths_beyond_any_ranking_are_the_whole_ranking(tmp_path, args, same_as):
    """trec_eval reads -M and relstring's length as C longs: past 2**31-1 (more than any
    ranking holds) they are the whole ranking; trec_eval 10 prints the same (checked by hand)."""
    code, printed = _trec_eval(tmp_path, args)
    assert (code, printed) == _trec_eval(tmp_path, same_as)
    assert code == 0 and printed
    if "relstring.3000000000" in args:
        assert printed == "relstring_3000000000  \tq1\t'1-0'\n"


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("iprec_at_recall.0.123456,-5", ["iprec_at_recall_-5.00", "iprec_at_recall_0.12"]),
        (
            "iprec_at_recall.1234567,100000",
            ["iprec_at_recall_100000.0", "iprec_at_recall_1234567."],
        ),
        ("Rprec_mult.3000000000", ["Rprec_mult_30000000"]),
        ("Rprec_mult.12345678", ["Rprec_mult_12345678"]),
    ],
)
def test_real_cutoffs_print_at_most_8_characters(spec, names):
    """As trec_eval 10 prints them (checked by hand against the binary)."""
    assert [n for r in resolve_measures([spec]) for n in r.line_names()] == names


def test_relstring_without_q_prints_nothing_and_c_still_overwrites_the_dummy(tmp_path):
    """relstring has no summary line, so without -q it is not computed; -c's overwrite of the
    missing topic's utility and rbp_resid (spec 5) still applies. By hand: q1 retrieves its one
    relevant document (utility 1, rbp_resid 0, P_5 1/5); q2 is missing, scored on the dummy
    ranking and overwritten to utility 0, rbp_resid 0 (P_5 0)."""
    import io

    from rankhouse.trec_eval.runner import main

    (tmp_path / "q").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 1.0 t\n")
    out = io.StringIO()
    args = ["-c", "-m", "relstring", "-m", "utility", "-m", "rbp_resid", "-m", "P.5"]
    assert main([*args, str(tmp_path / "q"), str(tmp_path / "r")], out=out) == 0
    assert out.getvalue() == (
        "P_5                   \tall\t0.1000\n"
        "utility               \tall\t0.5000\n"
        "rbp_resid             \tall\t0.0000\n"
    )


def test_utility_with_two_coefficients_stops_like_trec_eval(tmp_path):
    """trec_eval 10 prints nothing on stdout and exits 4 (checked against the binary)."""
    assert _trec_eval(tmp_path, ["-m", "utility.1,2", "-m", "map"]) == (4, "")


def test_the_trec_eval_doc_maps_every_trec_eval_name():
    """docs/trec_eval.md's table of trec_eval names and rankhouse measures misses none."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "trec_eval.md").read_text()
    section = doc.split("## trec_eval names and rankhouse measures", 1)[1].split("\n## ", 1)[0]
    missing = [
        name  # as written, or with trec_eval's suffix: P_k, iprec_at_recall_p
        for name in REGISTRY.trec_names()
        if not re.search(rf"(?<![\w.]){re.escape(name)}(?![A-Za-z0-9])", section)
    ]
    assert missing == ["num_q"]  # printed by trec_eval itself, not a measure per query
