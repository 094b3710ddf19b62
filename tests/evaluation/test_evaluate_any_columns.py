"""Issue 35, item 4: frames and tabular files with any column names, and a ranked file with
labels.

* A column mapping is never overruled by the "looks like a run" guess: a qrels frame
  ``query, doc, SCORE`` mapped ``rel=SCORE`` is qrels, in ``rankhouse.evaluate``,
  ``Warehouse.evaluate`` and ``Warehouse.ingest_qrels``; frames and CSV/Parquet paths alike.
* ``Warehouse.evaluate`` takes ``rankhouse.evaluate``'s ``order=``, ``columns=`` and
  ``qrels_columns=`` (and ``rankhouse eval`` the options of those names).
* A ranked file with labels (``qid Q0 docid rel`` lines in rank order) is evaluated as its run
  against its qrels; given as a run it is refused with the option that evaluates it.

Expected values are computed by hand (in the comments) and by pytrec_eval on the same rankings.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import pytrec_eval

import rankhouse
from rankhouse import InputError, Warehouse

# Query 1 ranks a (grade 1), b (0), c (2); query 2 ranks x (0), y (1).
#   P@2:  q1 1/2, q2 1/2                       -> 0.5
#   AP:   q1 (1/1 + 2/3)/2 = 5/6, q2 (1/2)/1   -> (5/6 + 1/2)/2 = 2/3
#   nDCG (linear gain, log2(rank+1)):
#         q1 (1 + 2/log2 4) / (2 + 1/log2 3) = 2 / 2.63093 = 0.760188
#         q2 (1/log2 3) / 1 = 0.630930
QRELS_ROWS = [("1", "a", 1), ("1", "b", 0), ("1", "c", 2), ("2", "x", 0), ("2", "y", 1)]
RUN_ROWS = [("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0), ("2", "x", 2.0), ("2", "y", 1.0)]
EXPECTED = {"P@2": 0.5, "AP": 2 / 3}
PER_QUERY_NDCG = {"1": 2 / (2 + 1 / 1.584962500721156), "2": 1 / 1.584962500721156}
MEASURES = ["P@2", "AP"]


def _odd_qrels() -> pd.DataFrame:
    """Qrels whose grade column is named as a run's score would be."""
    return pd.DataFrame(QRELS_ROWS, columns=["query", "doc", "SCORE"])


def _odd_run() -> pd.DataFrame:
    """A run whose columns are upper case, with spaces, and one named like a qrels' grade."""
    return pd.DataFrame(RUN_ROWS, columns=["Query Id", "DOC NO", "label"])


QRELS_MAPS = [
    {"qid": "query", "docid": "doc", "rel": "SCORE"},
    "qid=query,docid=doc,rel=SCORE",
    {"query_id": "query", "doc_id": "doc", "relevance": "SCORE"},  # fields by their aliases
    {"rel": "SCORE", "docid": "doc"},  # 'query' is a recognised name already
]
RUN_MAP = {"qid": "Query Id", "docid": "DOC NO", "score": "label"}


def _means(result) -> dict[str, float]:
    row = result.summary.iloc[0]
    return {m: row[m] for m in MEASURES}


# --- a mapping is never overruled by a guess ---------------------------------------------------


@pytest.mark.parametrize("qrels_map", QRELS_MAPS, ids=["dict", "text", "aliases", "partial"])
def test_rankhouse_evaluate_takes_a_mapped_qrels_frame_as_qrels(qrels_map):
    result = rankhouse.evaluate(
        _odd_qrels(), _odd_run(), MEASURES, qrels_columns=qrels_map, columns=RUN_MAP
    )
    assert _means(result) == pytest.approx(EXPECTED)


