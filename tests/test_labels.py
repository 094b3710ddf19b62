"""A stored value's label says how it was computed: settings never share a label.

Hand-computed data: qrels q1 {a: 2, b: 1, c: 0}, q2 {d: 1, e: 2}, q3 {f: 2}; run ``bm25``
ranks q1 b, a, c and q2 d, e and does not answer q3.

* AP (level 1): q1 1, q2 1, q3 0 -> 2/3; skipping q3: 1.
* AP(rel=2): q1 a at rank 2 -> 1/2, q2 e at rank 2 -> 1/2, q3 0 -> 1/3; skipping q3: 1/2.

Run file ``bm25-v2.run`` (same tag, stored as ``bm25@2`` when evaluated) ranks q1 a, b, c
and q2 e, d: AP 2/3, AP(rel=2) 2/3.
"""

from __future__ import annotations

import json

import pytest

from rankhouse import Warehouse
from rankhouse.labels import label, requested_labels
from rankhouse.measures import parse_measure

QRELS = "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 d 1\nq2 0 e 2\nq3 0 f 2\n"
BM25 = "q1 Q0 b 1 3 bm25\nq1 Q0 a 2 2 bm25\nq1 Q0 c 3 1 bm25\nq2 Q0 d 1 2 bm25\nq2 Q0 e 2 1 bm25\n"
BM25_V2 = (
    "q1 Q0 a 1 3 bm25\nq1 Q0 b 2 2 bm25\nq1 Q0 c 3 1 bm25\nq2 Q0 e 1 2 bm25\nq2 Q0 d 2 1 bm25\n"
)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "bm25.run").write_text(BM25)
    (tmp_path / "bm25-v2.run").write_text(BM25_V2)
    return tmp_path


@pytest.fixture
def stored(files, run_cli):
    """The warehouse holds qrels 'dl19' and run 'bm25'."""
    assert run_cli("ingest", "qrels", "qrels.txt", "--name", "dl19").exit_code == 0
    assert run_cli("ingest", "run", "bm25.run").exit_code == 0
    return run_cli


def _json(result):
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    ("name", "level", "policy", "options", "expected"),
    [
        ("AP", 1, "zero", {}, "AP"),
        ("AP", 2, "zero", {}, "AP(rel=2)"),
        ("P@10", 2, "zero", {}, "P(rel=2)@10"),
        ("AP(rel=3)", 2, "zero", {}, "AP(rel=3)"),  # the measure's own level wins
        ("SetF(beta=0.5)", 2, "zero", {}, "SetF(beta=0.5,rel=2)"),
        ("nDCG@10", 2, "zero", {}, "nDCG@10"),  # graded: the level does not apply
        ("AP", 1, "skip", {}, "AP [missing_queries=skip]"),
        (
            "P@5",
            3,
            "skip",
            {"max_rank": 100, "judged_only": True},
            "P(rel=3)@5 [missing_queries=skip, judged_only=true, max_rank=100]",
        ),
        ("AP", 1, "zero", {"max_rank": None, "judged_only": False}, "AP"),
    ],
)
def test_label_grammar(name, level, policy, options, expected):
    assert label(parse_measure(name), level, policy, options) == expected
    assert requested_labels([expected]) == [expected]  # a label stands for itself


def test_names_with_settings_give_labels():
    assert requested_labels(["map", "AP(rel=2)", "P_5"], 2) == ["AP(rel=2)", "P(rel=2)@5"]
    assert requested_labels(["AP"], 1, "skip") == ["AP [missing_queries=skip]"]


