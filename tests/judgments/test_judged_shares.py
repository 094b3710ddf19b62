"""The judged shares stored with each evaluation (issue 38 item 5, migration 0020): per query the
run answered that the qrels judge, the share of its top min(k, n) documents with a qrels line,
k the evaluation's measure's cutoff (10 without one); deleted with the evaluation; read by the
holes check, which computes them only for evaluations stored without them.

The data: q1..q4 judge a1..a4 relevant and n1..n4 not; q5 is judged and answered by no run; q6
is answered and judged by nobody. The baseline ranks a1 n1 a2 n2 a3 n3 a4 n4 (all judged); the
candidate ranks nx unjudged documents x1.. first (nx = 3, 2, 1, 0 in q1..q4), then a1..a4,
then n1..n4. By hand: the candidate's Judged@5 is (5 - nx) / 5, its Judged@10 is
8 / min(10, nx + 8) of the top min(10, nx + 8); the baseline's are 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from schema_helpers import RawDatabase, migrate_by_hand

from rankhouse import Warehouse
from rankhouse.backends import resolve_target
from rankhouse.backends.base import store_of
from rankhouse.judgments.holes import (
    compared_holes,
    computed_judged_means,
    judged_means,
    stored_judged_means,
)

ir_measures = pytest.importorskip("ir_measures")

NX = {"q1": 3, "q2": 2, "q3": 1, "q4": 0}
BY_HAND = {
    ("cand", 5): {q: (5 - nx) / 5 for q, nx in NX.items()},
    ("cand", 10): {q: (min(10, nx + 8) - nx) / min(10, nx + 8) for q, nx in NX.items()},
    ("base", 5): dict.fromkeys(NX, 1.0),
    ("base", 10): dict.fromkeys(NX, 1.0),
}
MEASURES = ["P@5", "nDCG@10", "AP"]
CUTOFF = {"P@5": 5, "nDCG@10": 10, "AP": 10}
SHARES = (
    "SELECT e.id, r.name, e.measure, j.k, j.query_id, j.judged FROM evaluation_judged AS j "
    "JOIN evaluations AS e ON e.id = j.evaluation_id JOIN runs AS r ON r.id = e.run_id"
)


def _rows() -> dict[str, list[tuple[str, str, float]]]:
    judged = [f"a{i}" for i in range(1, 5)], [f"n{i}" for i in range(1, 5)]
    runs: dict[str, list] = {"base": [], "cand": []}
    for q, nx in NX.items():
        ranked = {
            "base": [d for pair in zip(*judged, strict=True) for d in pair],
            "cand": [f"x{i}" for i in range(1, nx + 1)] + judged[0] + judged[1],
        }
        for name, docs in ranked.items():
            runs[name] += [(q, d, float(20 - r)) for r, d in enumerate(docs, 1)]
    for name in runs:
        runs[name] += [("q6", "a1", 3.0), ("q6", "z", 2.0)]
    return runs


def _write(root: Path) -> Path:
    qrels = [f"{q} 0 a{i} 1\n{q} 0 n{i} 0" for q in [*NX, "q5"] for i in range(1, 5)]
    (root / "q.txt").write_text("\n".join(qrels) + "\n")
    for name, rows in _rows().items():
        lines = [f"{q} Q0 {d} {r} {s} {name}" for r, (q, d, s) in enumerate(rows, 1)]
        (root / f"{name}.txt").write_text("\n".join(lines) + "\n")
    return root


def _stored(wh: Warehouse, where: str = "") -> list[tuple]:
    with store_of(wh).connect() as conn:
        return [tuple(row) for row in conn.execute(f"{SHARES} {where} ORDER BY 1, 5").all()]


def _ingested(wh: Warehouse, root: Path) -> Warehouse:
    _write(root)
    wh.ingest_qrels(root / "q.txt", name="q")
    for name in ("base", "cand"):
        wh.ingest_run(root / f"{name}.txt", name=name)
    return wh


def _reference(k: int) -> dict[tuple[str, str], float]:
    """ir_measures' Judged@k per (run, query) on the same rows."""
    qrels = [
        ir_measures.Qrel(q, f"{kind}{i}", int(kind == "a"))
        for q in [*NX, "q5"]
        for i in range(1, 5)
        for kind in "an"
    ]
    found = {}
    for name, rows in _rows().items():
        run = [ir_measures.ScoredDoc(q, d, s) for q, d, s in rows]
        for m in ir_measures.iter_calc([ir_measures.Judged @ k], qrels, run):
            found[name, m.query_id] = m.value
    return found


