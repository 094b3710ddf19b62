"""Evaluate runs against a qrels set, store every evaluation, and reuse stored ones.

An evaluation is identified by (run, qrels set and its content hash, canonical measure,
effective relevance level, missing-query policy, other options). Asking again for the same
thing returns the stored per-query values instead of recomputing them, unless ``recompute``.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import Either, InputError, Message, NotFoundError, Option, RankhouseError
from .labels import label

if TYPE_CHECKING:
    import pandas as pd

    from .db import Connection

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
class PerQueryValues:
    """Per-query values as plain columns, ordered by run (request order), query id (byte
    order) and measure (request order)."""

    run: list[str] = field(default_factory=list)
    query: list[str] = field(default_factory=list)
    measure: list[str] = field(default_factory=list)
    value: list[float] = field(default_factory=list)

    def frame(self, runs: list[str], measures: list[str]) -> pd.DataFrame:
        """The long DataFrame ``run, query, measure, value`` (the first three categorical)."""
        import pandas as pd

        queries = sorted(set(self.query), key=lambda q: q.encode("utf-8", "surrogatepass"))
        return pd.DataFrame(
            {
                "run": pd.Categorical(self.run, categories=runs),
                "query": pd.Categorical(self.query, categories=queries),
                "measure": pd.Categorical(self.measure, categories=measures),
                "value": pd.Series(self.value, dtype="float64"),
            }
        )


#: Columns of :attr:`EvaluationResult.aggregates`, in order.
AGGREGATE_COLUMNS = [
    "run",
    "run_id",
    "measure",
    "value",
    "num_q",
    "evaluation_id",
    "reused",
    "label",
]


class EvaluationResult:
    """What :func:`evaluate` returns. DataFrames have fixed columns whatever was asked; they
    are built when first read (the command line prints the plain :attr:`rows`).

    Attributes:
        rows: one dict per run and measure with the :data:`AGGREGATE_COLUMNS` as keys, in
            run then measure request order.
        per_query_values: the per-query values as plain columns; None when the evaluation
            was asked ``with_per_query=False`` (then :attr:`per_query` raises).
        measures: canonical measure names in request order.
        query_counts: per run name, the :class:`QueryCounts`.
        qrels: the name of the qrels set evaluated against.
        labels: per canonical measure name, its label: the name with the settings it was
            computed under (``AP`` with ``relevance_level=2`` is ``AP(rel=2)``; see
            :mod:`rankhouse.labels`). ``aggregates`` has it as column ``label``.
    """

    def __init__(
        self,
        rows: list[dict[str, Any]],
        per_query_values: PerQueryValues | None,
        measures: list[str],
        query_counts: dict[str, QueryCounts] | None = None,
        qrels: str = "",
        labels: dict[str, str] | None = None,
    ) -> None:
        self.rows = rows
        self.per_query_values = per_query_values
        self.measures = measures
        self.query_counts = query_counts or {}
        self.qrels = qrels
        self.labels = labels or {}

    @property
    def runs(self) -> list[str]:
        """Run names in request order."""
        return list(dict.fromkeys(row["run"] for row in self.rows))

    @cached_property
    def per_query(self) -> pd.DataFrame:
        """Long form, columns ``run, query, measure, value`` (the first three categorical),
        ordered by run, query id (byte order) and measure (request order)."""
        return self._loaded_per_query().frame(self.runs, self.measures)

    def _loaded_per_query(self) -> PerQueryValues:
        if self.per_query_values is None:
            raise RankhouseError(
                "this result was evaluated with with_per_query=False: evaluate again "
                "without it for per-query values"
            )
        return self.per_query_values

    @cached_property
    def aggregates(self) -> pd.DataFrame:
        """Columns ``run, run_id, measure, value, num_q, evaluation_id, reused, label``."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=AGGREGATE_COLUMNS)

    @cached_property
    def summary(self) -> pd.DataFrame:
        """Wide form: column ``run``, then one column per measure in request order."""
        import pandas as pd

        values = self.summary_rows()
        return pd.DataFrame(values, columns=["run", *self.measures]).astype(
            {name: "float64" for name in self.measures}
        )

    def summary_rows(self) -> list[list[Any]]:
        """The wide form as plain rows: run name, then one value per measure (None: absent)."""
        found = {(row["run"], row["measure"]): row["value"] for row in self.rows}
        return [
            [run, *(found.get((run, measure)) for measure in self.measures)] for run in self.runs
        ]

    def per_query_rows(self) -> list[list[Any]]:
        """The per-query values wide, as plain rows: run, query, then one value per measure
        (None where a measure has none), in :attr:`per_query`'s order."""
        position = {measure: i for i, measure in enumerate(self.measures)}
        rows: list[list[Any]] = []
        index: dict[tuple[str, str], list[Any]] = {}
        values = self._loaded_per_query()
        for run, query, measure, value in zip(
            values.run, values.query, values.measure, values.value, strict=True
        ):
            row = index.get((run, query))
            if row is None:
                row = index[(run, query)] = [run, query, *([None] * len(self.measures))]
                rows.append(row)
            row[2 + position[measure]] = value
        return rows

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
        return sum(1 for row in self.rows if row["reused"])

    def __repr__(self) -> str:
        return f"EvaluationResult(qrels={self.qrels!r}, runs={self.runs}, measures={self.measures})"


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
    with_per_query: bool = True,
    name: str | None = None,
    meta: dict[str, str] | None = None,
    allow_no_overlap: bool = False,
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
        with_per_query: read the per-query values back into the result (they are stored
            either way; the command line skips reading them unless it prints them).
        name: the name of a run given as a file or DataFrame (as ``ingest_run``'s).
        meta: metadata pairs stored with a run given as a file or DataFrame.
        allow_no_overlap: evaluate a run that has no query in common with the qrels set
            (every value 0) instead of raising InputError. Checked, with a warning when a run
            answers fewer than half of the qrels queries, when values are computed.

    Returns:
        An :class:`EvaluationResult`.

    Raises:
        MeasureError: an unknown measure name.
        NotFoundError: a run or qrels name that is neither stored nor a file.
        InputError: a file that cannot be ingested; qrels and run files given in the wrong
            order; a folder; a run with no query in common with the qrels.
        RankhouseError: a read-only warehouse asked for values it does not hold.
    """
    from .evaluation_checks import check_argument_order, check_overlap, refuse_read_only

    options = dict(sorted((options or {}).items()))
    measure_list, labels = _requested(measures, relevance_level, missing_queries, options)
    check_argument_order(qrels, runs)
    qrels_row, run_rows = _resolve_qrels_and_runs(wh, qrels, runs, name=name, meta=meta)
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
    run_names = {run["id"]: run["name"] for run in run_rows}
    counted: dict[int, QueryCounts] = {}
    if to_compute:
        if wh.read_only:
            refuse_read_only(to_compute, run_names, qrels_row["name"])
        for run_id in dict.fromkeys(k.run_id for k in to_compute):
            counted[run_id] = query_counts(
                wh, run_id, qrels_row["id"], missing_queries, will_compute=True
            )
        by_name = {run_names[run_id]: found for run_id, found in counted.items()}
        check_overlap(by_name, qrels_row["name"], missing_queries, allow=allow_no_overlap)
        _compute_and_store(wh, to_compute, measure_list, relevance_level, missing_queries, options)
        stored.update(_find_stored(wh, to_compute))

    computed = set(to_compute)
    rows = [
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
    ]
    counts = {
        run["name"]: counted.get(run["id"])
        or query_counts(wh, run["id"], qrels_row["id"], missing_queries)
        for run in run_rows
        if with_query_counts
    }
    measure_names = [m.name for m in measure_list]
    per_query = _stored_values(wh, rows) if with_per_query else None
    return EvaluationResult(rows, per_query, measure_names, counts, qrels_row["name"], labels)


def _requested(measures, relevance_level: int, missing_queries: str, options: dict):
    """(the measures to compute, in request order; their labels by canonical name).

    ``AP`` at level 2 and ``AP(rel=2)`` are one computation: the first asked for is kept.
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
    labels = {m.name: label(m, relevance_level, missing_queries, options) for m in measure_list}
    measure_list = list({labels[m.name]: m for m in reversed(measure_list)}.values())[::-1]
    return measure_list, labels


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
    allow_no_overlap: bool = False,
) -> EvaluationResult:
    """Evaluate runs given as data (or files) without a warehouse file: notebooks, quick checks.

    The inputs are read and checked exactly as an ingest checks them, into a bare in-memory
    engine database (no schema, no catalogue, nothing stored), and evaluated by the same SQL.

    Args:
        qrels: qrels in any shape :mod:`rankhouse.ingest.shapes` accepts: a DataFrame (any
            column names ingest recognises, or mapped with ``qrels_columns``), a file path,
            ``{qid: {docid: grade}}``, ir_measures ``Qrel`` tuples.
        run: one run or several in any shape :mod:`rankhouse.ingest.shapes` accepts: a
            DataFrame (several system tags, or PyTerrier's ``name`` column, give several
            runs), a file path, ``{qid: {docid: score}}``, ir_measures ``ScoredDoc`` tuples;
            several as a list, or a dict name -> run (the keys are the run names).
        measures: measure names, as for :func:`evaluate`.
        relevance_level: as for :func:`evaluate`.
        missing_queries: as for :func:`evaluate`.
        order: ``"score"`` ranks by score (trec_eval; a rank column is ignored); ``"rank"``
            takes the run's ranks as the ranking (a run without scores needs it).
        columns: column mapping for the runs, e.g. ``{"qid": "query", "score": "sim"}``.
        qrels_columns: column mapping for the qrels.
        allow_no_overlap: as for :func:`evaluate`.

    Returns:
        An :class:`EvaluationResult` (``evaluation_id`` is empty: nothing is stored).
    """
    from .db import DuckDBConnection
    from .engine import compute, scratch_cursor
    from .evaluation_checks import check_argument_order, check_overlap
    from .ingest.api import load_into_engine
    from .ingest.shapes import qrels_source, run_sources
    from .ingest.sources import parse_columns

    check_argument_order(qrels, run)
    measure_list, labels = _requested(measures, relevance_level, missing_queries, {})
    with scratch_cursor() as duck:
        qrels_data, implied = qrels_source(qrels)
        mapping = {**(implied or {}), **parse_columns(qrels_columns)}
        [qrels_set] = load_into_engine(duck, qrels_data, "qrels", columns=mapping or None)
        runs: list = []
        next_id = 1
        for source in run_sources(run):
            mapping = {**(source.columns or {}), **parse_columns(columns)}
            loaded = load_into_engine(
                duck,
                source.source,
                "run",
                first_id=next_id,
                columns=mapping or None,
                order=order,
                name=source.name,
            )
            next_id += len(loaded)
            for one in loaded:  # the same content twice is one run, as an ingest stores it
                if one.name in {r.name for r in runs}:
                    duck.execute("DELETE FROM run_rows WHERE run_id = ?", [one.id])
                else:
                    runs.append(one)
        counts = {
            r.name: _query_counts(
                tuple(
                    DuckDBConnection(duck)
                    .execute(_QUERY_COUNTS_SQL, {"run_id": r.id, "qrels_id": qrels_set.id})
                    .one()
                ),
                r.tied_pairs,
                missing_queries,
            )
            for r in runs
        }
        check_overlap(counts, qrels_set.name, missing_queries, allow=allow_no_overlap)
        values = compute(
            duck,
            [r.id for r in runs],
            qrels_set.id,
            measure_list,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
        )
        names = {r.id: r.name for r in runs}
        rows = [
            {
                "run": names[a.run_id],
                "run_id": a.run_id,
                "measure": a.measure.name,
                "value": a.value,
                "num_q": a.num_q,
                "evaluation_id": None,
                "reused": False,
                "label": labels[a.measure.name],
            }
            for a in values.aggregates()
        ]
        per_query = _engine_values(duck, [r.id for r in runs], names, values.measures)
    measure_names = [m.name for m in measure_list]
    return EvaluationResult(rows, per_query, measure_names, counts, qrels_set.name, labels)


