"""Generated TREC files through the Python API, held to the independent reference reader.

Every case must be either stored with exactly the rows the reference reader reads, or refused
with a clean RankhouseError when the reference refuses it. CI runs 1,000 cases; set
``RANKHOUSE_GENERATED_CASES=10000`` for the long run (see docs/ingest.md).
"""

from __future__ import annotations

import os
from collections import Counter

import ingest_reference as reference
import pytest
from trec_cases import generate

from rankhouse import Warehouse
from rankhouse.errors import RankhouseError

CASES = int(os.environ.get("RANKHOUSE_GENERATED_CASES", "1000"))
# the tabular half of RANKHOUSE_GENERATED_CASES lives in its own test file
TREC_SHARE = CASES


def stored_qrels(wh, result) -> set:
    with wh.connect() as conn:
        duck = wh.duckdb_connection(conn)
        rows = duck.execute(
            "SELECT query_id, doc_id, grade FROM judgments WHERE qrels_id = ?", [result.id]
        ).fetchall()
    return set(rows)


def stored_run(wh, results) -> set:
    rows = set()
    with wh.connect() as conn:
        duck = wh.duckdb_connection(conn)
        for result in results:
            for query, doc, rank, score in duck.execute(
                "SELECT query_id, doc_id, rank, score FROM run_rows WHERE run_id = ?",
                [result.id],
            ).fetchall():
                rows.add((result.system_tag, query, doc, rank, score))
    return rows


def expected(kind: str, order: str, data: bytes):
    try:
        if kind == "qrels":
            return reference.read_qrels(data)
        return reference.read_run(data, order)
    except reference.Refused:
        return None


def check_case(wh, folder, seed: int) -> str:
    """'accepted', 'refused', or what went wrong (a crash, a difference, a valid refusal)."""
    kind, order, data = generate(seed)
    path = folder / f"case{seed}"
    path.write_bytes(data)
    want = expected(kind, order, data)
    try:
        if kind == "qrels":
            got = stored_qrels(wh, wh.ingest_qrels(path, name=f"q{seed}"))
        else:
            got = stored_run(wh, wh.ingest_run(path, name=f"r{seed}", order=order))
    except RankhouseError as exc:
        if want is None:
            return "refused"
        return f"valid refused: {exc}"
    except Exception as exc:  # noqa: BLE001 - a crash is what this test counts
        return f"crash: {type(exc).__name__}: {exc}"
    finally:
        path.unlink()
    if want is None:
        return "accepted though the reference refuses"
    if got != want:
        return f"stored differently: {sorted(got ^ want)[:4]}"
    return "accepted"


def test_generated_trec_files_match_the_reference(tmp_path, capsys):
    counts: Counter[str] = Counter()
    failures = []
    with Warehouse(":memory:") as wh:  # no fsync per case: 1,000 cases stay fast
        for seed in range(TREC_SHARE):
            outcome = check_case(wh, tmp_path, seed)
            counts[outcome.split(":")[0]] += 1
            if outcome not in ("accepted", "refused"):
                failures.append((seed, outcome))
    with capsys.disabled():
        print(f"\ngenerated TREC cases: {TREC_SHARE}, {dict(counts)}")
    assert counts["accepted"] > TREC_SHARE // 4 and counts["refused"] > TREC_SHARE // 20
    assert not failures, failures[:10]


@pytest.mark.parametrize("seed", [0, 1])
def test_generator_is_deterministic(seed):
    assert generate(seed) == generate(seed)