def test_each_evaluation_stores_its_runs_judged_shares(any_warehouse, tmp_path):
    wh = _ingested(any_warehouse, tmp_path)
    wh.evaluate("q", ["base", "cand"], MEASURES)
    with store_of(wh).connect() as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM evaluations ORDER BY id").all()]
    assert ids == list(range(1, 7))  # the shares add no evaluation: later ids do not move
    stored = _stored(wh)
    # one row per evaluation and query answered and judged (q1..q4; not q5, not q6)
    assert len(stored) == 6 * 4
    assert {(row[0], row[4]) for row in stored} == {(i, q) for i in ids for q in NX}
    reference = {k: _reference(k) for k in (5, 10)}
    for _, run, measure, k, query, judged in stored:
        assert k == CUTOFF[measure]
        assert judged == pytest.approx(BY_HAND[run, k][query], abs=1e-15)
        assert judged == pytest.approx(reference[k][run, query], abs=1e-12)


def test_the_shares_are_of_the_runs_own_top_k_whatever_the_options(warehouse, tmp_path):
    wh = _ingested(warehouse, tmp_path)
    wh.evaluate("q", ["cand"], ["P@5"], options={"max_rank": 3})
    wh.evaluate("q", ["cand"], ["Judged@10"], options={"judged_only": True})
    stored = _stored(wh)
    assert [(row[3], row[4], row[5]) for row in stored] == [
        *((5, q, BY_HAND["cand", 5][q]) for q in NX),  # not the top 3 that -M 3 evaluates
        *((10, q, BY_HAND["cand", 10][q]) for q in NX),  # not -J's all-judged ranking
    ]


def test_the_shares_go_with_their_evaluation(any_warehouse, tmp_path):
    wh = _ingested(any_warehouse, tmp_path)
    wh.evaluate("q", ["base", "cand"], ["P@5"])
    wh.evaluate("q", ["base", "cand"], ["P@5"], recompute=True)  # replaced: ids 3 and 4
    assert sorted({row[0] for row in _stored(wh)}) == [3, 4]
    assert len(_stored(wh)) == 8
    wh.remove_run("cand")
    assert [row[1] for row in _stored(wh)] == ["base"] * 4
    with store_of(wh).connect() as conn:  # no share of an evaluation that is gone
        assert conn.execute("SELECT count(*) FROM evaluation_judged").scalar_one() == 4
    wh.remove_qrels("q")
    with store_of(wh).connect() as conn:
        assert conn.execute("SELECT count(*) FROM evaluation_judged").scalar_one() == 0


def test_the_check_reads_the_stored_shares_and_computes_only_missing_ones(any_warehouse, tmp_path):
    wh = _ingested(any_warehouse, tmp_path)
    wh.evaluate("q", ["base", "cand"], ["P@5", "nDCG@10"])
    store = store_of(wh)
    base, cand = 1, 2
    stored = stored_judged_means(store, 1, [base, cand], [5, 10])
    # the mean of the stored shares is the engine's Judged@k to the last bit
    assert stored == computed_judged_means(store, 1, [base, cand], [5, 10])
    assert stored[5, cand] == sum(BY_HAND["cand", 5][q] for q in sorted(NX)) / 4
    measures = {"P@5": "P@5", "nDCG@10": "nDCG@10"}
    scoring = {"relevance_level": 1, "missing_queries": "zero"}
    read = compared_holes(store, 1, {base: "base", cand: "cand"}, base, measures, scoring, 0.1)
    assert [(row["measure"], row["holes"]) for row in read] == [("P@5", True), ("nDCG@10", True)]
    with store.transaction() as conn:  # the candidate's evaluations as schema 19 stored them
        conn.execute(
            "DELETE FROM evaluation_judged WHERE evaluation_id IN "
            "(SELECT id FROM evaluations WHERE run_id = :run)",
            {"run": cand},
        )
    assert set(stored_judged_means(store, 1, [base, cand], [5, 10])) == {(5, base), (10, base)}
    assert judged_means(store, 1, [base, cand], [5, 10]) == stored  # computed for cand
    computed = compared_holes(store, 1, {base: "base", cand: "cand"}, base, measures, scoring, 0.1)
    assert computed == read