@pytest.mark.parametrize("qrels_map", QRELS_MAPS, ids=["dict", "text", "aliases", "partial"])
def test_warehouse_evaluate_takes_the_same_mappings(qrels_map, tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        result = wh.evaluate(
            _odd_qrels(), _odd_run(), MEASURES, qrels_columns=qrels_map, columns=RUN_MAP
        )
    assert _means(result) == pytest.approx(EXPECTED)


def test_without_a_mapping_the_guess_still_names_the_qrels_a_run():
    with pytest.raises(InputError, match="the qrels given look like a run"):
        rankhouse.evaluate(_odd_qrels(), _odd_run(), MEASURES, columns=RUN_MAP)


def test_a_run_frame_mapped_with_columns_is_not_taken_for_qrels():
    # the run's 'label' column is mapped as its score: with qrels that look like a run,
    # the two would otherwise be named swapped
    qrels = _odd_qrels().rename(columns={"SCORE": "sim"})
    with pytest.raises(InputError, match="the qrels given look like a run") as raised:
        rankhouse.evaluate(qrels, _odd_run(), MEASURES, columns=RUN_MAP)
    assert "swapped" not in str(raised.value)
    result = rankhouse.evaluate(
        qrels, _odd_run(), MEASURES, qrels_columns={"rel": "sim", "docid": "doc"}, columns=RUN_MAP
    )
    assert _means(result) == pytest.approx(EXPECTED)


def test_warehouse_evaluate_s_hints_name_its_keywords(tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        qrels = _odd_qrels().rename(columns={"SCORE": "judgment"})
        with pytest.raises(InputError, match=r"pass qrels_columns=\{'rel': '<column>'\}") as err:
            wh.evaluate(qrels, _odd_run(), MEASURES, qrels_columns={"docid": "doc"})
        assert err.value.cli_text().endswith("pass --qrels-columns rel=<column>")
        with pytest.raises(InputError, match=r"pass columns=\{'qid': '<column>'"):
            wh.evaluate(_odd_qrels(), _odd_run(), MEASURES, qrels_columns=QRELS_MAPS[0])


def test_ingest_takes_mapped_frames(tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        wh.ingest_qrels(_odd_qrels(), name="q", columns=QRELS_MAPS[0])
        [run] = wh.ingest_run(_odd_run(), name="r", columns=RUN_MAP)
        result = wh.evaluate("q", run.name, MEASURES)
    assert _means(result) == pytest.approx(EXPECTED)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_tabular_paths_take_the_mappings_in_every_entry_point(tmp_path, suffix):
    qrels_path, run_path = tmp_path / f"odd_qrels{suffix}", tmp_path / f"odd_run{suffix}"
    for frame, path in [(_odd_qrels(), qrels_path), (_odd_run(), run_path)]:
        if suffix == ".csv":
            frame.to_csv(path, index=False)
        else:
            frame.to_parquet(path, index=False)
    qrels_map = "qid=query,docid=doc,rel=SCORE"
    direct = rankhouse.evaluate(
        qrels_path, run_path, MEASURES, qrels_columns=qrels_map, columns=RUN_MAP
    )
    assert _means(direct) == pytest.approx(EXPECTED)
    with Warehouse(tmp_path / "w.duckdb") as wh:
        stored = wh.evaluate(
            qrels_path, run_path, MEASURES, qrels_columns=qrels_map, columns=RUN_MAP
        )
        assert _means(stored) == pytest.approx(EXPECTED)
        wh.ingest_qrels(qrels_path, name="q2", columns=qrels_map)
        [run] = wh.ingest_run(run_path, name="r2", columns=RUN_MAP)
        assert _means(wh.evaluate("q2", run.name, MEASURES)) == pytest.approx(EXPECTED)


def test_warehouse_evaluate_takes_order(tmp_path):
    # ranks only: b first, a second; the qrels judge a relevant, so RR = 1/2
    qrels = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "label": [1, 0]})
    run = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rank": [2, 1]})
    with Warehouse(tmp_path / "w.duckdb") as wh:
        assert wh.evaluate(qrels, run, ["RR"], order="rank").summary["RR"].tolist() == [0.5]
    assert rankhouse.evaluate(qrels, run, ["RR"], order="rank").summary["RR"].tolist() == [0.5]


def test_the_cli_maps_tabular_files(run_cli, tmp_path):
    _odd_qrels().to_csv(tmp_path / "odd_qrels.csv", index=False)
    _odd_run().to_csv(tmp_path / "odd_run.csv", index=False)
    done = run_cli(
        "eval",
        "odd_qrels.csv",
        "odd_run.csv",
        "-m",
        "P@2,AP",
        "--qrels-columns",
        "qid=query,docid=doc,rel=SCORE",
        "--columns",
        "qid=Query Id,docid=DOC NO,score=label",
        "--format",
        "csv",
    )
    assert done.exit_code == 0, done.stderr
    header, row = done.stdout.splitlines()[:2]
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert float(values["P@2"]) == pytest.approx(0.5)
    assert float(values["AP"]) == pytest.approx(2 / 3, abs=1e-4)


# --- a ranked file with labels -------------------------------------------------------------


def _ranked_file(tmp_path: Path, text: str | None = None) -> Path:
    path = tmp_path / "course.txt"
    path.write_text(
        text
        if text is not None
        else "# a ranking with its labels\n1 Q0 a 1\n1 Q0 b 0\n1 Q0 c 2\n2 Q0 x 0\n2 Q0 y 1\n"
    )
    return path


def _pytrec(measure: str) -> dict[str, float]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for (q, d, g), (_, _, s) in zip(QRELS_ROWS, RUN_ROWS, strict=True):
        qrels.setdefault(q, {})[d] = g
        run.setdefault(q, {})[d] = s
    found = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    return {q: values[measure] for q, values in found.items()}


def test_a_ranked_file_is_its_run_against_its_qrels(tmp_path):
    result = rankhouse.evaluate_ranked_labels(_ranked_file(tmp_path), [*MEASURES, "nDCG"])
    assert result.summary["run"].tolist() == ["course"]  # named after the file
    assert _means(result) == pytest.approx(EXPECTED)
    per_query = result.per_query.query("measure == 'nDCG'").set_index("query")["value"]
    assert per_query.to_dict() == pytest.approx(PER_QUERY_NDCG)
    assert per_query.to_dict() == pytest.approx(_pytrec("ndcg"))
    ap = result.per_query.query("measure == 'AP'").set_index("query")["value"]
    assert ap.to_dict() == pytest.approx(_pytrec("map"))


def test_the_warehouse_stores_a_ranked_file_s_qrels_and_run(tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        result = wh.evaluate_ranked_labels(_ranked_file(tmp_path), MEASURES)
        assert _means(result) == pytest.approx(EXPECTED)
        assert result.qrels == "course"
        assert wh.run("course")["system_tag"] == "course"
        # stored: the same numbers by name
        assert _means(wh.evaluate("course", "course", MEASURES)) == pytest.approx(EXPECTED)


def test_the_line_order_is_the_ranking_whatever_the_document_ids(tmp_path):
    # trec_eval breaks score ties by document id; here there are no ties: z ranks first
    path = _ranked_file(tmp_path, "1 Q0 z 0\n1 Q0 a 1\n")
    result = rankhouse.evaluate_ranked_labels(path, ["RR"])
    assert result.summary["RR"].tolist() == [0.5]


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        ("1 Q0 a 1\n1 Q0 b\n", 2, None, "expected 4 fields, found 3"),
        ("1 Q0 a 1\n1 Q0 b 1 2.5 tag\n", 2, None, "this looks like a run line"),
        ("1 Q0 a 1\n\n1 Q0 b high\n", 3, "rel", "label 'high' is not an integer"),
        ("1 Q0 a 1\n1 Q0 b 0\n1 Q0 a 2\n", 3, "docid", "document 'a' appears twice for query"),
    ],
    ids=["fields", "run-line", "label", "twice"],
)
def test_a_malformed_ranked_file_names_file_line_and_field(tmp_path, text, line, field, words):
    path = _ranked_file(tmp_path, text)
    with pytest.raises(InputError, match=words) as raised:
        rankhouse.evaluate_ranked_labels(path, ["AP"])
    assert raised.value.source == str(path) and raised.value.line == line
    assert raised.value.field == field


