"""Compute measures in the database: per-query values, then trec_eval's aggregates.

:func:`compute` builds the shared ranking once (``sql/ranking.sql``: temporary tables of the
judged retrieved documents and per-query statistics), then runs each needed family file
once per group of measures that differ only in the family's key parameter (all cutoffs of
``P`` in one query). :func:`aggregate` turns per-query values into one value per run and
measure, adding in query-id byte order as trec_eval does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import reduce
from operator import add
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa

from .errors import MeasureError
from .measures import REGISTRY, Measure
from .measures.sqlfile import load_sql

RANKING_SQL = "ranking.sql"
MISSING_QUERIES = ("zero", "skip")
#: trec_eval's floor for the geometric mean (MIN_GEO_MEAN).
GMEAN_FLOOR = 0.00001
PER_QUERY_COLUMNS = ["run_id", "query_id", "measure", "value"]
AGGREGATE_COLUMNS = ["run_id", "measure", "value", "num_q"]
#: ranking.sql ranks the judged documents of a query by counting the documents above each
#: one, unless the query has more judged retrieved documents than this: then it sorts them all.
DENSE_FROM = 16


def compute(
    conn: sa.Connection,
    run_ids: Sequence[int],
    qrels_id: int,
    measures: Sequence[Measure],
    *,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    max_rank: int | None = None,
    judged_only: bool = False,
) -> pd.DataFrame:
    """Per-query values of ``measures`` for stored runs against a stored qrels set.

    The evaluated queries are every query of the qrels set; a query a run did not answer is
    scored on an empty ranking (trec_eval ``-c``), unless ``missing_queries="skip"``, which
    keeps only the queries the run answered. Run queries without judgments are ignored.

    Args:
        conn: a connection to the warehouse (temporary tables ``rh_*`` are created on it).
        run_ids: ids of stored runs (``runs.id``).
        qrels_id: id of the stored qrels set (``qrels_sets.id``).
        measures: parsed measures (see :func:`rankhouse.measures.parse_measures`).
        relevance_level: the level for binary measures without their own ``rel`` (``-l``).
        missing_queries: ``"zero"`` (score as empty ranking) or ``"skip"``.
        max_rank: keep only the top ``max_rank`` documents of each query (trec_eval ``-M``).
        judged_only: keep only documents judged ``>= 0``, renumbered (trec_eval ``-J``).

    Returns:
        DataFrame with columns ``run_id, query_id, measure, value`` (``query_id`` and
        ``measure`` categorical; value a float, NaN where trec_eval prints ``-nan``), one row
        per run, evaluated query and measure, ordered by run, measure (request order) and
        query id (byte order).

    Raises:
        MeasureError: a bad option or a measure whose family is not declared.
    """
    if missing_queries not in MISSING_QUERIES:
        raise MeasureError(f"missing_queries must be 'zero' or 'skip', not {missing_queries!r}")
    if relevance_level < 0:
        raise MeasureError(f"relevance level must be >= 0, not {relevance_level}")
    if max_rank is not None and max_rank < 0:
        raise MeasureError(f"max_rank must be >= 0, not {max_rank}")
    measures = list(dict.fromkeys(measures))
    run_ids = [int(run_id) for run_id in run_ids]
    levels = sorted({m.effective_level(relevance_level) for m in measures} | {relevance_level})
    _execute_all(
        conn,
        RANKING_SQL,
        {
            "run_ids": run_ids,
            "qrels_id": int(qrels_id),
            "max_rank": max_rank,
            "judged_only": bool(judged_only),
            "skip_missing": missing_queries == "skip",
            "levels": levels,
            "dense_from": DENSE_FROM,
        },
    )
    # Every family frame follows this order (run, then query id in byte order), so the
    # result needs only a stable sort on integers.
    queries = pd.DataFrame(
        conn.execute(
            sa.text("SELECT run_id, query_id FROM rh_queries ORDER BY run_id, query_id")
        ).fetchall(),
        columns=["run_id", "query_id"],
    )
    context = {
        "run_ids": run_ids,
        "qrels_id": int(qrels_id),
        "max_rank": max_rank,
        "judged_only": bool(judged_only),
    }
    columns: dict[str, np.ndarray] = {}
    for family_name, group in _groups(measures, relevance_level):
        columns |= _run_group(conn, family_name, group, context, relevance_level, queries)
    return _long_form(queries, [m.name for m in measures], columns)


def aggregate(per_query: pd.DataFrame, measures: Sequence[Measure]) -> pd.DataFrame:
    """One value per run and measure, as trec_eval's ``all`` line.

    Values are added left to right in query-id byte order starting from 0.0, then
    ``mean`` = sum / num_q, ``sum`` = the sum, ``gmean`` = exp(sum of ln(max(x, 1e-5)) /
    num_q). NaN propagates.

    Args:
        per_query: the frame :func:`compute` returned.
        measures: the measures (for their aggregate); measures absent from ``per_query``
            get no row.

    Returns:
        DataFrame with columns ``run_id, measure, value, num_q``, in the order of
        ``per_query``'s runs and of ``measures``.
    """
    kinds = {m.name: m.aggregate for m in measures}
    run_ids = per_query["run_id"].to_numpy()
    measure_codes, measure_names = pd.factorize(per_query["measure"])
    query_codes = byte_order_codes(per_query["query_id"])
    ordered = np.lexsort((query_codes, measure_codes, run_ids))
    run_ids = run_ids[ordered]
    names = np.asarray([str(name) for name in measure_names], dtype=object)[measure_codes[ordered]]
    values = per_query["value"].to_numpy(dtype=float)[ordered]
    starts = np.flatnonzero((run_ids[1:] != run_ids[:-1]) | (names[1:] != names[:-1])) + 1
    bounds = zip([0, *starts.tolist()], [*starts.tolist(), len(values)], strict=True)
    rows = [
        (run_ids[a], names[a], _combine(kinds[names[a]], values[a:b].tolist()), b - a)
        for a, b in bounds
        if b > a
    ]
    frame = pd.DataFrame(rows, columns=AGGREGATE_COLUMNS)
    order = {m.name: i for i, m in enumerate(measures)}
    frame = frame.sort_values(
        ["run_id", "measure"],
        key=lambda s: s.map(order) if s.name == "measure" else s,
        kind="stable",
    )
    return frame.reset_index(drop=True)


# --- internals ----------------------------------------------------------------------------------

_PER_QUERY_DTYPES = {
    "run_id": "int64",
    "query_id": "category",
    "measure": "category",
    "value": "float64",
}


def byte_order_codes(ids: pd.Series) -> np.ndarray:
    """Integer codes of ``ids`` that sort as the ids do in UTF-8 byte order.

    Sorting the few distinct ids as Python strings (code point order, which is UTF-8 byte
    order) and then the rows by integer code is far cheaper than sorting the rows by string.
    """
    codes, distinct = pd.factorize(ids)
    labels = [str(label) for label in distinct]
    rank = np.empty(len(labels), dtype="int64")
    rank[sorted(range(len(labels)), key=labels.__getitem__)] = np.arange(len(labels))
    return rank[codes]


def ranks_in(labels: pd.Series, order: dict[Any, int]) -> np.ndarray:
    """``order[label]`` for every label: a lookup per distinct label, not per row."""
    codes, distinct = pd.factorize(labels)
    return np.array([order[label] for label in distinct], dtype="int64")[codes]


def _combine(kind: str, values: list[float]) -> float:
    if not values:
        return math.nan
    if kind == "sum":
        return reduce(add, values, 0.0)
    if kind == "gmean":
        logs = [math.log(max(v, GMEAN_FLOOR)) if not math.isnan(v) else math.nan for v in values]
        return math.exp(reduce(add, logs, 0.0) / len(values))
    return reduce(add, values, 0.0) / len(values)


def _groups(measures: list[Measure], default_level: int) -> list[tuple[str, list[Measure]]]:
    """Measures of one family that differ only in the family's key, in request order."""
    groups: dict[tuple, list[Measure]] = {}
    for measure in measures:
        family = REGISTRY.families.get(measure.family)
        if family is None:
            raise MeasureError(f"{measure.name}: family {measure.family!r} is not declared")
        scalars = _scalar_binds(measure, family.key, default_level)
        groups.setdefault((measure.family, tuple(sorted(scalars.items()))), []).append(measure)
    return [(key[0], group) for key, group in groups.items()]