def test_a_read_only_warehouse_checks_from_what_is_stored(backend_target, tmp_path):
    measures = {"P@5": "P@5", "nDCG@10": "nDCG@10"}
    scoring = {"relevance_level": 1, "missing_queries": "zero"}

    def check(wh: Warehouse) -> list[dict]:
        return compared_holes(store_of(wh), 1, {1: "base", 2: "cand"}, 1, measures, scoring, 0.1)

    with Warehouse(backend_target) as wh:
        _ingested(wh, tmp_path).evaluate("q", ["base", "cand"], list(measures))
        written = check(wh)
    assert [row["holes"] for row in written] == [True, True]
    with Warehouse(backend_target, read_only=True) as wh:
        assert check(wh) == written
    with Warehouse(backend_target) as wh, store_of(wh).transaction() as conn:
        conn.execute("DELETE FROM evaluation_judged WHERE evaluation_id IN "
                     "(SELECT id FROM evaluations WHERE run_id = 2)")  # fmt: skip
    with Warehouse(backend_target, read_only=True) as wh:  # cand's shares computed, not stored
        assert check(wh) == written
    with Warehouse(backend_target) as wh:  # base's rows only: nothing was written
        assert [row[1] for row in _stored(wh)] == ["base"] * 8


def test_a_warehouse_at_schema_19_gains_the_table(db_path, tmp_path):
    url = resolve_target(str(db_path))
    db = RawDatabase(url)
    with db.transaction() as con:
        migrate_by_hand(con, db.dialect, 19)
    db.close()
    with Warehouse(db_path) as wh:  # a DuckDB file upgrades on opening
        _ingested(wh, tmp_path)
        wh.evaluate("q", ["cand"], ["P@5"])
        assert [row[4:] for row in _stored(wh)] == [(q, BY_HAND["cand", 5][q]) for q in NX]
        with store_of(wh).connect() as conn:
            assert conn.execute("SELECT max(version) FROM schema_migrations").scalar_one() == 20


def test_trec_eval_stores_the_shares_where_it_publishes(backend_target, run_cli, tmp_path):
    """trec-eval computes in a local warehouse, then a server's copies its evaluations (with
    new ids) and their shares."""
    lines = _write(tmp_path).joinpath("q.txt").read_text().splitlines()
    (tmp_path / "q4.txt").write_text("".join(f"{line}\n" for line in lines if line[:2] != "q5"))
    done = run_cli("--db", backend_target, "trec-eval", "-m", "P.5", "q4.txt", "cand.txt", db=False)
    assert done.exit_code == 0, done.stderr
    with Warehouse(backend_target) as wh:
        assert [row[2:] for row in _stored(wh)] == [
            ("P@5", 5, q, BY_HAND["cand", 5][q]) for q in NX
        ]


def test_history_shows_the_stored_shares(any_warehouse, tmp_path):
    """``history(judged=True)``: one column per k the measures read, the mean over the queries
    each run answered that the qrels judge (q1..q4), by hand and by ir_measures; empty for an
    evaluation stored without shares (before release 0.19.0)."""
    wh = _ingested(any_warehouse, tmp_path)
    wh.evaluate("q", ["base", "cand"], ["P@5", "AP"])
    frame = wh.history(measures=["P@5", "AP"], judged=True).set_index("run")
    assert list(frame.columns[-2:]) == ["judged_at_5", "judged_at_10"]  # AP reads k 10
    for k in (5, 10):
        reference = _reference(k)
        for run in ("base", "cand"):
            by_hand = sum(BY_HAND[run, k].values()) / 4
            assert frame.loc[run, f"judged_at_{k}"] == pytest.approx(by_hand, abs=1e-12)
            mean = sum(reference[run, q] for q in NX) / 4
            assert frame.loc[run, f"judged_at_{k}"] == pytest.approx(mean, abs=1e-12)
    assert "judged_at_5" not in wh.history(measures=["P@5"]).columns  # only when asked
    with store_of(wh).transaction() as conn:  # cand's evaluations as schema 19 stored them
        conn.execute(
            "DELETE FROM evaluation_judged WHERE evaluation_id IN "
            "(SELECT id FROM evaluations WHERE run_id = 2)"
        )
    frame = wh.history(measures=["P@5"], judged=True).set_index("run")
    assert frame.loc["base", "judged_at_5"] == 1.0
    assert frame["judged_at_5"].isna()["cand"]


def test_history_judged_on_the_command_line(run_cli, tmp_path):
    _write(tmp_path)
    for args in (
        ("ingest", "qrels", "q.txt", "--name", "q"),
        ("eval", "q", "cand.txt", "-m", "P@5"),
    ):
        assert run_cli(*args).exit_code == 0
    done = run_cli("history", "--judged", "-f", "csv")
    assert done.exit_code == 0, done.stderr
    header, row = done.stdout.splitlines()[:2]
    assert header.split(",")[-1] == "judged_at_5"
    assert float(row.split(",")[-1]) == pytest.approx(sum(BY_HAND["cand", 5].values()) / 4)