def test_history_shows_each_setting_under_its_own_label(stored):
    """The reproducer: `eval -m AP -l 2` then `history -m AP` showed the rel=2 value as AP."""
    at_two = stored("eval", "dl19", "bm25", "-m", "AP", "-l", "2", "-f", "csv")
    assert at_two.exit_code == 0, at_two.stderr
    header, row = at_two.stdout.splitlines()
    assert header == "run,num_q,AP(rel=2),AP(rel=2) low,AP(rel=2) high"
    assert row.split(",")[:3] == ["bm25", "3", f"{1 / 3!r}"]
    plain = stored("history", "--run", "bm25", "-m", "AP", "-f", "json")
    assert _json(plain) == []
    assert "note: no stored value of AP; stored at other settings: AP(rel=2)" in plain.stderr
    for args in (["-m", "AP", "-l", "2"], ["-m", "AP(rel=2)"]):
        [row] = _json(stored("history", "--run", "bm25", *args, "-f", "json"))
        assert row["AP(rel=2)"] == pytest.approx(1 / 3) and "AP" not in row

    assert stored("eval", "dl19", "bm25", "-m", "AP").exit_code == 0
    assert stored("eval", "dl19", "bm25", "-m", "AP", "--missing-queries", "skip").exit_code == 0
    [row] = _json(stored("history", "--run", "bm25", "-f", "json"))
    assert row["AP"] == pytest.approx(2 / 3)
    assert row["AP(rel=2)"] == pytest.approx(1 / 3)
    assert row["AP [missing_queries=skip]"] == pytest.approx(1.0)
    [row] = _json(stored("history", "-m", "AP", "--missing-queries", "skip", "-f", "json"))
    assert list(row)[-6:] == [
        "AP [missing_queries=skip]",
        "AP [missing_queries=skip] low",
        "AP [missing_queries=skip] high",
        "inputs",
        "new_inputs",
        "gate",
    ]


def test_history_does_not_depend_on_which_evaluation_is_newest(files, db_path):
    shown = []
    for levels in ([1, 2], [2, 1]):
        target = db_path.with_name(f"order-{levels[0]}.duckdb")
        with Warehouse(target) as wh:
            for level in levels:
                wh.evaluate(
                    qrels=str(files / "qrels.txt"),
                    runs=str(files / "bm25.run"),
                    measures=["AP", "P@2"],
                    relevance_level=level,
                )
            frame = wh.history(measures=["AP", "AP(rel=2)", "P@2", "P(rel=2)@2"])
            shown.append(frame.iloc[0][["AP", "AP(rel=2)", "P@2", "P(rel=2)@2"]].tolist())
    assert shown[0] == shown[1] == pytest.approx([2 / 3, 1 / 3, 2 / 3, 1 / 3])


def test_views_show_labels(stored):
    for args in (["-l", "2"], [], ["--missing-queries", "skip"]):
        assert stored("eval", "dl19", "bm25", "-m", "AP", *args).exit_code == 0
    latest = _json(
        stored(
            "sql",
            "SELECT measure, value, relevance_level, missing_queries FROM latest_evaluations "
            "ORDER BY measure",
            "--format",
            "json",
        )
    )
    assert [(r["measure"], r["relevance_level"], r["missing_queries"]) for r in latest] == [
        ("AP", 1, "zero"),
        ("AP [missing_queries=skip]", 1, "skip"),
        ("AP(rel=2)", 2, "zero"),
    ]
    assert [r["value"] for r in latest] == pytest.approx([2 / 3, 1.0, 1 / 3])
    values = _json(
        stored(
            "sql",
            "SELECT query_id, value FROM query_values WHERE measure = 'AP(rel=2)' "
            "ORDER BY query_id",
            "--format",
            "json",
        )
    )
    assert [(v["query_id"], v["value"]) for v in values] == [("q1", 0.5), ("q2", 0.5), ("q3", 0)]
    # The README's questions ask for measure = 'AP': the value at the default setting only.
    only = _json(
        stored("sql", "SELECT value FROM latest_evaluations WHERE measure = 'AP'", "-f", "json")
    )
    assert only == [{"value": pytest.approx(2 / 3)}]


def test_one_label_is_one_computation(files, any_warehouse):
    warehouse = any_warehouse
    result = warehouse.evaluate(
        qrels=str(files / "qrels.txt"),
        runs=str(files / "bm25.run"),
        measures=["AP", "AP(rel=2)"],
        relevance_level=2,
    )
    assert result.aggregates["label"].tolist() == ["AP(rel=2)"]
    assert result.labels == {"AP": "AP(rel=2)", "AP(rel=2)": "AP(rel=2)"}
    assert result.aggregates["value"].tolist() == pytest.approx([1 / 3])


