"""Order drift of runs from a baseline, computed once and stored like evaluations: the
extrapolated rank-biased overlap, Kendall's tau and tau_AP over the top k, and overlap@k,
per query and as a mean (:mod:`rankhouse.stats.drift` computes them; docs/compare.md gives
the formulas).

Drift depends on the two rankings alone, not on a qrels set: the queries are those either
run ranks (in query-id byte order), each ranking ordered as trec_eval ranks it, by score
descending and then document id descending (the view ``run_ranking``). A query one run
lacks is compared as an empty ranking: RBO 0, overlap 0, and no tau (fewer than two shared
documents; stored as NULL). The means of RBO and overlap are over every query, those of the
two tau over the queries where they are defined (``num_tau``).

A drift is keyed by (run, baseline, k, p) in ``drift_evaluations`` with its per-query values
in ``drift_values`` (migration 0009; the views ``drift_results`` and ``query_drift``). Runs
never change (new content is a new run), so a stored drift is reused; a read-only warehouse
computes it without storing it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from ..backends.base import store_of
from ..catalog import get_run
from ..catalog.lookup import refuse_pruned
from ..columns import DRIFT_COLUMNS, QUERY_DRIFT_COLUMNS
from ..defaults import __version__
from ..lazy import pandas as pd
from ..stats import DEFAULT_DEPTH, DEFAULT_PERSISTENCE
from ..stats import drift as ranking_drift
from ..stats.drift import check_depth, check_persistence

DRIFT_MEASURES = ("rbo", "kendall_tau", "tau_ap", "overlap")
"""The drift measures, as the columns of ``drift_evaluations`` and ``drift_values`` name them."""

# One row per query, its top k in the run's order: a few thousand rows, not millions.
_RANKING = """
    SELECT query_id, array_agg(doc_id ORDER BY position) AS documents
    FROM run_ranking
    WHERE run_id = :run AND position <= :depth
    GROUP BY query_id
    """

_FIND = """
    SELECT id FROM drift_evaluations
    WHERE run_id = :run AND baseline_run_id = :baseline AND depth = :depth
      AND persistence = :persistence
    ORDER BY created_at DESC, id DESC
    """

_VALUES = """
    SELECT query_id, rbo, kendall_tau, tau_ap, overlap, shared FROM drift_values
    WHERE drift_id = :id ORDER BY query_id
    """

_ROWS_A_STATEMENT = 1_000  # 7 binds a row: PostgreSQL takes at most 65,535 a statement


class QueryDrift(NamedTuple):
    """One query's drift (NaN for a tau with fewer than two shared documents)."""

    query: str
    rbo: float
    kendall_tau: float
    tau_ap: float
    overlap: float
    shared: int


@dataclass(frozen=True)
class DriftMeans:
    """Means of a drift over its queries (or a subset)."""

    num_q: int
    rbo: float
    kendall_tau: float
    tau_ap: float
    overlap: float
    num_tau: int

    def value(self, measure: str) -> float:
        """The mean of ``measure``: ``'rbo'``, ``'kendall_tau'``, ``'tau_ap'`` or ``'overlap'``."""
        if measure not in DRIFT_MEASURES:
            raise KeyError(measure)
        return getattr(self, measure)


@dataclass(frozen=True)
class StoredDrift:
    """The drift of one run from a baseline at depth ``k`` and persistence ``p``.

    Attributes:
        drift_id: its ``drift_evaluations.id`` (None when a read-only warehouse computed it).
        run_id, baseline_run_id: the two runs.
        k, p: the depth and RBO's persistence.
        queries: per query, in query-id byte order.
        reused: read from storage rather than computed.
    """

    drift_id: int | None
    run_id: int
    baseline_run_id: int
    k: int
    p: float
    queries: tuple[QueryDrift, ...]
    reused: bool

    def means(self, wanted: set[str] | None = None) -> DriftMeans:
        """The means over every query, or over those of ``wanted`` (a query subset)."""
        rows = [q for q in self.queries if wanted is None or q.query in wanted]
        return _means(rows)


def run_drift(
    wh,
    run_id: int,
    baseline_run_id: int,
    *,
    k: int = DEFAULT_DEPTH,
    p: float = DEFAULT_PERSISTENCE,
) -> StoredDrift:
    """The drift of a stored run from a stored baseline: read when stored, else computed from
    the two rankings and stored (unless the warehouse is read-only).

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        run_id, baseline_run_id: ``runs.id`` of the two runs.
        k: the depth compared.
        p: RBO's persistence.

    Raises:
        RankhouseError: k below 1 or p outside (0, 1).
    """
    check_depth(k, "depth")
    check_persistence(p)
    return _drift(store_of(wh), int(run_id), int(baseline_run_id), k, p, {})