def ingest_qrels_shape(wh, qrels: Any, *, columns: str | dict[str, str] | None = None) -> int:
    """Ingest qrels given in any shape of :mod:`rankhouse.ingest.shapes`; the qrels set's id."""
    from .ingest.shapes import qrels_source
    from .ingest.sources import parse_columns

    source, implied = qrels_source(qrels)
    return wh.ingest_qrels(source, columns={**(implied or {}), **parse_columns(columns)}).id


def ingest_run_shapes(
    wh,
    runs: Any,
    *,
    columns: str | dict[str, str] | None = None,
    order: str = "score",
    name: str | None = None,
    meta: dict[str, str] | None = None,
    new_version: bool = False,
) -> list[int]:
    """Ingest runs given as data or files (any shape of :mod:`rankhouse.ingest.shapes`); the
    stored runs' ids in order. Stored names and ids are not accepted here."""
    from .ingest.shapes import run_sources

    return _ingest_sources(
        wh,
        run_sources(runs),
        columns=columns,
        order=order,
        name=name,
        meta=meta,
        new_version=new_version,
    )


def _ingest_sources(
    wh,
    sources,
    *,
    columns: str | dict[str, str] | None = None,
    order: str = "score",
    name: str | None = None,
    meta: dict[str, str] | None = None,
    new_version: bool = False,
) -> list[int]:
    from .ingest.sources import parse_columns

    ids: list[int] = []
    for source in sources:
        mapping = {**(source.columns or {}), **parse_columns(columns)}
        results = wh.ingest_run(
            source.source,
            name=source.name if source.name is not None else name,
            columns=mapping or None,
            order=order,
            meta=meta,
            new_version=new_version,
        )
        ids.extend(result.id for result in results)
    return list(dict.fromkeys(ids))


