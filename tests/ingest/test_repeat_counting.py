"""Repeated (query, document) pairs and tied scores are counted two ways, chosen by size:
DuckDB counts distinct hashes for small inputs, a numpy sort of the hashes does it for large
ones. Both must find the same duplicates and the same ties; these tests run each input
through both by moving the threshold."""

from __future__ import annotations

import io

import pytest

from rankhouse import InputError
from rankhouse.ingest import staging
from rankhouse.trec_eval.runner import main as trec_eval

# q1 has three documents at score 2 (two tied pairs), q2 two at score 1 (one tied pair)
RUN = (
    "q1 Q0 a 1 2 sys\nq1 Q0 b 2 2 sys\nq1 Q0 c 3 2 sys\nq1 Q0 d 4 1 sys\n"
    "q2 Q0 a 1 1 sys\nq2 Q0 b 2 1 sys\n"
)
QRELS = "q1 0 a 1\nq1 0 d 1\nq2 0 b 1\n"


@pytest.fixture(params=["duckdb", "numpy"])
def counted_by(request, monkeypatch) -> str:
    """Count repeats in DuckDB (the default for small inputs) or in numpy (threshold 0)."""
    if request.param == "numpy":
        monkeypatch.setattr(staging, "NUMPY_FROM", 0)
    return request.param


# the same rows, q1's split around q2's: the numpy way then counts over the whole run
RUN_SPLIT = (
    "q1 Q0 a 1 2 sys\nq1 Q0 b 2 2 sys\nq2 Q0 a 1 1 sys\nq2 Q0 b 2 1 sys\n"
    "q1 Q0 c 3 2 sys\nq1 Q0 d 4 1 sys\n"
)
# each layout, and the line of q2's document 'a' in it
LAYOUTS = {"together": (RUN, 5), "split": (RUN_SPLIT, 3)}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_ties_and_queries_of_a_direct_ingest(warehouse, tmp_path, counted_by, layout):
    path = tmp_path / "run.txt"
    path.write_text(LAYOUTS[layout][0])
    [result] = warehouse.ingest_run(path)
    assert (result.num_rows, result.num_queries) == (6, 2)
    with warehouse.connect() as conn:
        tied = conn.execute("SELECT tied_pairs FROM runs WHERE id = :i", {"i": result.id})
        assert tied.scalar_one() == 3


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_repeated_document_is_named_by_both_ways(warehouse, tmp_path, counted_by, layout):
    text, first = LAYOUTS[layout]
    path = tmp_path / "run.txt"
    path.write_text(text + "q2 Q0 a 3 0.5 sys\n")
    duplicate = f"document 'a' appears twice for query 'q2'.*first at line {first} .*line 7"
    with pytest.raises(InputError, match=duplicate):
        warehouse.ingest_run(path)
    assert warehouse.runs().empty


# the repeated line after the other queries' (q1 split), or among q1's own lines
REPEATED = {
    "split": RUN + "q1 Q0 a 5 0.5 sys\n",
    "together": RUN.replace("q2 Q0 a", "q1 Q0 a 5 0.5 sys\nq2 Q0 a", 1),
}


@pytest.mark.parametrize("where", REPEATED)
def test_trec_eval_finds_the_same_duplicate_both_ways(tmp_path, counted_by, where):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(QRELS)
    run.write_text(REPEATED[where])
    out, err = io.StringIO(), io.StringIO()
    code = trec_eval(["-m", "map", str(qrels), str(run)], out=out, err=err)
    # trec_eval aborts on a document retrieved twice for a topic
    assert code == 4
    assert err.getvalue().startswith("trec_eval.form_res_qrels: duplicate docs a")


# --- counting within segments (a query's rows) ----------------------------------------------


def _in_segments(lengths, *columns):
    import numpy as np

    arrays = [np.array(column) for column in columns]
    return staging.count_repeats_in_segments(np.array(lengths, dtype=np.int64), arrays)


