"""Generated inputs through the Python API, held to the independent reference reader: TREC
files, CSV/TSV and JSON lines files, and DataFrames.

Every case must be either stored with exactly the rows the reference reader reads, or refused
with a clean RankhouseError when the reference refuses it. CI runs 1,000 cases (half TREC,
three tenths CSV/TSV/JSON lines, a fifth DataFrames); ``RANKHOUSE_GENERATED_CASES=10000`` is
the long run (see docs/ingest.md). Each test prints its figures.
"""

from __future__ import annotations

import os
from collections import Counter

import ingest_reference as reference
import pytest
from tabular_cases import generate_frame, generate_text
from trec_cases import generate

from rankhouse import Warehouse
from rankhouse.errors import RankhouseError

pytestmark = pytest.mark.slow  # scripts/check --quick leaves these out

CASES = int(os.environ.get("RANKHOUSE_GENERATED_CASES", "1000"))
TREC_SHARE = CASES // 2
TEXT_SHARE = CASES * 3 // 10
FRAME_SHARE = CASES - TREC_SHARE - TEXT_SHARE
#: Outcomes that are failures; "accepted" (stored exactly as the reference reads) and
#: "refused" (a clean RankhouseError where the reference refuses) are the two good ones.
FAILURES = ("crash", "stored differently", "valid refused", "accepted though the reference")


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


def expected(read):
    """What the reference stores, or None when it refuses."""
    try:
        return read()
    except reference.Refused:
        return None


def judge(wh, kind: str, ingest, want) -> str:
    """'accepted', 'refused', or what went wrong (a crash, a difference, a valid refusal)."""
    try:
        results = ingest()
        got = stored_qrels(wh, results) if kind == "qrels" else stored_run(wh, results)
    except RankhouseError as exc:
        if want is None:
            return "refused"
        return f"valid refused: {exc}"
    except Exception as exc:  # noqa: BLE001 - a crash is what this test counts
        return f"crash: {type(exc).__name__}: {exc}"
    if want is None:
        return "accepted though the reference refuses"
    if got != want:
        return f"stored differently: {sorted(got ^ want, key=repr)[:4]}"
    return "accepted"


def check_case(wh, folder, seed: int) -> str:
    kind, order, data = generate(seed)
    path = folder / f"case{seed}"
    path.write_bytes(data)
    if kind == "qrels":
        want = expected(lambda: reference.read_qrels(data))
        ingest = lambda: wh.ingest_qrels(path, name=f"q{seed}")  # noqa: E731
    else:
        want = expected(lambda: reference.read_run(data, order))
        ingest = lambda: wh.ingest_run(path, name=f"r{seed}", order=order)  # noqa: E731
    try:
        return judge(wh, kind, ingest, want)
    finally:
        path.unlink()


def check_text_case(wh, folder, seed: int) -> str:
    case = generate_text(seed)
    path = folder / f"{seed}" / case.name
    path.parent.mkdir()
    path.write_bytes(case.data)
    tag = case.name.rsplit(".", 1)[0]  # the file name without its data extension
    if case.format == "jsonl":
        want = expected(lambda: reference.read_jsonl(case.data, case.kind, case.order, tag))
    else:
        want = expected(
            lambda: reference.read_delimited(
                case.data, case.format, case.kind, case.order, case.delimiter, tag
            )
        )
    options = {"name": f"t{seed}", "delimiter": case.delimiter}
    if case.kind == "qrels":
        ingest = lambda: wh.ingest_qrels(path, **options)  # noqa: E731
    else:
        ingest = lambda: wh.ingest_run(path, order=case.order, **options)  # noqa: E731
    try:
        return judge(wh, case.kind, ingest, want)
    finally:
        path.unlink()
        path.parent.rmdir()


def check_frame_case(wh, seed: int) -> str:
    case = generate_frame(seed)
    before = case.frame.copy(deep=True)
    want = expected(lambda: reference.read_frame(case.frame, case.kind, case.order))
    if case.kind == "qrels":
        ingest = lambda: wh.ingest_qrels(case.frame, name=f"f{seed}")  # noqa: E731
    else:
        ingest = lambda: wh.ingest_run(case.frame, name=f"f{seed}", order=case.order)  # noqa: E731
    outcome = judge(wh, case.kind, ingest, want)
    if outcome in ("accepted", "refused") and not case.frame.equals(before):
        return "crash: the caller's DataFrame was changed"
    return outcome


def run_cases(label: str, seeds, check, capsys) -> None:
    """Run every case, print the figures, and fail on any case that went wrong."""
    counts: Counter[str] = Counter()
    failures = []
    for seed in seeds:
        outcome = check(seed)
        counts[outcome.split(":")[0]] += 1
        if outcome not in ("accepted", "refused"):
            failures.append((seed, outcome))
    figures = ", ".join(
        [f"accepted and stored as the reference reads: {counts['accepted']}"]
        + [f"refused with a clean error: {counts['refused']}"]
        + [
            f"{name}: {sum(v for k, v in counts.items() if k.startswith(name))}"
            for name in FAILURES
        ]
    )
    with capsys.disabled():
        print(f"\ngenerated {label} cases: {len(seeds)}; {figures}")
    total = len(seeds)
    assert counts["accepted"] > total // 4 and counts["refused"] > total // 20, dict(counts)
    assert not failures, failures[:10]


def test_generated_trec_files_match_the_reference(tmp_path, capsys):
    with Warehouse(":memory:") as wh:  # no fsync per case: 1,000 cases stay fast
        run_cases("TREC", range(TREC_SHARE), lambda seed: check_case(wh, tmp_path, seed), capsys)


def test_generated_tabular_files_match_the_reference(tmp_path, capsys):
    with Warehouse(":memory:") as wh:
        run_cases(
            "CSV/TSV/JSON lines",
            range(TEXT_SHARE),
            lambda seed: check_text_case(wh, tmp_path, seed),
            capsys,
        )


def test_generated_dataframes_match_the_reference(capsys):
    with Warehouse(":memory:") as wh:
        run_cases("DataFrame", range(FRAME_SHARE), lambda seed: check_frame_case(wh, seed), capsys)


@pytest.mark.parametrize("seed", [0, 1])
def test_generators_are_deterministic(seed):
    assert generate(seed) == generate(seed)
    assert generate_text(seed) == generate_text(seed)
    first, second = generate_frame(seed), generate_frame(seed)
    assert first.frame.equals(second.frame) and first.kind == second.kind