# --- resolving names, ids, files and frames -------------------------------------------------


def _resolve_qrels_and_runs(wh, qrels: Any, runs: Any, *, name, meta):
    """:func:`resolve_qrels`, then :func:`resolve_runs`, as the caller sees it.

    A qrels file (up to the size that gets a progress bar) given with run files is ingested on
    a connection of its own, in a thread, while the runs are ingested: the two files are read
    side by side. What the caller sees is what the two calls one after the other give: an
    error of the qrels is raised rather than a run's, and no run is committed before the qrels
    are (each run's commit waits for them; their error rolls it back).
    """
    if not _qrels_beside_runs(wh, qrels, runs):
        return resolve_qrels(wh, qrels), resolve_runs(wh, runs, name=name, meta=meta)
    import copy

    from .background import Background

    side = copy.copy(wh)
    side.db = wh.db.beside()

    def ingest_qrels() -> dict[str, Any]:
        try:
            return resolve_qrels(side, qrels)
        finally:
            side.db.close()

    reading = Background(ingest_qrels, "rankhouse-qrels")
    wh.db.before_commit = reading.result
    try:
        run_rows = resolve_runs(wh, runs, name=name, meta=meta)
    except BaseException:
        reading.result()  # the qrels' error first, as it would have come first
        raise
    finally:
        wh.db.before_commit = None
    return reading.result(), run_rows