def test_compare_and_regress_label_their_measures(files, any_warehouse):
    warehouse = any_warehouse
    qrels, runs = str(files / "qrels.txt"), [str(files / "bm25.run"), str(files / "bm25-v2.run")]
    compared = warehouse.compare(
        qrels=qrels, runs=runs, measures=["AP"], baseline=runs[0], relevance_level=2
    )
    assert compared["measure"].tolist() == ["AP(rel=2)", "AP(rel=2)"]
    assert compared["mean"].tolist() == pytest.approx([1 / 3, 2 / 3])

    from rankhouse.regress import regress

    result = regress(
        warehouse,
        "bm25@2",
        baseline="bm25",
        qrels=qrels,
        measures=["AP"],
        relevance_level=2,
        mode="significance",
    )
    assert result.verdicts["measure"].tolist() == ["AP(rel=2)"]
    assert result.verdicts["status"].tolist() == ["improved"]
    with warehouse.connect() as conn:
        rows = conn.execute("SELECT measure, status FROM regress_results").all()
    assert rows == [("AP(rel=2)", "improved")]


def test_trec_eval_options_are_in_the_label(files, run_cli):
    for extra in ([], ["-M", "1"], ["-J"], ["-l", "2"]):
        result = run_cli("trec-eval", "-c", *extra, "-m", "map", "qrels.txt", "bm25.run")
        assert result.exit_code == 0, result.stderr
    latest = _json(
        run_cli("sql", "SELECT measure FROM latest_evaluations ORDER BY measure", "-f", "json")
    )
    assert [r["measure"] for r in latest] == [
        "AP",
        "AP [judged_only=true]",
        "AP [max_rank=1]",
        "AP(rel=2)",
    ]


#: Names at settings that give labels of every form: plain, with parameters, a cutoff list,
#: trec_eval names, and the bracketed settings of a level, a policy and an option.
_LABELLED = [
    ("AP", 1, "zero", None),
    ("nDCG@10", 1, "zero", None),
    ("RBP(p=0.8)", 1, "zero", None),
    ("ndcg_cut.10,20", 1, "zero", None),
    ("set_F.0.5", 1, "zero", None),
    ("P_5", 2, "zero", None),
    ("AP", 1, "skip", None),
    ("Rprec", 2, "skip", {"max_rank": 3}),
    ("AP(rel=2)", 1, "zero", {"judged_only": True}),
]


def test_a_stored_label_stands_for_itself(files, tmp_path):
    """``history -m LABEL`` takes a stored label as itself without parsing it
    (:func:`rankhouse.history.wanted_labels`): the parser must say the same of every label an
    evaluation stores, and the history it selects must be the one the parser selects."""
    from rankhouse.history import history_rows, wanted_labels

    wh = Warehouse(tmp_path / "labels.duckdb")
    for name, level, policy, options in _LABELLED:
        wh.evaluate(
            files / "qrels.txt",
            files / "bm25.run",
            [name],
            relevance_level=level,
            missing_queries=policy,
            options=options,
        )
    with wh.connect() as conn:
        stored = conn.execute("SELECT DISTINCT label FROM evaluations ORDER BY label").scalars()
    assert len(stored) >= len(_LABELLED)
    for text in stored:
        assert requested_labels([text]) == [text]
        assert wanted_labels(wh, [text], 1, "zero") == [text]
        parsed = history_rows(wh, measures=[text])
        assert parsed.measures == [text]
    # a name that is no stored label goes to the parser: its label, not the text
    assert "AP [missing_queries=skip]" in stored and "RBP" in stored
    assert wanted_labels(wh, ["RBP(p=0.8)"], 1, "zero") == ["RBP"]
    assert wanted_labels(wh, ["AP"], 2, "zero") == ["AP(rel=2)"]
