"""Several processes writing to one PostgreSQL warehouse at once, and an analyst reading it.

Each writer is a real process with its own connections (a forkserver that has imported
rankhouse once starts them quickly); a barrier makes them start their writes together. The
counts are printed (``-s`` shows them): docs/scaling.md quotes them.
"""

from __future__ import annotations

import multiprocessing
import random
import threading
import time

import pandas as pd
import pytest
from conftest import ICEBERG

from rankhouse import Warehouse, evaluate
from rankhouse.errors import ConflictError

pytestmark = pytest.mark.slow  # scripts/check --quick leaves these out

WRITERS = 8
MEASURES = ["AP", "nDCG@10", "P@10", "RR"]
QUERIES = [f"q{i}" for i in range(40)]
ROWS_PER_QUERY = 500  # 20,000 rows a run: a COPY that takes a moment, an analyst in between
BARRIER_WAIT = 120  # seconds a process waits for the others before the test fails


@pytest.fixture(scope="module")
def processes():
    """A process context whose children start from a process that imported rankhouse."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["rankhouse", "rankhouse.evaluation", "pandas", "psycopg"])
    return context


def _qrels() -> pd.DataFrame:
    rng = random.Random(0)
    rows = [
        (q, f"d{d}", rng.choice([0, 1, 2])) for q in QUERIES for d in rng.sample(range(800), 30)
    ]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"])


def _run(seed: int) -> pd.DataFrame:
    rng = random.Random(seed)
    rows = [
        (q, f"d{d}", round(rng.random() * 10, 3))
        for q in QUERIES
        for d in rng.sample(range(800), ROWS_PER_QUERY)
    ]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def _ingest_and_evaluate(url: str, seed: int, barrier, results) -> None:
    """One writer: the shared qrels, its own run, an evaluation of it."""
    try:
        qrels, run = _qrels(), _run(seed)
        barrier.wait(BARRIER_WAIT)
        with Warehouse(url) as wh:  # the first ones to arrive also migrate the new schema
            stored_qrels = wh.ingest_qrels(qrels, name="shared-qrels")
            [stored_run] = wh.ingest_run(run, name=f"run-{seed}")
            result = wh.evaluate(stored_qrels.id, stored_run.id, MEASURES)
            results.put((seed, stored_qrels.created, result.summary.iloc[0].to_dict()))
    except BaseException as exc:  # reported to the test, never lost in the child
        results.put((seed, None, repr(exc)))


def _expected(seed: int) -> dict:
    """The run's means computed without any warehouse (rankhouse.evaluate on frames)."""
    return evaluate(_qrels(), _run(seed), MEASURES).summary.iloc[0].to_dict()


#: What a reader of committed data only never sees, counted in one statement (one snapshot).
RUN_ROWS_SEEN = (
    "(SELECT count(*) FROM runs r WHERE r.num_rows <> "
    "(SELECT count(*) FROM run_rows rr WHERE rr.run_id = r.id)) AS partial_runs, "
    "(SELECT count(*) FROM run_rows WHERE run_id NOT IN (SELECT id FROM runs)) AS orphan_rows, "
)
UNCOMMITTED = (
    "SELECT " + RUN_ROWS_SEEN + "(SELECT count(*) FROM qrels_sets q WHERE q.num_judgments <> "
    "(SELECT count(*) FROM judgments j WHERE j.qrels_id = q.id)) AS partial_qrels, "
    "(SELECT count(*) FROM evaluations e WHERE (SELECT count(*) FROM evaluation_values v "
    f"WHERE v.evaluation_id = e.id) <> {len(QUERIES)}) AS partial_evaluations, "
    "(SELECT count(*) FROM runs) AS runs"
)
#: The same with the run rows in Iceberg, where the server's run_rows stays empty: the test
#: checks each run's rows in the table at the end (a run is published after its commit).
ICEBERG_UNCOMMITTED = UNCOMMITTED.replace(RUN_ROWS_SEEN, "0 AS partial_runs, 0 AS orphan_rows, ")


