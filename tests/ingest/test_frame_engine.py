"""rankhouse.evaluate puts a DataFrame of one run straight into the engine's table (no stage,
no copy): the result is the general path's, and a frame the checks refuse still gets the
general path's error, with nothing of it left behind."""

from __future__ import annotations

import math
import threading
import warnings

import numpy as np
import pandas as pd
import pytest

import rankhouse
from rankhouse.engine import scratch_database
from rankhouse.errors import InputError, RankhouseWarning
from rankhouse.ingest import files, parse, sources

MEASURES = ["AP", "nDCG@5", "P@2", "RR", "R@10", "Bpref", "NumRet"]


def _frames(seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Graded qrels with negatives, and a run with tied scores, unjudged documents, a query
    the qrels lack and a qrels query the run lacks."""
    rng = np.random.default_rng(seed)
    qrels = [(f"q{q}", f"d{d}", int(rng.integers(-1, 4))) for q in range(6) for d in range(8)]
    run = [
        (f"q{q}", f"d{d}", float(rng.integers(0, 5)))
        for q in [*range(5), 7]
        for d in rng.permutation(12)[:10]
    ]
    return (
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
        pd.DataFrame(run, columns=["query_id", "doc_id", "score"]),
    )


def _general_only(monkeypatch) -> None:
    monkeypatch.setattr(parse, "insert", lambda *args, **kwargs: None)


def _outcome(qrels, run, **kwargs):
    result = rankhouse.evaluate(qrels, run, MEASURES, **kwargs)
    return result.summary, result.per_query, result.query_counts


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_the_direct_path_gives_the_general_paths_result(monkeypatch, seed):
    qrels, run = _frames(seed)
    summary, per_query, counts = _outcome(qrels, run)
    with monkeypatch.context() as patch:
        _general_only(patch)
        expected = _outcome(qrels, run)
    pd.testing.assert_frame_equal(summary, expected[0])
    pd.testing.assert_frame_equal(per_query, expected[1])
    assert counts == expected[2]
    [(name, count)] = counts.items()
    assert name == "run" and count.tied_pairs > 0  # a frame without a name: its argument


def test_the_direct_path_is_taken_and_reports_what_it_inserted():
    qrels, run = _frames()
    duck = scratch_database()
    try:
        [loaded] = parse.load_into_engine(duck, run, "run", first_id=4, name="mine")
        rows = duck.execute("SELECT count(*), min(run_id), max(run_id) FROM run_rows").fetchall()
        staged = duck.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = '_rankhouse_stage'"
        ).fetchall()
    finally:
        duck.close()
    assert (loaded.id, loaded.name) == (4, "mine")
    assert rows == [(len(run), 4, 4)]
    assert staged == [(0,)]  # never staged
    ties = run.groupby("query_id")["score"].apply(lambda s: len(s) - s.nunique()).sum()
    assert loaded.tied_pairs == ties


def _load_run(run: pd.DataFrame):
    duck = scratch_database()
    try:
        [loaded] = parse.load_into_engine(duck, run, "run", first_id=1)
    finally:
        duck.close()
    return loaded


@pytest.mark.parametrize(
    "rows, thread",
    [
        (parse.HASH_BESIDE_FROM, "rankhouse-frame-hash"),
        (parse.HASH_BESIDE_FROM - 1, "MainThread"),
    ],
)
def test_a_large_frame_is_hashed_while_it_is_read_and_a_small_one_after(monkeypatch, rows, thread):
    run = pd.DataFrame(
        {
            "query_id": [f"q{i % 50}" for i in range(rows)],
            "doc_id": [f"d{i}" for i in range(rows)],
            "score": np.arange(rows, dtype=float),
        }
    )
    where = []

    def recorded(frame):
        where.append(threading.current_thread().name)
        return files.frame_sha256(frame)

    with monkeypatch.context() as patch:
        patch.setattr(parse, "frame_sha256", recorded)
        loaded = _load_run(run)
    assert where == [thread]
    with monkeypatch.context() as patch:
        _general_only(patch)
        general = _load_run(run)
    assert loaded.name == general.name  # dataframe-<sha8>: the general path's hash
    assert loaded.name.startswith("dataframe-")


def _refused(qrels, run) -> str:
    with pytest.raises(InputError) as raised:
        rankhouse.evaluate(qrels, run, ["AP"])
    return str(raised.value)


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda q, r: (q, r.assign(score=r["score"].where(r.index != 7))), id="NaN"),
        pytest.param(lambda q, r: (q, pd.concat([r, r.iloc[[3]]])), id="repeated run pair"),
        pytest.param(lambda q, r: (pd.concat([q, q.iloc[[5]]]), r), id="repeated qrels pair"),
        pytest.param(lambda q, r: (q, r.iloc[:0]), id="empty run"),
    ],
)
def test_a_refused_frame_gets_the_general_paths_error(monkeypatch, spoil):
    qrels, run = spoil(*_frames())
    message = _refused(qrels, run)
    with monkeypatch.context() as patch:
        _general_only(patch)
        assert _refused(qrels, run) == message


def test_nothing_of_a_refused_frame_stays_in_the_table():
    qrels, run = _frames()
    duck = scratch_database()
    try:
        spoilt = pd.concat([run, run.iloc[[2]].assign(score=99.0)])  # one pair, two scores
        source = sources.open_source(spoilt, None, None)
        assert parse.insert(duck, source, "run", 1, {}, "score") is None
        assert duck.execute("SELECT count(*) FROM run_rows").fetchall() == [(0,)]
        twice = pd.concat([qrels, qrels.iloc[[0]]])
        source = sources.open_source(twice, None, None)
        assert parse.insert(duck, source, "qrels", 1, {}, "score") is None
        assert duck.execute("SELECT count(*) FROM judgments").fetchall() == [(0,)]
    finally:
        duck.close()


def test_a_frame_of_several_tags_takes_the_general_path():
    qrels, run = _frames()
    tagged = run.assign(tag=np.where(run.index % 2 == 0, "even", "odd"))
    result = rankhouse.evaluate(qrels, tagged, ["AP"])
    assert result.runs == ["even", "odd"]
    for tag in ("even", "odd"):
        alone = rankhouse.evaluate(qrels, run[tagged["tag"] == tag], ["AP"]).summary["AP"]
        got = result.summary.set_index("run").loc[tag, "AP"]
        assert math.isclose(got, alone.iloc[0], rel_tol=0, abs_tol=0)


def test_ranks_that_disagree_with_scores_still_warn():
    qrels, run = _frames()
    ranked = run.assign(rank=range(len(run), 0, -1))  # a rank per row, against the scores
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rankhouse.evaluate(qrels, ranked, ["AP"])
    assert any(
        issubclass(w.category, RankhouseWarning) and "ranks disagree" in str(w.message)
        for w in caught
    )


def _engine_load(case, *, general: bool, monkeypatch):
    """(what loading the generated frame gives, the engine table's rows) or the error text."""
    with monkeypatch.context() as patch:
        if general:
            _general_only(patch)
        duck = scratch_database()
        try:
            loaded = parse.load_into_engine(duck, case.frame, case.kind, order=case.order)
        except InputError as exc:
            return "error: " + str(exc)
        finally:
            table = "judgments" if case.kind == "qrels" else "run_rows"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RankhouseWarning)
                rows = sorted(duck.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
            duck.close()
    return [(one.id, one.name, one.tied_pairs) for one in loaded], rows


@pytest.mark.slow
@pytest.mark.parametrize("seeds", [range(0, 150), range(150, 300)], ids=["0-149", "150-299"])
def test_generated_frames_load_alike_on_both_paths(monkeypatch, seeds):
    """tests/ingest/tabular_cases.py's DataFrames (ids as text, integers, categories, nullable
    integers; bad values; repeated rows; tag columns): the direct path loads what the general
    path loads, or refuses with the same message."""
    from tabular_cases import generate_frame

    taken = []
    insert = parse.insert

    def spied(*args, **kwargs):
        inserted = insert(*args, **kwargs)
        taken.append(inserted is not None)
        return inserted

    monkeypatch.setattr(parse, "insert", spied)
    loaded = refused = 0
    for seed in seeds:
        case = generate_frame(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RankhouseWarning)
            direct = _engine_load(case, general=False, monkeypatch=monkeypatch)
            general = _engine_load(case, general=True, monkeypatch=monkeypatch)
        assert direct == general, seed
        if isinstance(direct, str):
            refused += 1
        else:
            loaded += 1
    assert loaded > 20 and refused > 20  # both outcomes are exercised
    assert sum(taken) > 20  # and the direct path took many of the frames
