"""Measure names: every registered measure round-trips; trec_eval names map; errors help."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankhouse.errors import MeasureError
from rankhouse.measures import REGISTRY, make_measure, parse_measure, parse_measures, trec_name
from rankhouse.measures.docs import COLUMNS, catalogue_rows, markdown
from rankhouse.measures.sqlfile import load_sql, parse_sql

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "measures.md"


def _examples(definition):
    """A few concrete measures of a definition: defaults, and each parameter set."""
    samples = {int: 3, float: 0.25, str: None, bool: False}
    base = {p.name: samples[p.type] for p in definition.params if p.required}
    yield make_measure(definition, **base)
    for param in definition.params:
        value = param.choices[-1] if param.choices else samples[param.type]
        if value is not None and value != param.default:
            if definition.check is not None and param.name == "min_rel":
                value = base["max_rel"] - 1  # C/W/L: min_rel must be below max_rel
            yield make_measure(definition, **(base | {param.name: value}))


@pytest.mark.parametrize("definition", list(REGISTRY), ids=lambda d: d.name)
def test_every_registered_measure_round_trips(definition):
    for measure in _examples(definition):
        again = parse_measure(measure.name)
        assert again == measure
        assert again.name == measure.name
        assert again.params == measure.params
        trec = trec_name(measure)
        if trec is not None:
            assert parse_measure(trec) == measure


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("nDCG@10", "nDCG@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("ndcg", "nDCG"),
        ("AP(rel=2)", "AP(rel=2)"),
        ("MAP", "AP"),
        ("map", "AP"),
        ("map_cut_100", "AP@100"),
        ("gm_map", "GMAP"),
        ("P(rel=2)@5", "P(rel=2)@5"),
        ("P_5", "P@5"),
        ("RR@10", "RR@10"),
        ("recip_rank", "RR"),
        ("R@1000", "R@1000"),
        ("recall_1000", "R@1000"),
        ("IPrec@0.5", "IPrec@0.5"),
        ("iprec_at_recall_0.50", "IPrec@0.5"),
        ("success_1", "Success@1"),
        ("nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@10"),
        ("nDCG(dcg='log2')@10", "nDCG@10"),
        ("num_rel_ret", "NumRelRet"),
        ("ERR(max_grade=3)@20", "ERR(max_grade=3)@20"),
    ],
)
def test_names_parse_to_canonical(text, canonical):
    assert parse_measure(text).name == canonical


def test_trec_eval_printed_names():
    assert [
        trec_name(m) for m in parse_measures(["P@5", "IPrec@0.1", "nDCG@10", "AP", "RR@10"])
    ] == ["P_5", "iprec_at_recall_0.10", "ndcg_cut_10", "map", None]


def test_lists_expand_and_duplicates_drop():
    names = [m.name for m in parse_measures(["ndcg_cut.10,20", "nDCG@10", "P_5", "success"])]
    assert names == ["nDCG@10", "nDCG@20", "P@5", "Success@1", "Success@5", "Success@10"]
    assert len(parse_measures(["P"])) == 9


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ndcg_cutt_10", r"unknown measure 'ndcg_cutt_10'; did you mean ndcg_cut_10 \(nDCG@10\)"),
        ("nDGC@10", r"unknown measure 'nDGC@10'; did you mean nDCG@10\?"),
        ("P", r"'P' stands for 9 measures"),
        ("P@0", r"cutoff must be >= 1"),
        ("AP(foo=1)", r"AP takes parameters cutoff, rel"),
        ("nDCG(dcg='exp')@5", r"dcg must be one of 'log2', 'exp-log2'"),
        ("Rprec@5", r"Rprec takes no @cutoff"),
        ("P.", r"no parameters after"),
        ("IPrec", r"IPrec needs its recall"),
        ("P@3000000000", r"cutoff must be a 32-bit integer \(-2147483648 to 2147483647\)"),
        ("AP(rel=2147483648)", r"AP: parameter rel must be a 32-bit integer"),
    ],
)
def test_bad_names_are_explained(text, message):
    with pytest.raises(MeasureError, match=message):
        parse_measure(text)


def test_docs_table_matches_the_registry():
    assert DOCS.read_text() == markdown(), (
        "docs/measures.md is stale: python -m rankhouse.measures.docs > docs/measures.md"
    )


def test_every_family_file_loads_and_declares_its_binds():
    for family in REGISTRY.families.values():
        sql = load_sql(family.sql)
        if family.list_bind:
            assert family.list_bind in sql.params
    assert set(load_sql("ranking.sql").params) >= {"run_ids", "qrels_id", "levels"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "-- :a  INTEGER  x\nSELECT :a + :b\n",
            r"x.sql line 2: parameter :b is used but not declared",
        ),
        (
            "-- :a  INTEGER  x\n-- :b  INTEGER  y\nSELECT :a\n",
            r"x.sql line 2: parameter :b is declared but never used",
        ),
        (
            "-- :a  INTEGER  x\nSELECT 1 +\n  :a::INTEGER\n",
            r"x.sql line 3: write CAST\(:name AS TYPE\)",
        ),
    ],
)
def test_sql_loader_checks_declared_against_used(text, message):
    with pytest.raises(MeasureError, match=message):
        parse_sql(text, "measures/x.sql")


def test_sql_loader_ignores_casts_strings_and_comments():
    sql = parse_sql(
        "-- :a  INTEGER  x\nSELECT CAST(:a AS INTEGER), 1::DOUBLE, ':b' -- :c\n", "x.sql"
    )
    assert sql.params == {"a": "INTEGER"}


def test_cli_lists_the_catalogue(run_cli):
    result = run_cli("measures", "--format", "tsv")
    assert result.exit_code == 0, result.stderr
    rows = [line.split("\t")[0] for line in result.stdout.splitlines()[1:]]
    assert rows == [d.name for d in REGISTRY]


def test_the_catalogue_names_the_sql_file_of_every_measure(run_cli):
    for row in catalogue_rows():
        path = row[COLUMNS.index("sql")]
        assert path.startswith("sql/measures/") and (ROOT / path).is_file(), row[0]
    one = run_cli("measures", "ndcg_cut_10", "--format", "tsv")
    header, row = one.stdout.splitlines()
    assert dict(zip(header.split("\t"), row.split("\t"), strict=True))["sql"] == (
        "sql/measures/ndcg.sql"
    )


def test_cli_shows_one_measure_and_rejects_unknown(run_cli):
    one = run_cli("measures", "ndcg_cut_10", "--format", "csv")
    assert one.exit_code == 0
    assert one.stdout.splitlines()[1].startswith("nDCG,")
    bad = run_cli("measures", "ndcg_cutt")
    assert bad.exit_code == 1
    assert "Error: unknown measure 'ndcg_cutt'; did you mean ndcg_cut" in bad.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ndgc@10", "unknown measure 'ndgc@10'; did you mean nDCG@10?"),
        (
            "ndcg@10",
            "unknown measure 'ndcg@10'; measure names are case-sensitive: did you mean nDCG@10?",
        ),
        (
            "p(rel=2)@5",
            "unknown measure 'p(rel=2)@5'; measure names are case-sensitive: did you mean "
            "P(rel=2)@5?",
        ),
        ("ap", "unknown measure 'ap'; measure names are case-sensitive: did you mean AP?"),
        ("recip_rnk", "unknown measure 'recip_rnk'; did you mean recip_rank (RR)?"),
        (
            "ndcg_cutt_10",
            "unknown measure 'ndcg_cutt_10'; did you mean ndcg_cut_10 (nDCG@10), ndcg_cut?",
        ),
    ],
)
def test_suggestions_are_whole_names_that_parse(text, message):
    with pytest.raises(MeasureError) as raised:
        parse_measure(text)
    assert str(raised.value).startswith(message)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("nDCG@10,AP", ["nDCG@10", "AP"]),
        ("AP, P(rel=2)@5 ,RR", ["AP", "P(rel=2)@5", "RR"]),
        ("map,P_5", ["AP", "P@5"]),
        # trec_eval's lists and parameters keep their meaning
        ("P.5,10", ["P@5", "P@10"]),
        ("ndcg_cut.10,20", ["nDCG@10", "nDCG@20"]),
        ("utility.1,-1,0,0", ["Utility"]),
        ("Utility(rel_ret=2.0,nonrel_ret=-1.0)", ["Utility(rel_ret=2.0)"]),
    ],
)
def test_a_comma_list_is_several_measures(text, names):
    assert [m.name for m in parse_measures([text])] == names


def test_a_comma_list_with_a_bad_name_says_which():
    with pytest.raises(MeasureError) as raised:
        parse_measures(["nDCG@10,APP"])
    assert str(raised.value).startswith(
        "'nDCG@10,APP' is not one measure, and as measures separated by commas: unknown "
        "measure 'APP'; did you mean AP?"
    )


def test_cli_measure_names(run_cli):
    examples = Path(__file__).resolve().parents[2] / "examples"
    files = [examples / "qrels.txt", examples / "run.bm25.txt"]
    case = run_cli("eval", *files, "-m", "ndcg@10")
    assert case.exit_code == 1
    assert case.stderr == (
        "Error: unknown measure 'ndcg@10'; measure names are case-sensitive: did you mean "
        "nDCG@10?\n"
    )
    typo = run_cli("eval", *files, "-m", "ndgc@10")
    assert typo.stderr == (
        "Error: unknown measure 'ndgc@10'; did you mean nDCG@10? (`rankhouse measures` lists "
        "them all)\n"
    )
    listed = run_cli("eval", *files, "-m", "nDCG@10,AP", "-f", "csv")
    assert listed.exit_code == 0, listed.stderr
    header = listed.stdout.splitlines()[0]
    assert header == "run,num_q,nDCG@10,nDCG@10 low,nDCG@10 high,AP,AP low,AP high"


def test_python_errors_point_to_python():
    with pytest.raises(MeasureError) as raised:
        parse_measure("ndgc@10")
    assert str(raised.value).endswith("(rankhouse.measures.docs.catalogue() lists them all)")