class Analyst:
    """Reads the warehouse in a loop as ``rankhouse sql`` does (a read-only session, one
    statement a transaction), in this process and through the real CLI beside it."""

    def __init__(self, url: str, run_cli) -> None:
        self.url = url
        self.statement = ICEBERG_UNCOMMITTED if "iceberg=" in url else UNCOMMITTED
        self.run_cli = run_cli
        self.stop = threading.Event()
        self.seen: list[tuple[int, ...]] = []
        self.cli_seen: list[str] = []
        self.errors: list[str] = []

    def watch(self) -> None:
        try:
            with Warehouse(self.url, read_only=True) as wh:
                while not self.stop.wait(0.02):  # leave the writers the processors
                    with wh.transaction() as conn:
                        self.seen.append(tuple(conn.execute_raw(self.statement).one()))
        except Exception as exc:  # noqa: BLE001 (reported by the test)
            self.errors.append(repr(exc))

    def watch_cli(self) -> None:
        while not self.stop.is_set():
            shown = self.run_cli("--db", self.url, "sql", self.statement, "-f", "csv", db=False)
            if shown.exit_code != 0:
                self.errors.append(shown.stderr)
                return
            self.cli_seen.append(shown.stdout.splitlines()[1])

    def uncommitted(self) -> list:
        """Every read that saw part of a transaction."""
        found = [row for row in self.seen if any(row[:4])]
        return found + [row for row in self.cli_seen if not row.startswith("0,0,0,0,")]


def _wait_for(results, count: int) -> list[tuple]:
    return [results.get(timeout=BARRIER_WAIT + 60) for _ in range(count)]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("backend_target", ["postgresql", ICEBERG], indirect=True)
def test_eight_writers_and_an_analyst(processes, backend_target, run_cli):
    postgres_url = backend_target
    Warehouse(postgres_url).close()  # the schema exists, so the analyst can open it read-only
    analyst = Analyst(postgres_url, run_cli)
    watchers = [threading.Thread(target=analyst.watch), threading.Thread(target=analyst.watch_cli)]
    barrier, results = processes.Barrier(WRITERS), processes.Queue()
    writers = [
        processes.Process(target=_ingest_and_evaluate, args=(postgres_url, seed, barrier, results))
        for seed in range(WRITERS)
    ]
    started = time.perf_counter()
    for thread in watchers:
        thread.start()
    for writer in writers:
        writer.start()
    try:
        finished = _wait_for(results, WRITERS)
    finally:
        for writer in writers:
            writer.join(60)
        analyst.stop.set()
        for thread in watchers:
            thread.join(60)
    elapsed = time.perf_counter() - started

    failures = [(seed, error) for seed, created, error in finished if created is None]
    assert failures == []
    # the qrels were sent by all eight and stored once
    assert sorted(created for _, created, _ in finished) == [False] * (WRITERS - 1) + [True]
    for seed, _, means in finished:  # every writer's means, as computed without a warehouse
        expected = _expected(seed)
        assert {m: means[m] for m in MEASURES} == {m: expected[m] for m in MEASURES}, seed
    with Warehouse(postgres_url, read_only=True) as wh, wh.connect() as conn:
        counts = conn.execute(
            "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM run_rows), "
            "(SELECT count(*) FROM qrels_sets), (SELECT count(*) FROM evaluations), "
            "(SELECT count(*) FROM evaluation_values)"
        ).one()
        iceberg = wh.backend.iceberg  # the rows in the table: each run's, once
        if iceberg is not None:
            per_run = dict(conn.execute("SELECT id, num_rows FROM runs").all())
            assert {run_id: iceberg.count(run_id) for run_id in per_run} == per_run
            counts = (counts[0], sum(per_run.values()), *counts[2:])
    rows = WRITERS * len(QUERIES) * ROWS_PER_QUERY
    evaluations = WRITERS * len(MEASURES)
    assert tuple(counts) == (WRITERS, rows, 1, evaluations, evaluations * len(QUERIES))

    assert analyst.errors == []
    assert analyst.uncommitted() == []
    runs_seen = sorted({row[4] for row in analyst.seen})
    assert len(analyst.seen) >= 5 and analyst.cli_seen
    print(
        f"\n{WRITERS} writers: {WRITERS} runs ({rows:,} rows), 1 qrels set, {evaluations} "
        f"evaluations stored in {elapsed:.1f} s; the analyst read {len(analyst.seen)} times "
        f"(and {len(analyst.cli_seen)} times through rankhouse sql), saw the run counts "
        f"{runs_seen}, and {len(analyst.uncommitted())} uncommitted states"
    )