def test_the_cli_evaluates_a_ranked_file(run_cli, tmp_path):
    _ranked_file(tmp_path)
    done = run_cli("eval", "--ranked-labels", "course.txt", "-m", "P@2,AP", "--format", "csv")
    assert done.exit_code == 0, done.stderr
    header, row = done.stdout.splitlines()[:2]
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert values["run"] == "course"
    assert float(values["P@2"]) == pytest.approx(0.5)
    assert float(values["AP"]) == pytest.approx(2 / 3, abs=1e-4)


def test_a_ranked_file_given_as_a_run_names_the_option(run_cli, tmp_path):
    _ranked_file(tmp_path)
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n")
    done = run_cli("eval", "qrels.txt", "course.txt", "-m", "AP")
    assert done.exit_code == 1
    assert "expected at least 6 fields, found 4 (course.txt, line 2)" in done.stderr
    assert "is evaluated with 'rankhouse eval --ranked-labels FILE'" in done.stderr
    with pytest.raises(InputError, match=r"rankhouse\.evaluate_ranked_labels\(FILE, measures\)"):
        rankhouse.evaluate(tmp_path / "qrels.txt", tmp_path / "course.txt", ["AP"])


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["qrels.txt", "--ranked-labels", "course.txt"], "drop 'qrels.txt'"),
        (["--ranked-labels", "course.txt", "--name", "x"], "apply to QRELS and RUN files"),
        ([], "Missing argument 'QRELS' (or give --ranked-labels FILE)"),
    ],
    ids=["with-qrels", "with-name", "nothing"],
)
def test_the_cli_says_what_goes_with_ranked_labels(run_cli, tmp_path, args, words):
    _ranked_file(tmp_path)
    done = run_cli("eval", *args)
    assert done.exit_code == 2
    assert words in done.stderr
