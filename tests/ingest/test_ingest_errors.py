"""Bad input: the error names file, line and field, and the warehouse is left exactly as it was."""

from __future__ import annotations

import gzip

import pytest

from rankhouse import InputError

GOOD_RUN = "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n"
GOOD_QRELS = "1 0 a 1\n1 0 b 0\n"


def snapshot(wh) -> dict:
    with wh.connect() as conn:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").scalar()
            for table in ("runs", "run_rows", "qrels_sets", "judgments")
        } | {"names": conn.execute("SELECT name FROM runs ORDER BY id").scalars().all()}


RUN_CASES = [
    (
        "too few fields",
        GOOD_RUN + "1 Q0 c 3 0.5\n",
        r"expected at least 6 fields, found 5 \(.*bad, line 3\)",
    ),
    (
        "score not a number",
        GOOD_RUN + "\n1 Q0 c 3 1.5abc t\n",
        r"score '1.5abc' is not a number \(.*line 4, field 'score'\)",
    ),
    ("nan score", "1 Q0 a 1 nan t\n", r"score 'nan' is NaN \(.*line 1, field 'score'\)"),
    (
        "duplicate",
        GOOD_RUN + "1 Q0 a 3 0.1 t\n",
        r"document 'a' appears twice for query '1' of run 't', first at line 1 "
        r"\(.*line 3, field 'docid'\)",
    ),
    (
        "score not a number, every line regular",
        GOOD_RUN + "1 Q0 c 3 1.5abc t\n",
        r"score '1.5abc' is not a number \(.*line 3, field 'score'\)",
    ),
    (
        "duplicate with the same score",
        GOOD_RUN + "1 Q0 b 3 1.0 t\n",
        r"document 'b' appears twice for query '1' of run 't', first at line 2 "
        r"\(.*line 3, field 'docid'\)",
    ),
    ("empty", "", r"no data lines"),
    ("only comments", "# nothing\n\n", r"no data lines"),
    ("qrels line in a run", "1 0 a 1\n", r"found 4 .*ingest it with Warehouse.ingest_qrels"),
]


@pytest.mark.parametrize(("case", "text", "pattern"), RUN_CASES, ids=[c[0] for c in RUN_CASES])
def test_bad_run_is_rejected_and_changes_nothing(warehouse, tmp_path, case, text, pattern):
    good = tmp_path / "good.txt"
    good.write_text(GOOD_RUN)
    warehouse.ingest_run(good, name="kept")
    before = snapshot(warehouse)
    bad = tmp_path / "bad"
    bad.write_text(text)
    with pytest.raises(InputError, match=pattern):
        warehouse.ingest_run(bad)
    assert snapshot(warehouse) == before


@pytest.mark.parametrize(("case", "text", "pattern"), RUN_CASES, ids=[c[0] for c in RUN_CASES])
def test_direct_and_staged_paths_give_the_same_error(
    warehouse, tmp_path, monkeypatch, case, text, pattern
):
    """Regular one-tag files are read straight into run_rows; without that path (the stage,
    which every other file takes) the error must be word for word the same."""
    from rankhouse.ingest import storing

    bad = tmp_path / "bad"
    bad.write_text(text)
    with pytest.raises(InputError) as direct:
        warehouse.ingest_run(bad)
    monkeypatch.setattr(storing, "eligible", lambda src, mapping: None)
    with pytest.raises(InputError) as staged:
        warehouse.ingest_run(bad)
    assert str(direct.value) == str(staged.value)
    assert snapshot(warehouse)["run_rows"] == 0


QRELS_CASES = [
    ("five fields", GOOD_QRELS + "1 0 c 1 x\n", r"expected 4 fields, found 5 \(.*line 3\)"),
    (
        "fractional grade",
        GOOD_QRELS + "1 0 c 1.7\n",
        r"grade '1.7' is not an integer \(.*line 3, field 'rel'\); the 4th field",
    ),
    (
        "duplicate",
        GOOD_QRELS + "# c\n1 0 a 2\n",
        r"document 'a' appears twice for query '1', first at line 1 \(.*line 4, field 'docid'\)",
    ),
    ("run line", "1 Q0 a 1 2.0 t\n", r"looks like a run line"),
]


@pytest.mark.parametrize(("case", "text", "pattern"), QRELS_CASES, ids=[c[0] for c in QRELS_CASES])
def test_bad_qrels_is_rejected_and_changes_nothing(warehouse, tmp_path, case, text, pattern):
    warehouse.ingest_qrels(_write(tmp_path / "good.txt", GOOD_QRELS))
    before = snapshot(warehouse)
    with pytest.raises(InputError, match=pattern):
        warehouse.ingest_qrels(_write(tmp_path / "bad.txt", text))
    assert snapshot(warehouse) == before


def _write(path, text):
    path.write_text(text)
    return path


def test_bad_utf8_names_the_line(warehouse, tmp_path):
    path = tmp_path / "latin1.txt.gz"
    path.write_bytes(gzip.compress(b"1 Q0 a 1 2.0 t\n1 Q0 caf\xe9 2 1.0 t\n"))
    before = snapshot(warehouse)
    with pytest.raises(InputError, match=r"not UTF-8 at column 9 \(.*latin1.txt.gz, line 2\)"):
        warehouse.ingest_run(path)
    assert snapshot(warehouse) == before


def test_missing_file(warehouse, tmp_path):
    with pytest.raises(InputError, match=r"no such file \(.*nope.txt\)"):
        warehouse.ingest_run(tmp_path / "nope.txt")


def test_large_regular_file_with_one_bad_line_far_down(warehouse, tmp_path):
    path = tmp_path / "big.run"
    lines = [f"{q} Q0 d{d} {d} {1.0 / (d + 1)} big" for q in range(200) for d in range(100)]
    lines[15_000] = "150 Q0 d0 1 oops big"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"score 'oops' is not a number \(.*line 15001"):
        warehouse.ingest_run(path)
    assert snapshot(warehouse)["run_rows"] == 0