def _qrels_beside_runs(wh, qrels: Any, runs: Any) -> bool:
    """Whether :func:`_resolve_qrels_and_runs` ingests the qrels file in a thread: a DuckDB
    warehouse that may be written, a qrels file too small for a progress bar (one bar at a
    time), and at least one run file to read meanwhile."""
    from .ingest.progress import BIG_FILE_BYTES

    if wh.dialect != "duckdb" or wh.read_only or not _is_existing_file(qrels):
        return False
    if os.path.getsize(qrels) > BIG_FILE_BYTES:
        return False
    given = runs if isinstance(runs, (list, tuple)) else [runs]
    return any(isinstance(run, (str, os.PathLike)) and _is_existing_file(run) for run in given)


def resolve_qrels(wh, qrels: Any) -> dict[str, Any]:
    """The catalogue row of a qrels set given by name, id, file path or data (a DataFrame,
    ``{qid: {docid: grade}}``, ir_measures ``Qrel`` tuples)."""
    from .evaluation_checks import not_found, stored_files

    if not isinstance(qrels, (str, int, os.PathLike)) or _is_existing_file(qrels):
        if wh.read_only and _is_existing_file(qrels):
            return wh.qrels(stored_files(wh, [qrels], "qrels")[0])
        return wh.qrels(ingest_qrels_shape(wh, qrels))
    try:
        return wh.qrels(qrels)
    except NotFoundError as exc:
        raise not_found(wh, qrels, "qrels", exc) from None