def _scalar_binds(measure: Measure, key: str | None, default_level: int) -> dict[str, Any]:
    binds = {name: value for name, value in measure.params.items() if name != key}
    binds["rel"] = measure.effective_level(default_level)
    return binds


def _key_of(measure: Measure, key: str | None) -> Any:
    if key is None:
        return None
    if key == "measure":
        return measure.definition.name
    return measure.params.get(key)


def _run_group(
    conn: sa.Connection,
    family_name: str,
    group: list[Measure],
    context: dict[str, Any],
    default_level: int,
    queries: pd.DataFrame,
) -> dict[str, np.ndarray]:
    """Run one family file for measures that differ only in its key: the values of each
    measure (by name), aligned with ``queries``."""
    family = REGISTRY.families[family_name]
    sql = load_sql(family.sql)
    offered: dict[str, Any] = dict(context)
    offered |= _scalar_binds(group[0], family.key, default_level)
    by_key: dict[Any, list[Measure]] = {}
    for measure in group:
        by_key.setdefault(_key_of(measure, family.key), []).append(measure)
    if family.list_bind is not None:
        offered[family.list_bind] = list(by_key)
    if family.prepare is not None:
        family.prepare(conn, group, offered)
    found = _fetch_frame(_execute_all(conn, family.sql, sql.binds(offered)))
    width = 4 if family.key is not None else 3
    if len(found) and len(found.columns) != width:
        raise MeasureError(
            f"sql/{family.sql} returns {len(found.columns)} columns; expected run_id, query_id"
            f"{', key' if width == 4 else ''}, value"
        )
    wanted = pd.MultiIndex.from_arrays(
        [queries["run_id"].to_numpy(dtype="int64"), queries["query_id"].to_numpy()]
    )
    columns = {}
    for key, measures in by_key.items():
        rows = found
        if width == 4:
            keys = found.iloc[:, 2]
            rows = found[keys.isna()] if key is None else found[keys == key]
        values = pd.Series(
            rows.iloc[:, -1].to_numpy(dtype=float),
            index=pd.MultiIndex.from_arrays(
                [rows.iloc[:, 0].to_numpy(dtype="int64"), rows.iloc[:, 1].to_numpy()]
            ),
        )
        present = wanted.isin(values.index)
        computed = values.reindex(wanted).to_numpy()
        for measure in measures:
            # rows the family left out take the measure's value for them (a NaN it returned
            # stays NaN: trec_eval prints -nan)
            columns[measure.name] = np.where(present, computed, measure.empty_value)
    return columns