def test_repeats_are_counted_within_each_segment_only():
    docs = [1, 2, 1, 1, 1, 2, 2]  # 1 thrice in the first segment (2 repeats); 1, 2 again later
    scores = [0.5, 0.5, 0.25, 0.5, 0.5, 0.5, 0.5]  # 0.5 thrice (2), then twice (1), then once
    assert _in_segments([4, 2, 1], docs, scores) == [2, 3]


def test_segments_of_one_length():
    docs = [3, 1, 3, 2, 2, 2, 5, 6, 7]
    scores = [1.0, 1.0, 1.0, 0.0, -0.0, 2.0, 9.0, 8.0, 9.0]
    # docs: 3 twice (1), 2 thrice (2); scores: 1.0 thrice (2), 0.0 = -0.0 (1), 9.0 twice (1)
    assert _in_segments([3, 3, 3], docs, scores) == [3, 4]


def test_padding_values_in_the_data_count_like_any_other():
    big = 2**64 - 1
    docs = [big, 5, big, big, big, big, big, 0]  # segments of 3, 1 and 4 values
    scores = [float("inf"), float("inf"), 1.0, float("-inf"), 0.0, -0.0, float("inf"), 2.0]
    # big twice in the first segment (1) and thrice in the third (2); inf twice in the first
    # (1); 0.0 and -0.0 are the same score (1)
    assert _in_segments([3, 1, 4], docs, scores) == [3, 2]


def test_segments_too_uneven_are_left_to_the_caller():
    assert _in_segments([], []) is None
    # one segment of 100 and 99 of one: a padded table 50 times the values
    assert _in_segments([100] + [1] * 99, list(range(199))) is None
    assert _in_segments([3], [9, 9, 9]) == [2]


@pytest.mark.parametrize(
    ("text", "way"), [(RUN, "segments"), (RUN_SPLIT, "whole run")], ids=["together", "split"]
)
def test_a_run_is_counted_by_query_when_its_queries_are_together(
    warehouse, tmp_path, monkeypatch, text, way
):
    monkeypatch.setattr(staging, "NUMPY_FROM", 0)
    used = []
    for module, name, label in (
        (staging, "count_repeats_in_segments", "segments"),
        (staging, "count_repeats_each", "whole run"),
    ):
        original = getattr(module, name)

        def spied(*args, _original=original, _label=label):
            used.append(_label)
            return _original(*args)

        monkeypatch.setattr(module, name, spied)
    path = tmp_path / "run.txt"
    path.write_text(text)
    warehouse.ingest_run(path)
    assert used == [way]


@pytest.mark.parametrize("block", [1, 4, 8, 1 << 20])
def test_uneven_segments_counted_a_block_of_rows_at_a_time(block, monkeypatch):
    monkeypatch.setattr(staging, "SEGMENT_BLOCK", block)
    # segments of 4, 2, 1, 3 and 2 values: repeats 2 + 1 + 0 + 1 + 0 docs, 1 + 0 + 0 + 2 + 1
    docs = [1, 2, 1, 1, 5, 5, 9, 4, 4, 3, 7, 8]
    scores = [0.5, 0.5, 0.25, 0.75, 1.0, 2.0, 3.0, 6.0, 6.0, 6.0, 1.5, 1.5]
    assert _in_segments([4, 2, 1, 3, 2], docs, scores) == [4, 4]


def test_a_run_file_may_hold_a_million_lines_by_its_size(tmp_path):
    path = tmp_path / "run.txt"
    with path.open("wb") as file:  # sparse: only the size matters
        file.truncate(staging.NUMPY_FILE_BYTES - 1)
    assert not staging.may_hold_numpy_rows(path)
    with path.open("ab") as file:
        file.write(b"\n")
    assert staging.may_hold_numpy_rows(path)
    assert not staging.may_hold_numpy_rows(tmp_path / "missing.txt")