def _drift(store, run_id: int, baseline_id: int, k: int, p: float, rankings: dict) -> StoredDrift:
    """:func:`run_drift`; ``rankings`` keeps the top k of runs read so far (run id -> query
    -> documents), so that the baseline of several runs is read once."""
    key = {"run": run_id, "baseline": baseline_id, "depth": k, "persistence": p}
    with store.connect() as conn:
        found = conn.execute(_FIND, key).first()
        if found is not None:
            rows = conn.execute(_VALUES, {"id": found[0]}).all()
            queries = tuple(QueryDrift(*_numbers(row)) for row in rows)
            return StoredDrift(int(found[0]), *_key(key), queries, reused=True)
        refuse_pruned(conn, [run_id, baseline_id], "its order drift")
        for wanted in (run_id, baseline_id):
            if wanted not in rankings:
                rows = conn.execute(_RANKING, {"run": wanted, "depth": k}).all()
                rankings[wanted] = {str(q): list(documents) for q, documents in rows}
    queries = _computed(rankings[run_id], rankings[baseline_id], k, p)
    drift_id = None if store.read_only else _store(store, key, queries)
    return StoredDrift(drift_id, *_key(key), queries, reused=False)


def drift_rows(
    wh,
    pairs: Iterable[tuple[int, int, str, str]],
    k: int,
    p: float,
    wanted: set[str] | None = None,
) -> list[dict[str, Any]]:
    """One row (:data:`~rankhouse.columns.DRIFT_COLUMNS`) per ``(run_id, baseline_run_id,
    run shown, baseline shown)``: the means, over the ``wanted`` queries when given. A
    baseline shared by the pairs is read once."""
    check_depth(k, "depth")
    check_persistence(p)
    store = store_of(wh)
    baselines: dict[int, dict[str, list[str]]] = {}
    found = []
    for run_id, baseline_id, run, baseline in pairs:
        rankings = {i: r for i, r in baselines.items() if i == baseline_id}
        stored = _drift(store, int(run_id), int(baseline_id), k, p, rankings)
        if baseline_id in rankings:
            baselines = {baseline_id: rankings[baseline_id]}
        means = stored.means(wanted)
        found.append(
            {
                "run": run,
                "baseline": baseline,
                "k": k,
                "p": p,
                "num_q": means.num_q,
                **{name: means.value(name) for name in DRIFT_MEASURES},
                "num_tau": means.num_tau,
            }
        )
    return found


def drift(
    wh,
    runs: Sequence[str | int] | str | int,
    baseline: str | int,
    *,
    k: int = DEFAULT_DEPTH,
    p: float = DEFAULT_PERSISTENCE,
    queries: set[str] | None = None,
    per_query: bool = False,
) -> pd.DataFrame:
    """The order drift of stored runs from a stored baseline (see the module).

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        runs: stored run names or ids (one or several).
        baseline: the stored run they are compared with.
        k: the depth compared (the top k of each ranking).
        p: RBO's persistence.
        queries: only these query ids (the means are then the subset's).
        per_query: the per-query values (:data:`~rankhouse.columns.QUERY_DRIFT_COLUMNS`)
            instead of the means (:data:`~rankhouse.columns.DRIFT_COLUMNS`).

    Raises:
        NotFoundError: a run that is not stored.
        RankhouseError: k below 1 or p outside (0, 1).
    """
    check_depth(k, "depth")
    check_persistence(p)
    given = [runs] if isinstance(runs, str | int) else list(runs)
    base = get_run(wh, baseline)
    found = [get_run(wh, run) for run in given]
    if not per_query:
        pairs = [(run["id"], base["id"], run["name"], base["name"]) for run in found]
        return drift_frame(drift_rows(wh, pairs, k, p, queries))
    rows = []
    for run in found:
        stored = run_drift(wh, run["id"], base["id"], k=k, p=p)
        rows += [
            (run["name"], base["name"], *q)
            for q in stored.queries
            if queries is None or q.query in queries
        ]
    return pd.DataFrame.from_records(rows, columns=list(QUERY_DRIFT_COLUMNS))