def _long_form(queries: pd.DataFrame, names: list[str], columns: dict[str, np.ndarray]):
    """The long frame (run, measure in request order, query in byte order) of the columns.

    ``query_id`` and ``measure`` are categorical: hundreds of thousands of rows share a few
    thousand query ids and a few measure names.
    """
    names = [name for name in names if name in columns]
    if not names or queries.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in _PER_QUERY_DTYPES.items()})
    query_codes, query_ids = pd.factorize(queries["query_id"].to_numpy(dtype=object))
    size = len(queries)
    run_ids = np.tile(queries["run_id"].to_numpy(dtype="int64"), len(names))
    measure_codes = np.repeat(np.arange(len(names)), size)
    order = np.lexsort((measure_codes, run_ids))  # stable: queries stay in byte order
    return pd.DataFrame(
        {
            "run_id": run_ids[order],
            "query_id": pd.Categorical.from_codes(
                np.tile(query_codes, len(names))[order], categories=query_ids
            ),
            "measure": pd.Categorical.from_codes(measure_codes[order], categories=names),
            "value": np.concatenate([columns[name] for name in names])[order],
        }
    )


def _fetch_frame(result: sa.CursorResult) -> pd.DataFrame:
    """The rows of ``result`` as a DataFrame (DuckDB builds it directly; others row by row)."""
    fetch_numpy = getattr(result.cursor, "fetchnumpy", None)
    if fetch_numpy is not None:  # DuckDB: numpy arrays, cheaper than its DataFrame conversion
        return pd.DataFrame(fetch_numpy())
    return pd.DataFrame(result.fetchall(), columns=list(result.keys()))


def _execute_all(conn: sa.Connection, path: str, binds: dict[str, Any]) -> sa.CursorResult:
    """Run every statement of ``sql/<path>`` with its declared binds; the last result."""
    sql = load_sql(path)
    binds = sql.binds(binds)
    result = None
    for statement in sql.statements:
        used = {name: binds[name] for name in statement.compile().params if name in binds}
        result = conn.execute(statement, used)
    return result
