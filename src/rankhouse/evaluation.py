"""Evaluate runs against a qrels set, store every evaluation, and reuse stored ones.

An evaluation is identified by (run, qrels set and its content hash, canonical measure,
effective relevance level, missing-query policy, other options). Asking again for the same
thing returns the stored per-query values instead of recomputing them, unless ``recompute``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa

from .errors import InputError, NotFoundError, RankhouseError
from .labels import label

MISSING_QUERY_POLICIES = ("zero", "skip")


@dataclass
class QueryCounts:
    """How the query sets of one run and the qrels set met."""

    evaluated: int
    """Queries averaged over (all qrels queries, or run ∩ qrels with ``missing_queries='skip'``)."""
    missing_from_run: int
    """Qrels queries the run did not answer (scored as an empty ranking under ``'zero'``)."""
    ignored: int
    """Run queries without any judgment (not evaluated)."""
    tied_pairs: int
    """Adjacent pairs of documents with equal scores, ordered by doc id descending (trec_eval)."""


@dataclass
class EvaluationResult:
    """What :func:`evaluate` returns. DataFrames have fixed columns whatever was asked.

    Attributes:
        per_query: long form, columns ``run, query, measure, value`` (the first three
            categorical), ordered by run, query id (byte order) and measure (request order).
        aggregates: columns ``run, run_id, measure, value, num_q, evaluation_id, reused,
            label``.
        summary: wide form, column ``run`` then one column per measure in request order.
        query_counts: per run name, the :class:`QueryCounts`.
        qrels: the name of the qrels set evaluated against.
        labels: per canonical measure name, its label: the name with the settings it was
            computed under (``AP`` with ``relevance_level=2`` is ``AP(rel=2)``; see
            :mod:`rankhouse.labels`). ``aggregates`` has it as column ``label``.
    """

    per_query: pd.DataFrame
    aggregates: pd.DataFrame
    summary: pd.DataFrame
    query_counts: dict[str, QueryCounts] = field(default_factory=dict)
    qrels: str = ""
    labels: dict[str, str] = field(default_factory=dict)

    def styled(
        self,
        round: int | dict[str, int] = 4,  # noqa: A002 (PyTerrier's name)
        highlight: str | None = "bold",
    ) -> Any:
        """The means per run as an HTML table (Jupyter shows it as such).

        Args:
            round: decimals, one number or a dict measure -> decimals.
            highlight: how the best mean per measure is marked: ``'bold'``, ``'color'`` or
                None.

        Returns:
            A :class:`~rankhouse.report.HtmlTable` (``str()`` of it is the HTML).
        """
        from .report.tables import HtmlTable, evaluation_html

        return HtmlTable(evaluation_html(self, round=round, highlight=highlight))

    def _repr_html_(self) -> str:
        return self.styled().html

    @property
    def num_reused(self) -> int:
        """Number of (run, measure) aggregates taken from storage rather than computed."""
        return int(self.aggregates["reused"].sum())


def evaluate(
    wh,
    qrels: Any,
    runs: Any,
    measures: Iterable[Any],
    *,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    recompute: bool = False,
    options: dict[str, Any] | None = None,
    with_query_counts: bool = True,
    name: str | None = None,
    meta: dict[str, str] | None = None,
) -> EvaluationResult:
    """Evaluate runs against a qrels set, storing per-query values and aggregates.

    Args:
        wh: the :class:`~rankhouse.Warehouse`.
        qrels: a stored qrels set's name or id, a file path or a DataFrame.
        runs: one run or a list of runs; each a stored name or id, a file path (ingested on
            the fly, deduplicated by content hash; a multi-tag file gives one run per tag) or
            a pandas DataFrame.
        measures: names in ir_measures' or trec_eval's grammar (``"nDCG@10"``, ``"P_5"``,
            ``"ndcg_cut.10,20"``) or :class:`~rankhouse.measures.Measure` objects.
        relevance_level: grade from which a judgment counts as relevant for binary measures
            that do not set their own (``AP(rel=2)``).
        missing_queries: ``"zero"`` scores a qrels query the run did not answer as an empty
            ranking and counts it in the mean (trec_eval ``-c``); ``"skip"`` averages over the
            queries both have.
        recompute: compute and store again even when an identical evaluation is stored.
        options: further options that change values (for example trec_eval's ``-M`` as
            ``{"max_rank": 100}`` and ``-J`` as ``{"judged_only": True}``); part of the key.
        with_query_counts: fill ``query_counts`` (a scan of the run's rows: skip it when
            not needed, e.g. for trec-eval's output).
        name: the name of a run given as a file or DataFrame (as ``ingest_run``'s).
        meta: metadata pairs stored with a run given as a file or DataFrame.

    Returns:
        An :class:`EvaluationResult`.

    Raises:
        MeasureError: an unknown measure name.
        NotFoundError: a run or qrels name that is neither stored nor a file.
        InputError: a file that cannot be ingested.
    """
    from .measures import parse_measures

    if missing_queries not in MISSING_QUERY_POLICIES:
        raise RankhouseError(
            f"missing_queries must be one of {', '.join(MISSING_QUERY_POLICIES)}, "
            f"not {missing_queries!r}"
        )
    if not isinstance(relevance_level, int) or not -(2**31) <= relevance_level < 2**31:
        raise RankhouseError(
            f"relevance_level must be a 32-bit integer (grades are), not {relevance_level!r}"
        )
    measure_list = parse_measures([measures] if isinstance(measures, str) else measures)
    if not measure_list:
        raise RankhouseError("no measure requested")
    options = dict(sorted((options or {}).items()))
    labels = {m.name: label(m, relevance_level, missing_queries, options) for m in measure_list}
    # `AP` at level 2 and `AP(rel=2)` are one computation: evaluate the first asked for
    measure_list = list({labels[m.name]: m for m in reversed(measure_list)}.values())[::-1]
    qrels_row = resolve_qrels(wh, qrels)
    run_rows = resolve_runs(wh, runs, name=name, meta=meta)
    if not run_rows:
        raise RankhouseError("no run to evaluate")

    keys = {
        (run["id"], m.name): _EvaluationKey(
            run_id=run["id"],
            qrels_id=qrels_row["id"],
            qrels_sha256=qrels_row["content_sha256"],
            measure=m.name,
            relevance_level=_effective_level(m, relevance_level),
            missing_queries=missing_queries,
            options=json.dumps(options, sort_keys=True),
        )
        for run in run_rows
        for m in measure_list
    }
    stored = {} if recompute else _find_stored(wh, keys.values())
    to_compute = [k for k in keys.values() if k not in stored]
    computed_values = None
    if to_compute:
        computed_values = _compute_and_store(
            wh, to_compute, measure_list, relevance_level, missing_queries, options
        )
        stored.update(_find_stored(wh, to_compute))

    computed = set(to_compute)
    run_names = {run["id"]: run["name"] for run in run_rows}
    aggregates = pd.DataFrame(
        [
            {
                "run": run_names[key.run_id],
                "run_id": key.run_id,
                "measure": key.measure,
                "value": stored[key]["value"],
                "num_q": stored[key]["num_q"],
                "evaluation_id": stored[key]["id"],
                "reused": key not in computed,
                "label": labels[key.measure],
            }
            for key in keys.values()
        ],
        columns=["run", "run_id", "measure", "value", "num_q", "evaluation_id", "reused", "label"],
    )
    if len(to_compute) == len(keys):  # nothing reused: the values are at hand
        per_query = _labelled(computed_values, aggregates)
    else:
        per_query = _load_values(wh, aggregates)
    summary = aggregates.pivot(index="run", columns="measure", values="value")
    summary = summary.reindex(
        index=list(dict.fromkeys(aggregates["run"])), columns=[m.name for m in measure_list]
    )
    summary = summary.reset_index()
    summary.columns.name = None
    counts = {
        run["name"]: query_counts(wh, run["id"], qrels_row["id"], missing_queries)
        for run in run_rows
        if with_query_counts
    }
    return EvaluationResult(per_query, aggregates, summary, counts, qrels_row["name"], labels)


def evaluate_frames(
    qrels: Any,
    run: Any,
    measures: Iterable[Any],
    *,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    order: str = "score",
    columns: str | dict[str, str] | None = None,
    qrels_columns: str | dict[str, str] | None = None,
) -> EvaluationResult:
    """Evaluate DataFrames (or files) without a warehouse file: notebooks, quick checks.

    Args:
        qrels: a DataFrame or file path (column mapping ``qrels_columns``).
        run: a pandas DataFrame (any column names that ingest recognises, or mapped with
            ``columns``) or a file path. Several system tags give several runs.
        measures: measure names, as for :func:`evaluate`.
        relevance_level: as for :func:`evaluate`.
        missing_queries: as for :func:`evaluate`.
        order: ``"score"`` ranks by score (trec_eval; a rank column is ignored); ``"rank"``
            takes the run's ranks as the ranking (a run without scores needs it).
        columns: column mapping for the run, e.g. ``{"qid": "query", "score": "sim"}``.
        qrels_columns: column mapping for the qrels.

    Returns:
        An :class:`EvaluationResult` (the in-memory warehouse is discarded).
    """
    from .warehouse import Warehouse

    with Warehouse(":memory:") as wh:
        qrels_result = wh.ingest_qrels(qrels, columns=qrels_columns)
        run_results = wh.ingest_run(run, columns=columns, order=order)
        return evaluate(
            wh,
            qrels_result.id,
            [r.id for r in run_results],
            measures,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
        )


# --- resolving names, ids, files and frames -------------------------------------------------


def resolve_qrels(wh, qrels: Any) -> dict[str, Any]:
    """The catalogue row of a qrels set given by name, id, file path or DataFrame."""
    if isinstance(qrels, pd.DataFrame):
        return wh.qrels(wh.ingest_qrels(qrels).id)
    if _is_existing_file(qrels):
        return wh.qrels(wh.ingest_qrels(qrels).id)
    try:
        return wh.qrels(qrels)
    except NotFoundError as exc:
        raise NotFoundError(f"{exc}; it is not a file either") from None


def resolve_runs(
    wh, runs: Any, *, name: str | None = None, meta: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Catalogue rows of runs given by names, ids, file paths or DataFrames (in order).

    A file or DataFrame is ingested (deduplicated by content). When its name is held by
    other content (a run file regenerated under the same tag), it is stored as the next
    version of that name, ``<name>@2``, ``<name>@3``..., with the same system tag.

    Args:
        wh: the warehouse.
        runs: one run or a list of runs.
        name: the stored name of the one file or DataFrame among ``runs``.
        meta: metadata pairs stored with the runs ingested from files or DataFrames.

    Raises:
        InputError: ``name`` or ``meta`` given without a run file, or ``name`` for several.
    """
    if isinstance(runs, (str, int, os.PathLike, pd.DataFrame)):
        runs = [runs]
    runs = list(runs)
    ingested = [run for run in runs if isinstance(run, pd.DataFrame) or _is_existing_file(run)]
    if (name is not None or meta) and not ingested:
        raise InputError(
            "--name and --meta apply to a run given as a file; the runs given are stored ones",
            hint="set them with 'rankhouse ingest run FILE --name ... --meta ...'",
        )
    if name is not None and len(ingested) > 1:
        raise InputError(
            f"--name names one run file, but {len(ingested)} were given",
            hint="evaluate them one by one, or ingest them with their names first",
        )
    rows: list[dict[str, Any]] = []
    for run in runs:
        if isinstance(run, pd.DataFrame) or _is_existing_file(run):
            results = wh.ingest_run(run, name=name, meta=meta, new_version=True)
            rows.extend(wh.run(result.id) for result in results)
            continue
        try:
            rows.append(wh.run(run))
        except NotFoundError as exc:
            raise NotFoundError(f"{exc}; it is not a file either") from None
    unique = {row["id"]: row for row in rows}
    return list(unique.values())


def _is_existing_file(value: Any) -> bool:
    if isinstance(value, (int, bool)):
        return False
    try:
        return Path(value).is_file()
    except (TypeError, OSError):
        return False


# --- the stored evaluations -----------------------------------------------------------------


@dataclass(frozen=True)
class _EvaluationKey:
    run_id: int
    qrels_id: int
    qrels_sha256: str
    measure: str
    relevance_level: int
    missing_queries: str
    options: str


def _effective_level(measure, default_level: int) -> int:
    level = getattr(measure, "relevance_level", None)
    return default_level if level is None else int(level)


_FIND_STORED = sa.text(
    """
    SELECT id, run_id, measure, relevance_level, value, num_q
    FROM evaluations
    WHERE qrels_id = :qrels_id AND qrels_sha256 = :qrels_sha256
      AND missing_queries = :missing_queries AND options = :options
      AND run_id IN :run_ids AND measure IN :measures
    ORDER BY id
    """
).bindparams(sa.bindparam("run_ids", expanding=True), sa.bindparam("measures", expanding=True))


def _find_stored(wh, keys: Iterable[_EvaluationKey]) -> dict[_EvaluationKey, dict[str, Any]]:
    keys = list(keys)
    if not keys:
        return {}
    wanted = set(keys)
    found: dict[_EvaluationKey, dict[str, Any]] = {}
    groups: dict[tuple, list[_EvaluationKey]] = {}
    for key in keys:
        groups.setdefault(
            (key.qrels_id, key.qrels_sha256, key.missing_queries, key.options), []
        ).append(key)
    with wh.connect() as conn:
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
                key = _EvaluationKey(
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


def _compute_and_store(
    wh,
    keys: Sequence[_EvaluationKey],
    measures,
    relevance_level: int,
    missing_queries: str,
    options: dict[str, Any],
) -> pd.DataFrame:
    """One engine pass for every run and measure not stored yet, then one transaction.

    Returns:
        The engine's per-query values (columns ``run_id, query_id, measure, value``).
    """
    from . import __version__
    from .engine import aggregate, compute
    from .storage import engine_connection

    by_name = {m.name: m for m in measures}
    run_ids = sorted({k.run_id for k in keys})
    wanted = [by_name[name] for name in dict.fromkeys(k.measure for k in keys)]
    qrels_id = keys[0].qrels_id
    with engine_connection(wh, run_ids, qrels_id) as conn:
        per_query = compute(
            conn,
            run_ids,
            qrels_id,
            wanted,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
            **options,
        )
        # keep the engine's temporary ranking tables on the connection (trec-eval's relstring
        # reads them) instead of rolling them back with this read-only transaction
        conn.commit()
    totals = aggregate(per_query, wanted).set_index(["run_id", "measure"])
    now = datetime.now(UTC).replace(tzinfo=None)
    evaluations = []
    for key in keys:
        measure = by_name[key.measure]
        found = (key.run_id, key.measure) in totals.index
        total = totals.loc[(key.run_id, key.measure)] if found else None
        evaluations.append(
            {
                **_key_params(key),
                "sha": key.qrels_sha256,
                "parameters": json.dumps(_jsonable(measure.params), sort_keys=True),
                "label": label(measure, relevance_level, missing_queries, options),
                "aggregate": measure.aggregate,
                "value": float(total["value"]) if found else math.nan,
                "num_q": int(total["num_q"]) if found else 0,
                "version": __version__,
                "created_at": now,
            }
        )
    with wh.transaction() as conn:
        _delete_stored(conn, keys)
        ids = {}
        for values in evaluations:
            ids[(values["run_id"], values["measure"])] = conn.execute(
                _INSERT_EVALUATION, values
            ).scalar_one()
        _insert_values(wh, conn, per_query, ids)
    return per_query


_INSERT_EVALUATION = sa.text(
    "INSERT INTO evaluations (run_id, qrels_id, qrels_sha256, measure, parameters, "
    "relevance_level, missing_queries, options, aggregate, value, num_q, rankhouse_version, "
    "created_at, label) VALUES (:run_id, :qrels_id, :sha, :measure, :parameters, :level, "
    ":policy, :options, :aggregate, :value, :num_q, :version, :created_at, :label) RETURNING id"
)


def _delete_stored(conn: sa.Connection, keys: Sequence[_EvaluationKey]) -> None:
    """Delete the stored evaluations (and their values) that ``keys`` are about to replace."""
    matches = []
    params: dict[str, Any] = {}
    for i, key in enumerate(keys):
        matches.append(
            f"(run_id = :run_id{i} AND qrels_id = :qrels_id{i} AND measure = :measure{i} AND "
            f"relevance_level = :level{i} AND missing_queries = :policy{i} AND "
            f"options = :options{i})"
        )
        params |= {f"{name}{i}": value for name, value in _key_params(key).items()}
    replaced = f"SELECT id FROM evaluations WHERE {' OR '.join(matches)}"
    conn.execute(
        sa.text(f"DELETE FROM evaluation_values WHERE evaluation_id IN ({replaced})"), params
    )
    conn.execute(sa.text(f"DELETE FROM evaluations WHERE id IN ({replaced})"), params)


def _key_params(key: _EvaluationKey) -> dict[str, Any]:
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


def _insert_values(
    wh, conn: sa.Connection, per_query: pd.DataFrame, ids: dict[tuple[int, str], int]
) -> None:
    """Store the per-query values of the evaluations ``ids`` ((run id, measure) -> id)."""
    from .storage import insert_frame

    run_codes, run_ids = pd.factorize(per_query["run_id"])
    measure_codes, measures = pd.factorize(per_query["measure"])
    table = np.full((len(run_ids), len(measures)), -1, dtype="int64")
    run_index = {int(run_id): i for i, run_id in enumerate(run_ids)}
    measure_index = {str(name): i for i, name in enumerate(measures)}
    for (run_id, measure), evaluation_id in ids.items():
        if run_id in run_index and measure in measure_index:
            table[run_index[run_id], measure_index[measure]] = evaluation_id
    evaluation_ids = table[run_codes, measure_codes]
    kept = evaluation_ids >= 0
    frame = pd.DataFrame(
        {
            "evaluation_id": evaluation_ids[kept],
            "query_id": _as_text(per_query["query_id"])[kept],
            "value": per_query["value"].to_numpy(dtype=float)[kept],
        }
    )
    insert_frame(wh, conn, "evaluation_values", frame)


def _as_text(ids: pd.Series) -> np.ndarray:
    """The ids as an object array of str (via the categories when categorical: no per-row cast)."""
    if isinstance(ids.dtype, pd.CategoricalDtype):
        categories = np.asarray([str(c) for c in ids.cat.categories], dtype=object)
        return categories[ids.cat.codes.to_numpy()]
    return np.asarray([str(i) for i in ids], dtype=object)


def _labelled(per_query: pd.DataFrame, aggregates: pd.DataFrame) -> pd.DataFrame:
    """The engine's values as :func:`_load_values` returns stored ones: run names, same order."""
    from .engine import byte_order_codes, ranks_in

    run_ids = list(dict.fromkeys(aggregates["run_id"]))
    run_names = dict(zip(aggregates["run_id"], aggregates["run"], strict=True))
    measure_order = {name: i for i, name in enumerate(dict.fromkeys(aggregates["measure"]))}
    run_order = ranks_in(per_query["run_id"], {run_id: i for i, run_id in enumerate(run_ids)})
    ordered = np.lexsort(
        (
            ranks_in(per_query["measure"], measure_order),
            byte_order_codes(per_query["query_id"]),  # DuckDB's ORDER BY query_id: byte order
            run_order,
        )
    )
    names = [run_names[run_id] for run_id in run_ids]
    return pd.DataFrame(
        {
            "run": pd.Categorical.from_codes(run_order[ordered], categories=names),
            "query": per_query["query_id"].array.take(ordered),
            "measure": per_query["measure"].array.take(ordered),
            "value": per_query["value"].to_numpy(dtype=float)[ordered],
        }
    )


def _load_values(wh, aggregates: pd.DataFrame) -> pd.DataFrame:
    columns = ["run", "query", "measure", "value"]
    if aggregates.empty:
        return pd.DataFrame(columns=columns)
    labels = aggregates[["evaluation_id", "run", "measure"]]
    ids = [int(i) for i in labels["evaluation_id"]]
    with wh.connect() as conn:
        if wh.dialect == "duckdb":  # bulk path: DuckDB joins and sorts, numpy builds the frame
            runs = list(dict.fromkeys(aggregates["run"]))
            measures = list(dict.fromkeys(aggregates["measure"]))
            order = pd.DataFrame(
                {
                    "evaluation_id": ids,
                    "_r": [runs.index(name) for name in labels["run"]],
                    "_m": [measures.index(name) for name in labels["measure"]],
                }
            )
            raw = wh.duckdb_connection(conn)
            raw.register("_rankhouse_value_labels", order)
            try:
                # integer codes, not hundreds of thousands of query id strings
                joined = (
                    "FROM evaluation_values AS v JOIN _rankhouse_value_labels AS l "
                    "ON l.evaluation_id = v.evaluation_id"
                )
                queries = raw.execute(
                    f"SELECT DISTINCT v.query_id {joined} ORDER BY v.query_id"
                ).fetchnumpy()["query_id"]
                found = raw.execute(
                    "SELECT l._r, l._m, dense_rank() OVER (ORDER BY v.query_id) - 1 AS q, "
                    f"v.value {joined} ORDER BY l._r, q, l._m"
                ).fetchnumpy()
            finally:
                raw.unregister("_rankhouse_value_labels")
            return pd.DataFrame(
                {
                    "run": pd.Categorical.from_codes(found["_r"], categories=runs),
                    "query": pd.Categorical.from_codes(found["q"], categories=queries),
                    "measure": pd.Categorical.from_codes(found["_m"], categories=measures),
                    "value": found["value"],
                }
            )
        else:
            rows = conn.execute(
                sa.text(
                    "SELECT evaluation_id, query_id, value FROM evaluation_values "
                    "WHERE evaluation_id IN :ids"
                ).bindparams(sa.bindparam("ids", expanding=True)),
                {"ids": ids},
            ).all()
            values = pd.DataFrame(rows, columns=["evaluation_id", "query", "value"])
    merged = labels.merge(values, on="evaluation_id", how="inner")
    order = {name: i for i, name in enumerate(dict.fromkeys(aggregates["measure"]))}
    run_order = {name: i for i, name in enumerate(dict.fromkeys(aggregates["run"]))}
    merged["_m"] = merged["measure"].map(order)
    merged["_r"] = merged["run"].map(run_order)
    merged["_q"] = merged["query"].map(lambda q: q.encode("utf-8"))
    merged = merged.sort_values(["_r", "_q", "_m"], kind="stable")
    return merged[columns].reset_index(drop=True)


# --- query bookkeeping ----------------------------------------------------------------------

_QUERY_COUNTS = sa.text(
    """
    WITH run_q AS (SELECT DISTINCT query_id FROM run_rows WHERE run_id = :run_id),
         qrels_q AS (SELECT DISTINCT query_id FROM judgments WHERE qrels_id = :qrels_id)
    SELECT
        (SELECT count(*) FROM qrels_q) AS qrels_queries,
        (SELECT count(*) FROM qrels_q WHERE query_id NOT IN (SELECT query_id FROM run_q))
            AS missing_from_run,
        (SELECT count(*) FROM run_q WHERE query_id NOT IN (SELECT query_id FROM qrels_q))
            AS ignored,
        (SELECT tied_pairs FROM runs WHERE id = :run_id) AS tied_pairs
    """
)


_COUNT_TIES = sa.text(
    """
    SELECT coalesce(sum(n - 1), 0) FROM (
        SELECT count(*) AS n FROM run_rows WHERE run_id = :run_id GROUP BY query_id, score
    ) AS score_groups
    """
)


def query_counts(wh, run_id: int, qrels_id: int, missing_queries: str) -> QueryCounts:
    """How the run's queries and the qrels set's queries met (see :class:`QueryCounts`)."""
    with wh.connect() as conn:
        row = conn.execute(_QUERY_COUNTS, {"run_id": run_id, "qrels_id": qrels_id}).one()
        tied_pairs = row.tied_pairs
        if tied_pairs is None:  # a run stored before migration 0004, or by trec-eval
            tied_pairs = conn.execute(_COUNT_TIES, {"run_id": run_id}).scalar_one()
    evaluated = row.qrels_queries - (row.missing_from_run if missing_queries == "skip" else 0)
    return QueryCounts(
        evaluated=int(evaluated),
        missing_from_run=int(row.missing_from_run),
        ignored=int(row.ignored),
        tied_pairs=int(tied_pairs),
    )