def drift_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Drift rows as a DataFrame with :data:`~rankhouse.columns.DRIFT_COLUMNS`."""
    frame = pd.DataFrame.from_records(
        [[row[c] for c in DRIFT_COLUMNS] for row in rows], columns=list(DRIFT_COLUMNS)
    )
    for name in ("k", "num_q", "num_tau"):
        frame[name] = frame[name].astype("int64")
    for name in ("p", *DRIFT_MEASURES):
        frame[name] = frame[name].astype(float)
    return frame


def _computed(
    mine: dict[str, list[str]], theirs: dict[str, list[str]], k: int, p: float
) -> tuple[QueryDrift, ...]:
    """Each query's drift from the two runs' top k (query -> documents, best first)."""
    ordered = sorted(set(mine) | set(theirs), key=lambda q: q.encode("utf-8", "surrogatepass"))
    found = []
    for query in ordered:
        value = ranking_drift(mine.get(query, []), theirs.get(query, []), k=k, p=p)
        found.append(
            QueryDrift(
                query, value.rbo, value.kendall_tau, value.tau_ap, value.overlap, value.shared
            )
        )
    return tuple(found)


def _means(rows: Sequence[QueryDrift]) -> DriftMeans:
    def mean(values: list[float]) -> float:
        return math.fsum(values) / len(values) if values else math.nan

    taus = [q for q in rows if not math.isnan(q.kendall_tau)]
    return DriftMeans(
        num_q=len(rows),
        rbo=mean([q.rbo for q in rows]),
        kendall_tau=mean([q.kendall_tau for q in taus]),
        tau_ap=mean([q.tau_ap for q in taus]),
        overlap=mean([q.overlap for q in rows]),
        num_tau=len(taus),
    )


def _store(store, key: dict[str, Any], queries: tuple[QueryDrift, ...]) -> int:
    means = _means(queries)
    row = {
        **key,
        "num_q": means.num_q,
        **{name: _null(means.value(name)) for name in DRIFT_MEASURES},
        "num_tau": means.num_tau,
        "version": __version__,
        "created_at": datetime.now(UTC).replace(tzinfo=None),
    }
    with store.transaction() as conn:
        conn.execute(
            "DELETE FROM drift_values WHERE drift_id IN (SELECT id FROM drift_evaluations "
            "WHERE run_id = :run AND baseline_run_id = :baseline AND depth = :depth "
            "AND persistence = :persistence)",
            key,
        )
        conn.execute(
            "DELETE FROM drift_evaluations WHERE run_id = :run AND baseline_run_id = :baseline "
            "AND depth = :depth AND persistence = :persistence",
            key,
        )
        drift_id = conn.execute(
            "INSERT INTO drift_evaluations (run_id, baseline_run_id, depth, persistence, num_q, "
            "rbo, kendall_tau, tau_ap, overlap, num_tau, rankhouse_version, created_at) "
            "VALUES (:run, :baseline, :depth, :persistence, :num_q, :rbo, :kendall_tau, "
            ":tau_ap, :overlap, :num_tau, :version, :created_at) RETURNING id",
            row,
        ).first()[0]
        for start in range(0, len(queries), _ROWS_A_STATEMENT):
            chunk = queries[start : start + _ROWS_A_STATEMENT]
            params: dict[str, Any] = {"id": drift_id}
            for i, q in enumerate(chunk):
                params |= {
                    f"q{i}": q.query,
                    f"r{i}": q.rbo,
                    f"t{i}": _null(q.kendall_tau),
                    f"a{i}": _null(q.tau_ap),
                    f"o{i}": q.overlap,
                    f"s{i}": q.shared,
                }
            values = ", ".join(
                f"(:id, :q{i}, :r{i}, :t{i}, :a{i}, :o{i}, :s{i})" for i in range(len(chunk))
            )
            conn.execute(
                "INSERT INTO drift_values (drift_id, query_id, rbo, kendall_tau, tau_ap, "
                f"overlap, shared) VALUES {values}",
                params,
            )
    return int(drift_id)


def _key(key: dict[str, Any]) -> tuple[int, int, int, float]:
    return key["run"], key["baseline"], key["depth"], key["persistence"]


def _null(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _numbers(row) -> tuple:
    query, rbo, tau, tau_ap, overlap, shared = row
    return (
        str(query),
        float(rbo),
        math.nan if tau is None else float(tau),
        math.nan if tau_ap is None else float(tau_ap),
        float(overlap),
        int(shared),
    )