def resolve_runs(
    wh, runs: Any, *, name: str | None = None, meta: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Catalogue rows of runs given by names, ids, file paths or data (in order).

    Data is any shape of :mod:`rankhouse.ingest.shapes` (a DataFrame, ``{qid: {docid:
    score}}``, ir_measures ``ScoredDoc`` tuples; several in a list, or a dict name -> run
    whose keys name them). A file or data is ingested (deduplicated by content). When its name
    is held by other content (a run file regenerated under the same tag), it is stored as the
    next version of that name, ``<name>@2``, ``<name>@3``..., with the same system tag.

    Args:
        wh: the warehouse.
        runs: one run or several.
        name: the stored name of the one file or DataFrame among ``runs``.
        meta: metadata pairs stored with the runs ingested from files or data.

    Raises:
        InputError: ``name`` or ``meta`` given without a run file, or ``name`` for several.
    """
    from .ingest.shapes import run_sources

    sources = run_sources(runs)
    ingested = [s for s in sources if s.is_frame or _is_existing_file(s.source)]
    from .evaluation_checks import not_found, stored_files

    if (name is not None or meta) and not ingested:
        raise InputError(
            Message(
                Option("name"),
                " and ",
                Option("meta"),
                " apply to a run given as a file; the runs given are stored ones",
            ),
            hint=Either(
                "set them with Warehouse.ingest_run(FILE, name=..., meta=...)",
                "set them with 'rankhouse ingest run FILE --name ... --meta ...'",
            ),
        )
    if name is not None and len(ingested) > 1:
        raise InputError(
            Message(Option("name"), f" names one run file, but {len(ingested)} were given"),
            hint="evaluate them one by one, or ingest them with their names first",
        )
    rows: list[dict[str, Any]] = []
    for source in sources:
        if wh.read_only and _is_existing_file(source.source):  # serve it, ingest nothing
            rows.extend(wh.run(run_id) for run_id in stored_files(wh, [source.source], "run"))
            continue
        if source.is_frame or _is_existing_file(source.source):
            ids = _ingest_sources(wh, [source], name=name, meta=meta, new_version=True)
            rows.extend(wh.run(run_id) for run_id in ids)
            continue
        try:
            rows.append(wh.run(source.source))
        except NotFoundError as exc:
            raise not_found(wh, source.source, "run", exc) from None
    unique = {row["id"]: row for row in rows}
    return list(unique.values())


def _is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (without importing pandas to ask)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


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


_FIND_STORED = """
    SELECT id, run_id, measure, relevance_level, value, num_q
    FROM evaluations
    WHERE qrels_id = :qrels_id AND qrels_sha256 = :qrels_sha256
      AND missing_queries = :missing_queries AND options = :options
      AND run_id = ANY(:run_ids) AND measure = ANY(:measures)
    ORDER BY id
    """


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
) -> None:
    """One engine pass for every run and measure not stored yet, then one transaction."""
    from . import __version__
    from .engine import compute
    from .storage import engine_connection, lock_evaluations, store_values

    by_name = {m.name: m for m in measures}
    run_ids = sorted({k.run_id for k in keys})
    wanted = [by_name[name] for name in dict.fromkeys(k.measure for k in keys)]
    qrels_id = keys[0].qrels_id
    with engine_connection(wh, run_ids, qrels_id) as duck:
        values = compute(
            duck,
            run_ids,
            qrels_id,
            wanted,
            relevance_level=relevance_level,
            missing_queries=missing_queries,
            **options,
        )
    # the values stay in the engine's temporary table on `duck` after the block
    totals = {(a.run_id, a.measure.name): a for a in values.aggregates()}
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
            }
        )
    index = {m.name: i for i, m in enumerate(values.measures)}
    with wh.transaction() as conn:
        lock_evaluations(wh, conn, {(k.run_id, k.qrels_id) for k in keys})
        _delete_stored(conn, keys)
        ids = {
            (run_id, index[measure]): evaluation_id
            for evaluation_id, run_id, measure in _insert_evaluations(conn, evaluations)
        }
        store_values(wh, conn, duck, ids)


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
}
#: Rows of one INSERT (14 binds a row: PostgreSQL takes at most 65,535 binds a statement).
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


def _delete_stored(conn: Connection, keys: Sequence[_EvaluationKey]) -> None:
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


def _engine_values(duck, run_ids: list[int], names: dict[int, str], measures) -> PerQueryValues:
    """The engine's values (``rh_values`` on ``duck``) in result order."""
    from .engine import VALUES_TABLE

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


def _stored_values(wh, rows: list[dict[str, Any]]) -> PerQueryValues:
    """The stored per-query values of the evaluations in ``rows``, in result order."""
    values = PerQueryValues()
    if not rows:
        return values
    runs = list(dict.fromkeys(row["run"] for row in rows))
    measures = list(dict.fromkeys(row["measure"] for row in rows))
    with wh.connect() as conn:
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


# --- query bookkeeping ----------------------------------------------------------------------

_QUERY_COUNTS_SQL = """
    WITH run_q AS (SELECT DISTINCT query_id FROM run_rows WHERE run_id = :run_id),
         qrels_q AS (SELECT DISTINCT query_id FROM judgments WHERE qrels_id = :qrels_id)
    SELECT
        (SELECT count(*) FROM qrels_q) AS qrels_queries,
        (SELECT count(*) FROM qrels_q WHERE query_id NOT IN (SELECT query_id FROM run_q))
            AS missing_from_run,
        (SELECT count(*) FROM run_q WHERE query_id NOT IN (SELECT query_id FROM qrels_q))
            AS ignored
    """


_COUNT_TIES = """
    SELECT coalesce(sum(n - 1), 0) FROM (
        SELECT count(*) AS n FROM run_rows WHERE run_id = :run_id GROUP BY query_id, score
    ) AS score_groups
    """


def query_counts(
    wh, run_id: int, qrels_id: int, missing_queries: str, *, will_compute: bool = False
) -> QueryCounts:
    """How the run's queries and the qrels set's queries met (see :class:`QueryCounts`);
    ``will_compute``: the rows are about to be evaluated (a server's are counted locally)."""
    from .storage import rows_connection

    with rows_connection(wh, [run_id], qrels_id, load=will_compute) as conn:
        found = conn.execute(_QUERY_COUNTS_SQL, {"run_id": run_id, "qrels_id": qrels_id}).one()
    with wh.connect() as conn:
        tied_pairs = conn.execute(
            "SELECT tied_pairs FROM runs WHERE id = :run_id", {"run_id": run_id}
        ).scalar()
        if tied_pairs is None:  # a run stored before migration 0004, or by trec-eval
            tied_pairs = conn.execute(_COUNT_TIES, {"run_id": run_id}).scalar_one()
    return _query_counts(tuple(found), tied_pairs, missing_queries)


def _query_counts(found: tuple, tied_pairs: int, missing_queries: str) -> QueryCounts:
    qrels_queries, missing_from_run, ignored = found
    evaluated = qrels_queries - (missing_from_run if missing_queries == "skip" else 0)
    return QueryCounts(
        evaluated=int(evaluated),
        missing_from_run=int(missing_from_run),
        ignored=int(ignored),
        tied_pairs=int(tied_pairs),
    )
