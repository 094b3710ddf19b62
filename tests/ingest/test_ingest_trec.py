"""TREC text ingest: trec_eval's own files, gzip, dedup, several tags, --order rank."""

from __future__ import annotations

import gzip
import shutil
from collections import Counter
from pathlib import Path

import pytest


def _data_lines(path: Path) -> list[list[str]]:
    return [
        line.split()
        for line in path.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _scalar(wh, sql: str, **params):
    with wh.connect() as conn:
        return conn.execute((sql), params).scalar()


@pytest.mark.parametrize("name", ["qrels.test", "qrels.rel_level"])
def test_trec_eval_qrels_counts(warehouse, trec_eval_tests, name):
    lines = _data_lines(trec_eval_tests / name)
    result = warehouse.ingest_qrels(trec_eval_tests / name)
    assert result.created and result.kind == "qrels" and result.name == name
    assert result.num_rows == len(lines)
    assert result.num_queries == len({f[0] for f in lines})
    with warehouse.connect() as conn:
        grades = dict(
            conn.execute(
                "SELECT grade, count(*) FROM judgments WHERE qrels_id = :i GROUP BY grade",
                {"i": result.id},
            ).fetchall()
        )
    assert grades == dict(Counter(int(f[3]) for f in lines))
    row = warehouse.qrels(name)
    assert row["num_relevant"] == sum(int(f[3]) >= 1 for f in lines)
    assert row["min_grade"] == min(int(f[3]) for f in lines)


@pytest.mark.parametrize("name", ["results.test", "results.trunc"])
def test_trec_eval_runs_counts_and_positions(warehouse, trec_eval_tests, name):
    lines = _data_lines(trec_eval_tests / name)
    [result] = warehouse.ingest_run(trec_eval_tests / name, name=name)
    assert (result.system_tag, result.num_rows) == ("STANDARD", len(lines))
    assert result.num_queries == len({f[0] for f in lines})
    # positions follow trec_eval's order: score descending, then docno descending
    query = lines[0][0]
    expected = sorted(
        (f for f in lines if f[0] == query),
        key=lambda f: (-float(f[4]), [-b for b in f[2].encode()]),
    )
    with warehouse.connect() as conn:
        got = (
            conn.execute(
                (
                    "SELECT doc_id FROM run_ranking WHERE run_id = :r AND query_id = :q "
                    "ORDER BY position"
                ),
                {"r": result.id, "q": query},
            )
            .scalars()
            .all()
        )
    assert got == [f[2] for f in expected]
    # tied pairs: documents whose score equals an earlier one of the same query
    scores = Counter((f[0], float(f[4])) for f in lines)
    tied = sum(count - 1 for count in scores.values())
    assert tied > 0
    assert _scalar(warehouse, "SELECT tied_pairs FROM runs WHERE id = :i", i=result.id) == tied


def test_gzip_and_plain_share_hash_and_dedup(warehouse, trec_eval_tests, tmp_path):
    plain = tmp_path / "run.txt"
    shutil.copy(trec_eval_tests / "results.test", plain)
    packed = tmp_path / "other.run.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    [first] = warehouse.ingest_run(plain)
    [second] = warehouse.ingest_run(packed)
    assert first.created and not second.created and second.id == first.id
    assert _scalar(warehouse, "SELECT count(*) FROM run_rows") == 1500
    q1 = warehouse.ingest_qrels(trec_eval_tests / "qrels.test")
    gz = tmp_path / "q.txt.gz"
    gz.write_bytes(gzip.compress((trec_eval_tests / "qrels.test").read_bytes()))
    q2 = warehouse.ingest_qrels(gz)
    assert not q2.created and q2.id == q1.id


def test_multi_tag_file_gives_one_run_per_tag_and_reingest_is_noop(warehouse, tmp_path):
    path = tmp_path / "systems.txt"
    lines = [f"{q} Q0 d{d} {d} {10 - d}.5 sys{s}" for s in "abc" for q in (1, 2) for d in range(4)]
    path.write_text("# three systems\n" + "\n".join(lines) + "\n\n")
    results = warehouse.ingest_run(path, name="exp")
    assert [(r.name, r.system_tag, r.num_queries, r.num_rows) for r in results] == [
        (f"exp/sys{s}", f"sys{s}", 2, 8) for s in "abc"
    ]
    again = warehouse.ingest_run(path, name="exp")
    assert [r.created for r in again] == [False] * 3
    assert [r.id for r in again] == [r.id for r in results]
    assert _scalar(warehouse, "SELECT count(*) FROM run_rows") == 24
    assert _scalar(warehouse, "SELECT count(*) FROM runs") == 3
    without_name = warehouse.ingest_run(path, order="rank")  # other parse options: new runs
    assert [r.name for r in without_name] == ["sysa", "sysb", "sysc"]


def test_order_rank_positions_follow_given_ranks(warehouse, tmp_path):
    path = tmp_path / "ranked.run"
    # scores disagree with ranks; with --order rank the ranks win
    path.write_text("7 Q0 a 3 9.0 t\n7 Q0 b 1 0.0 t\n7 Q0 c 2 5.0 t\n")
    [result] = warehouse.ingest_run(path, order="rank", meta={"model": "bm25"})
    with warehouse.connect() as conn:
        rows = conn.execute(
            "SELECT doc_id, rank, score, position FROM run_ranking ORDER BY position"
        ).fetchall()
    assert rows == [("b", 1, -1.0, 1), ("c", 2, -2.0, 2), ("a", 3, -3.0, 3)]
    meta = warehouse.run(result.id)["metadata"]
    assert meta["score_derived_from"] == "rank" and meta["model"] == "bm25"
    assert meta["source"] == str(path.resolve()) and len(meta["content_sha256"]) == 64


def test_whitespace_comments_and_ids_stay_strings(warehouse, tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_bytes(
        b"# comment\r\n010\t0  d1 1\r\n\n   # indented comment\n10 0 d1   2\n  \n10 0 D2 0\n"
    )
    result = warehouse.ingest_qrels(path)
    assert (result.num_queries, result.num_rows) == (2, 3)
    with warehouse.connect() as conn:
        rows = conn.execute(
            "SELECT query_id, doc_id, grade FROM judgments ORDER BY query_id, doc_id"
        ).fetchall()
    assert rows == [("010", "d1", 1), ("10", "D2", 0), ("10", "d1", 2)]


def test_tag_changing_after_regular_lines_still_gives_one_run_per_tag(warehouse, tmp_path):
    # the first lines are regular with tag a (the direct path starts), a later line has tag b
    path = tmp_path / "two.txt"
    lines = [f"{q} Q0 d{d} {d} {10 - d} a" for q in (1, 2) for d in range(3)]
    lines += [f"{q} Q0 d{d} {d} {d} b" for q in (1, 3) for d in range(2)]
    path.write_text("\n".join(lines) + "\n")
    results = warehouse.ingest_run(path)
    assert [(r.name, r.num_queries, r.num_rows) for r in results] == [("a", 2, 6), ("b", 2, 4)]
    assert _scalar(warehouse, "SELECT count(*) FROM run_rows") == 10


def test_same_content_under_a_new_name_is_not_stored_twice(warehouse, trec_eval_tests, tmp_path):
    path = tmp_path / "copy.run"
    shutil.copy(trec_eval_tests / "results.test", path)
    [first] = warehouse.ingest_run(path, name="one")
    [second] = warehouse.ingest_run(path, name="two")
    [third] = warehouse.ingest_run(path, name="one")
    assert first.created and (second.created, third.created) == (False, False)
    assert second.id == third.id == first.id and second.name == "one"
    assert _scalar(warehouse, "SELECT count(*) FROM run_rows") == 1500
    assert _scalar(warehouse, "SELECT count(*) FROM runs") == 1


def test_same_name_different_content_conflicts_unless_replace(warehouse, tmp_path):
    from rankhouse import ConflictError

    one, two = tmp_path / "a.txt", tmp_path / "b.txt"
    one.write_text("1 Q0 d 1 1.0 t\n")
    two.write_text("1 Q0 e 1 1.0 t\n")
    [first] = warehouse.ingest_run(one, name="x")
    with pytest.raises(ConflictError, match="'x' is already used by different content"):
        warehouse.ingest_run(two, name="x")
    [second] = warehouse.ingest_run(two, name="x", replace=True)
    assert second.created and second.id != first.id
    assert warehouse.runs()["name"].tolist() == ["x"]
    assert _scalar(warehouse, "SELECT doc_id FROM run_rows") == "e"


@pytest.mark.parametrize("stray", [b"\t", b"\x0b", b"\x0c"])
def test_regular_first_line_then_other_whitespace_is_split_like_whitespace(
    warehouse, tmp_path, stray
):
    # The first lines are fields joined by single spaces (the fixed-column fast path), a later
    # line separates two fields with other whitespace: it must still give the same fields.
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\nq1 Q0 c" + stray + b"3 1.0 t\n")
    [result] = warehouse.ingest_run(path)
    assert result.num_rows == 3
    with warehouse.connect() as conn:
        rows = conn.execute(
            "SELECT doc_id, rank, score FROM run_ranking ORDER BY position"
        ).fetchall()
    assert rows == [("a", 1, 3.0), ("b", 2, 2.0), ("c", 3, 1.0)]


@pytest.mark.parametrize("compressed", [False, True])
def test_odd_bytes_are_found_with_or_without_the_hash(tmp_path, compressed):
    """trec-eval without a warehouse scans a run for odd bytes without hashing it; the scan
    finds what the hashing scan finds (here a tab and a carriage return, past the first MiB)."""
    import hashlib

    from rankhouse.ingest.files import file_odd_bytes, file_sha256

    text = b"1 Q0 d 1 1.0 r\n" * 100_000 + b"2\tQ0 d 1 1.0 r\r\n"
    path = tmp_path / ("run.gz" if compressed else "run")
    path.write_bytes(gzip.compress(text) if compressed else text)
    seen: set[int] = set()
    assert file_sha256(path, seen_whitespace=seen) == hashlib.sha256(text).hexdigest()
    assert seen == {ord(" "), ord("\t"), ord("\r")}
    assert file_odd_bytes(path) == seen


def test_stored_qrels_given_again_are_found_by_hash_without_a_parse(
    warehouse, tmp_path, monkeypatch
):
    """The same qrels file under its stored name is recognised by its hash; other content
    under that name is still read (and stored as the name's next version)."""
    from rankhouse.ingest import trec

    path = tmp_path / "judged.txt"
    path.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    first = warehouse.ingest_qrels(path)

    def refuse(*args, **kwargs):
        raise AssertionError("stored content was read again")

    with monkeypatch.context() as patch:
        patch.setattr(trec, "stage", refuse)
        again = warehouse.ingest_qrels(path)
    assert (again.id, again.name, again.created) == (first.id, "judged", False)
    assert (again.num_queries, again.num_rows) == (2, 3)
    path.write_text("1 0 a 1\n1 0 b 1\n")
    newer = warehouse.ingest_qrels(path)  # read, and stored as the name's next version
    assert (newer.name, newer.created, newer.num_rows) == ("judged@2", True, 2)
