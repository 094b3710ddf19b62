"""The stored evaluations: finding those already computed, storing new ones, reading values.

An evaluation is identified by (run, qrels set and its content hash, canonical measure,
effective relevance level, missing-query policy, other options). Storing replaces an
evaluation with the same key, in one transaction with its per-query values.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..defaults import __version__
from ..engine import VALUES_TABLE, compute
from ..labels import label
from ..results import PerQueryValues
from .signature import EMPTY_QUERY_SET, QUERY_SETS, input_signature

if TYPE_CHECKING:
    from ..backends.base import Connection


@dataclass(frozen=True)
class EvaluationKey:
    """What identifies a stored evaluation."""

    run_id: int
    qrels_id: int
    qrels_sha256: str
    measure: str
    relevance_level: int
    missing_queries: str
    options: str


def effective_level(measure, default_level: int) -> int:
    level = getattr(measure, "relevance_level", None)
    return default_level if level is None else int(level)


_FIND_STORED = """
    SELECT id, run_id, measure, relevance_level, value, num_q, requested
    FROM evaluations
    WHERE qrels_id = :qrels_id AND qrels_sha256 = :qrels_sha256
      AND missing_queries = :missing_queries AND options = :options
      AND run_id = ANY(:run_ids) AND measure = ANY(:measures)
    ORDER BY id
    """


def find_stored(store, keys: Iterable[EvaluationKey]) -> dict[EvaluationKey, dict[str, Any]]:
    keys = list(keys)
    if not keys:
        return {}
    wanted = set(keys)
    found: dict[EvaluationKey, dict[str, Any]] = {}
    groups: dict[tuple, list[EvaluationKey]] = {}
    for key in keys:
        groups.setdefault(
            (key.qrels_id, key.qrels_sha256, key.missing_queries, key.options), []
        ).append(key)
    with store.connect() as conn:
        for (qrels_id, sha, policy, opts), group in groups.items():
            rows = conn.execute(
                _FIND_STORED,
                {
                    "qrels_id": qrels_id,
                    "qrels_sha256": sha,
                    "missing_queries": policy,
                    "options": opts,
                    "run_ids": sorted({k.run_id for k in group}),
                    "measures": sorted({k.measure for k in group}),
                },
            ).mappings()
            for row in rows:  # the newest wins (ORDER BY id)
                key = EvaluationKey(
                    row["run_id"],
                    qrels_id,
                    sha,
                    row["measure"],
                    row["relevance_level"],
                    policy,
                    opts,
                )
                if key in wanted:
                    found[key] = dict(row)
    return found


def compute_and_store(
    store,
    keys: Sequence[EvaluationKey],
    measures,
    relevance_level: int,
    missing_queries: str,
    options: dict[str, Any],
    asked_for: bool = True,
) -> None:
    """One engine pass for every run and measure not stored yet, then one transaction; the
    store is held throughout (the values stay in the engine's tables on its connection).
    ``asked_for``: whether the caller named these measures (``history`` shows those by
    default), or computed them for its own use (a report's precision-recall points)."""
    with store.session():
        _compute_and_store(
            store, keys, measures, relevance_level, missing_queries, options, asked_for
        )


def mark_requested(store, stored: Iterable[dict[str, Any]]) -> None:
    """Mark stored evaluations (rows of :func:`find_stored`) as asked for by a command: a
    report's precision-recall point that ``eval`` then asks for becomes a default column of
    ``history``."""
    ids = sorted({int(row["id"]) for row in stored if row.get("requested") is False})
    if ids and not store.read_only:
        with store.transaction() as conn:
            conn.execute(
                "UPDATE evaluations SET requested = TRUE WHERE id = ANY(:ids)", {"ids": ids}
            )


def _compute_and_store(store, keys, measures, relevance_level, missing_queries, options, asked_for):
    by_name = {m.name: m for m in measures}
    run_ids = sorted({k.run_id for k in keys})
    wanted = [by_name[name] for name in dict.fromkeys(k.measure for k in keys)]
    qrels_id = keys[0].qrels_id
    with store.engine_connection(run_ids, qrels_id) as duck:
        values = compute(
            duck,
            run_ids,
            qrels_id,
            wanted,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
            **options,
        )
        # what each evaluation was computed from: its queries, read where the values are
        query_sets = {
            (run_id, idx): found for run_id, idx, found in duck.execute(QUERY_SETS).fetchall()
        }
    # the values stay in the engine's temporary table on `duck` after the block
    totals = {(a.run_id, a.measure.name): a for a in values.aggregates()}
    index = {m.name: i for i, m in enumerate(values.measures)}
    now = datetime.now(UTC).replace(tzinfo=None)
    evaluations = []
    for key in keys:
        measure = by_name[key.measure]
        total = totals.get((key.run_id, key.measure))
        evaluations.append(
            {
                **_key_params(key),
                "sha": key.qrels_sha256,
                "parameters": json.dumps(_jsonable(measure.params), sort_keys=True),
                "label": label(measure, relevance_level, missing_queries, options),
                "aggregate": measure.aggregate,
                "value": total.value if total is not None else math.nan,
                "num_q": total.num_q if total is not None else 0,
                "version": __version__,
                "created_at": now,
                "requested": bool(asked_for),
                "signature": input_signature(
                    key.qrels_sha256,
                    query_sets.get((key.run_id, index[key.measure]), EMPTY_QUERY_SET),
                    key.relevance_level,
                    key.missing_queries,
                    key.options,
                ),
            }
        )
    with store.transaction() as conn:
        if store.many_writers:  # two processes storing one evaluation store it once
            store.lock_evaluations(conn, {(k.run_id, k.qrels_id) for k in keys})
        _delete_stored(conn, keys)
        ids = {
            (run_id, index[measure]): evaluation_id
            for evaluation_id, run_id, measure in _insert_evaluations(conn, evaluations)
        }
        if ids:
            store.store_values(conn, duck, *_values_select(ids))


#: The columns of an evaluation row, and the names of their values in ``evaluations``' dicts.
_EVALUATION_COLUMNS = {
    "run_id": "run_id",
    "qrels_id": "qrels_id",
    "qrels_sha256": "sha",
    "measure": "measure",
    "parameters": "parameters",
    "relevance_level": "level",
    "missing_queries": "policy",
    "options": "options",
    "aggregate": "aggregate",
    "value": "value",
    "num_q": "num_q",
    "rankhouse_version": "version",
    "created_at": "created_at",
    "label": "label",
    "requested": "requested",
    "input_signature": "signature",
}
#: Rows of one INSERT (16 binds a row: PostgreSQL takes at most 65,535 binds a statement).
_INSERT_ROWS = 1_000


def _insert_evaluations(conn: Connection, evaluations: list[dict[str, Any]]) -> list[tuple]:
    """Insert the evaluation rows, many to a statement (one statement costs about 1 ms on a
    DuckDB file, and a round trip to a server); their (id, run_id, measure)."""
    columns = ", ".join(_EVALUATION_COLUMNS)
    inserted = []
    for start in range(0, len(evaluations), _INSERT_ROWS):
        rows, params = [], {}
        for i, row in enumerate(evaluations[start : start + _INSERT_ROWS]):
            rows.append("(" + ", ".join(f":{n}{i}" for n in _EVALUATION_COLUMNS.values()) + ")")
            params |= {f"{n}{i}": row[n] for n in _EVALUATION_COLUMNS.values()}
        inserted += conn.execute(
            f"INSERT INTO evaluations ({columns}) VALUES {', '.join(rows)} "
            "RETURNING id, run_id, measure",
            params,
        ).all()
    return [tuple(row) for row in inserted]


def _delete_stored(conn: Connection, keys: Sequence[EvaluationKey]) -> None:
    """Delete the stored evaluations (and their values) that ``keys`` are about to replace.

    They are looked up first: evaluations asked for the first time (a run just ingested)
    have none, and the two deletes would cost 4 ms for nothing."""
    matches = []
    params: dict[str, Any] = {}
    for i, key in enumerate(keys):
        matches.append(
            f"(run_id = :run_id{i} AND qrels_id = :qrels_id{i} AND measure = :measure{i} AND "
            f"relevance_level = :level{i} AND missing_queries = :policy{i} AND "
            f"options = :options{i})"
        )
        params |= {f"{name}{i}": value for name, value in _key_params(key).items()}
    replaced = [
        row[0]
        for row in conn.execute(
            f"SELECT id FROM evaluations WHERE {' OR '.join(matches)}", params
        ).all()
    ]
    if not replaced:
        return
    ids = {f"id{i}": evaluation_id for i, evaluation_id in enumerate(replaced)}
    listed = ", ".join(f":{name}" for name in ids)
    conn.execute(f"DELETE FROM evaluation_values WHERE evaluation_id IN ({listed})", ids)
    conn.execute(f"DELETE FROM evaluations WHERE id IN ({listed})", ids)


def _key_params(key: EvaluationKey) -> dict[str, Any]:
    return {
        "run_id": key.run_id,
        "qrels_id": key.qrels_id,
        "measure": key.measure,
        "level": key.relevance_level,
        "policy": key.missing_queries,
        "options": key.options,
    }


def _jsonable(params: dict[str, Any]) -> dict[str, Any]:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in (params or {}).items()}


def engine_values(duck, run_ids: list[int], names: dict[int, str], measures) -> PerQueryValues:
    """The engine's values (``rh_values`` on ``duck``) in result order."""
    found = duck.execute(
        f"SELECT v.run_id, v.query_id, v.measure_idx, v.value FROM {VALUES_TABLE} AS v "
        "JOIN (SELECT unnest($runs) AS run_id, generate_subscripts($runs, 1) AS r) AS o "
        "ON o.run_id = v.run_id ORDER BY o.r, v.query_id, v.measure_idx",
        {"runs": run_ids},
    ).fetchall()
    measure_names = [m.name for m in measures]
    values = PerQueryValues()
    for run_id, query, idx, value in found:
        values.run.append(names[run_id])
        values.query.append(query)
        values.measure.append(measure_names[idx])
        values.value.append(value)
    return values


def stored_values(store, rows: list[dict[str, Any]]) -> PerQueryValues:
    """The stored per-query values of the evaluations in ``rows``, in result order."""
    values = PerQueryValues()
    if not rows:
        return values
    runs = list(dict.fromkeys(row["run"] for row in rows))
    measures = list(dict.fromkeys(row["measure"] for row in rows))
    with store.connect() as conn:
        found = conn.execute(
            "SELECT o.r, v.query_id, o.m, v.value FROM evaluation_values AS v JOIN "
            "(SELECT unnest(:ids) AS evaluation_id, unnest(:r) AS r, unnest(:m) AS m) AS o "
            "ON o.evaluation_id = v.evaluation_id ORDER BY o.r, v.query_id, o.m",
            {
                "ids": [int(row["evaluation_id"]) for row in rows],
                "r": [runs.index(row["run"]) for row in rows],
                "m": [measures.index(row["measure"]) for row in rows],
            },
        ).all()
    for r, query, m, value in found:
        values.run.append(runs[r])
        values.query.append(query)
        values.measure.append(measures[m])
        values.value.append(math.nan if value is None else value)
    return values


def _values_select(ids: dict[tuple[int, int], int]) -> tuple[str, dict[str, Any]]:
    """The engine's values (``rh_values``) of the evaluations ``ids`` ((run id, measure
    index) -> evaluation id) as ``evaluation_id, query_id, value``, and the binds."""
    keys = list(ids)
    params = {
        "runs": [run_id for run_id, _ in keys],
        "idx": [idx for _, idx in keys],
        "ids": list(ids.values()),
    }
    select = (
        f"SELECT e.evaluation_id, v.query_id, v.value FROM {VALUES_TABLE} AS v JOIN "
        "(SELECT unnest($runs) AS run_id, unnest($idx) AS measure_idx, "
        "CAST(unnest($ids) AS INTEGER) AS evaluation_id) AS e "
        "ON e.run_id = v.run_id AND e.measure_idx = v.measure_idx"
    )
    return select, params