def _same_content_twice(url: str, who: int, barrier, results) -> None:
    """One of two processes sending the same things at the same moments."""
    try:
        run = _run(100)
        with Warehouse(url) as wh:
            barrier.wait(BARRIER_WAIT)  # the same run, same name
            [same] = wh.ingest_run(run, name="same")
            barrier.wait(BARRIER_WAIT)  # the same qrels
            qrels = wh.ingest_qrels(_qrels(), name="qrels")
            barrier.wait(BARRIER_WAIT)  # different runs under one name: one of them gets it
            try:
                [taken] = wh.ingest_run(_run(200 + who), name="taken")
                name = taken.name
            except ConflictError:
                name = "conflict"
            barrier.wait(BARRIER_WAIT)  # different runs, new versions: both kept
            [version] = wh.ingest_run(_run(300 + who), name="nightly", new_version=True)
            barrier.wait(BARRIER_WAIT)  # the same evaluation
            wh.evaluate(qrels.id, same.id, MEASURES)
            results.put((who, (same.created, same.id, qrels.created, name, version.name)))
    except BaseException as exc:
        results.put((who, repr(exc)))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("backend_target", ["postgresql", ICEBERG], indirect=True)
def test_two_writers_of_the_same_content_store_it_once(processes, backend_target):
    """Also with the run rows in Iceberg: the second writer compares its rows with the
    first's, read back from the table, and the rows are appended once."""
    url = backend_target
    Warehouse(url).close()
    barrier, results = processes.Barrier(2), processes.Queue()
    writers = [
        processes.Process(target=_same_content_twice, args=(url, who, barrier, results))
        for who in (0, 1)
    ]
    for writer in writers:
        writer.start()
    try:
        finished = dict(_wait_for(results, 2))
    finally:
        for writer in writers:
            writer.join(60)
    assert all(isinstance(found, tuple) for found in finished.values()), finished
    (created_0, id_0, qrels_0, name_0, version_0) = finished[0]
    (created_1, id_1, qrels_1, name_1, version_1) = finished[1]
    assert sorted([created_0, created_1]) == [False, True] and id_0 == id_1
    assert sorted([qrels_0, qrels_1]) == [False, True]
    assert sorted([name_0, name_1]) == ["conflict", "taken"]
    assert sorted([version_0, version_1]) == ["nightly", "nightly@2"]
    with Warehouse(url, read_only=True) as wh, wh.connect() as conn:
        iceberg = wh.backend.iceberg  # None: the rows are in the server's table
        rows = "SELECT count(*) FROM run_rows WHERE run_id = :id"
        rows = iceberg.count(id_0) if iceberg else conn.execute(rows, {"id": id_0}).scalar_one()
        found = conn.execute(
            "SELECT (SELECT count(*) FROM runs WHERE name = 'same'), "
            "(SELECT count(*) FROM qrels_sets), "
            "(SELECT count(*) FROM evaluations WHERE run_id = :id), "
            "(SELECT count(*) FROM evaluation_values v JOIN evaluations e "
            " ON e.id = v.evaluation_id WHERE e.run_id = :id)",
            {"id": id_0},
        ).one()
    assert rows == len(QUERIES) * ROWS_PER_QUERY
    assert tuple(found) == (1, 1, len(MEASURES), len(MEASURES) * len(QUERIES))
