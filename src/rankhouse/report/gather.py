"""What a report shows, read from the warehouse: no HTML and no plotting here.

Per qrels set: the runs and their metadata, the means and paired tests of ``compare``, the
per-query pairs of every run with the baseline, each system's series of runs with the
verdicts of ``regress``, and the interpolated precision at the 11 standard recall points.
Evaluations come from storage; what is missing (typically the precision-recall points) is
computed and stored by :func:`rankhouse.evaluation.evaluate`, as ``compare`` does.

**What grows with the runs.** The runs are selected in one statement (the systems, the
qrels set and ``last`` are its conditions); the trends cover every selected run (history's
means and intervals and the gate's verdicts of those runs only, read in a few set-based
statements, whatever the warehouse holds besides). The sections drawn per run (the runs table,
compare's panels, order drift, per-query pictures, precision-recall curves) cover the
*compared runs* only: the baseline and the newest runs, :data:`MAX_COMPARED` in all (with
``brief``, the baseline and the newest run), so that a report of a year of nights costs
about what a report of ten does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..backends.base import store_of
from ..catalog import get_qrels, removed_on_failure
from ..columns import HIDDEN_METADATA
from ..compare import comparison
from ..compare.comparing import settings_shown
from ..defaults import __version__
from ..errors import MeasureError, NotFoundError, RankhouseError
from ..evaluation import evaluate, resolve_qrels, resolve_runs
from ..labels import requested_labels
from ..lazy import pandas as pd
from ..measures import measure_texts, parse_measures
from ..pairing import paired_frames
from ..stats import check_alpha, check_correction, check_test
from .trends import RunInfo, Trend, clipped_means, clipped_row, trends

RECALL_POINTS = tuple(i / 10 for i in range(11))
IPREC_MEASURES = tuple(f"IPrec@{r:.1f}" for r in RECALL_POINTS)
"""The 11 points of trec_eval's ``iprec_at_recall``: the precision-recall section."""

DEFAULT_MAX_MEASURES = 8
"""Without ``measures``, at most this many stored measures (the first stored) are shown."""

MAX_COMPARED = 10
"""The most runs the per-run sections cover: the baseline and the newest others; the trends
cover them all."""


@dataclass
class QrelsSection:
    """Everything the report shows about one qrels set."""

    qrels: dict[str, Any]
    runs: list[RunInfo]
    measures: list[str]
    comparison: pd.DataFrame
    baseline: str | None
    pairs: dict[str, dict[str, pd.DataFrame]]
    """run name -> measure -> ``query_id, run_value, baseline_value`` (compare's pairs)."""
    trends: list[Trend]
    precision_recall: pd.DataFrame
    """Columns ``run, recall, precision``: mean interpolated precision per recall point."""
    notes: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    """compare's rows (:attr:`rankhouse.compare.Comparison.rows`): the comparison panels."""
    settings: dict[str, Any] = field(default_factory=dict)
    """compare's settings as its tables show them (level, interval, test, correction...)."""
    drift: list[dict[str, Any]] = field(default_factory=list)
    """Each run's order drift from the baseline (compare's ``drift`` rows; stored)."""
    selected: int = 0
    """How many runs the report selected (the trends'); ``runs`` are those compared."""
    holes: list[str] = field(default_factory=list)
    """compare's warnings of holes in the judgments
    (:attr:`rankhouse.compare.comparing.Comparison.holes_warnings`)."""


@dataclass
class ReportData:
    """A whole report: the settings it was made with and one section per qrels set."""

    sections: list[QrelsSection]
    settings: dict[str, Any]
    version: str
    created_at: datetime


def gather(
    wh,
    *,
    qrels: Any = None,
    runs: Sequence[Any] | None = None,
    systems: Sequence[str] | None = None,
    measures: Sequence[Any] | None = None,
    baseline: Any = None,
    test: str = "t",
    correction: str = "none",
    alpha: float = 0.05,
    relevance_level: int = 1,
    max_measures: int = DEFAULT_MAX_MEASURES,
    last: int | None = None,
    brief: bool = False,
    margin: Any = None,
) -> ReportData:
    """Collect a report's data; see :func:`rankhouse.report.report.write_report` for the
    arguments.

    ``last`` keeps the newest ``last`` runs of each system (the baseline and named runs
    stay); ``brief`` compares only the newest run with the baseline (the trends still cover
    every selected run); ``margin`` (as compare takes it) gives the comparison its practical
    margin and the gate's word at that margin.

    Raises:
        RankhouseError: nothing to report (no stored evaluation matches), or bad options.
        NotFoundError: a named run, system or qrels set that is not stored.
    """
    store = store_of(wh)
    check_test(test)
    check_correction(correction)
    check_alpha(alpha)
    if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 1):
        raise RankhouseError(f"last must be a whole number of runs, 1 or more, not {last!r}")
    # a report that fails removes the files it ingested: it leaves the warehouse as it found it
    with removed_on_failure(store) as ingested:
        named_runs = resolve_runs(store, list(runs), ingested=ingested) if runs else []
        baseline_row = (
            resolve_runs(store, [baseline], ingested=ingested)[0] if baseline is not None else None
        )
        if qrels is not None:
            qrels_rows = [resolve_qrels(store, qrels, ingested=ingested)]
        else:
            qrels_rows = [get_qrels(store, int(i)) for i in _evaluated_qrels(store)]
        if systems:
            _check_systems(store, systems)
        sections = []
        for qrels_row in qrels_rows:
            section = _section(
                store,
                qrels_row,
                named_runs=named_runs,
                systems=list(systems or []),
                measures=measures,
                baseline_row=baseline_row,
                test=test,
                correction=correction,
                alpha=alpha,
                relevance_level=relevance_level,
                max_measures=max_measures,
                explicit=qrels is not None or bool(named_runs),
                last=last,
                brief=brief,
                margin=margin,
            )
            if section is not None:
                sections.append(section)
        if not sections:
            raise RankhouseError(
                "nothing to report: no stored evaluation matches; evaluate runs first "
                "(rankhouse eval QRELS RUN -m MEASURE) or name them with --qrels and --run"
            )
        settings = {
            "baseline": baseline_row["name"] if baseline_row else None,
            "test": test,
            "correction": correction,
            "alpha": alpha,
            "relevance_level": relevance_level,
            "last": last,
            "brief": brief,
            "margin": margin,
        }
        return ReportData(sections, settings, __version__, datetime.now(UTC).replace(microsecond=0))


def _evaluated_qrels(store) -> list[int]:
    with store.connect() as conn:
        rows = conn.execute("SELECT DISTINCT qrels_id FROM evaluations ORDER BY 1")
        return [int(r[0]) for r in rows]


def _check_systems(store, systems: Iterable[str]) -> None:
    with store.connect() as conn:
        known = {r[0] for r in conn.execute("SELECT DISTINCT system_tag FROM runs")}
    unknown = [s for s in systems if s not in known]
    if unknown:
        raise NotFoundError(
            f"no stored run has the system tag {unknown[0]!r}; rankhouse runs list shows the tags"
        )


def _section(
    store,
    qrels_row: dict[str, Any],
    *,
    named_runs: list[dict[str, Any]],
    systems: list[str],
    measures: Sequence[Any] | None,
    baseline_row: dict[str, Any] | None,
    test: str,
    correction: str,
    alpha: float,
    relevance_level: int,
    max_measures: int,
    explicit: bool,
    last: int | None = None,
    brief: bool = False,
    margin: Any = None,
) -> QrelsSection | None:
    qrels_id = int(qrels_row["id"])
    run_rows = _select_runs(store, qrels_id, named_runs, systems, last)
    if baseline_row is not None and baseline_row["id"] not in {r["id"] for r in run_rows}:
        run_rows = [baseline_row, *run_rows]
    if not run_rows:
        return None
    notes: list[str] = []
    names = _measures(store, qrels_id, run_rows, measures, max_measures, notes)
    selected = run_rows
    run_rows = compared_runs(selected, baseline_row, brief)
    if len(run_rows) < len(selected):
        notes.append(
            f"{len(selected)} runs are selected: the trends show them all; the runs table, "
            f"the comparison, the per-query pictures and the precision-recall curves show "
            + (
                "the newest run"
                if brief
                else f"the newest {len(run_rows) - (baseline_row is not None)} runs"
            )
            + (" and the baseline" if baseline_row is not None else "")
            + (" (--brief)" if brief else f" (at most {MAX_COMPARED} runs)")
        )
    if not names:
        if explicit:
            raise RankhouseError(
                f"no measure to report for qrels {qrels_row['name']!r}; name them with -m"
            )
        return None
    run_ids = [int(r["id"]) for r in run_rows]
    # shown as labels, as compare shows them: AP at level 2 is AP(rel=2)
    shown = list(dict.fromkeys(requested_labels([n], relevance_level)[0] for n in names))
    options = {"relevance_level": relevance_level}
    found = comparison(
        store,
        qrels=qrels_id,
        runs=run_ids,
        measures=names,
        baseline=run_ids.index(int(baseline_row["id"])) if baseline_row else None,
        test=test,
        correction=correction,
        alpha=alpha,
        drift=baseline_row is not None,
        margin=margin,
        **options,
    )
    comparison_frame = clipped_means(found.means)
    pairs: dict[str, dict[str, pd.DataFrame]] = {}
    if found.baseline is not None:
        by_measure = {m: paired_frames(found.values, found.baseline, m) for m in shown}
        for row in run_rows:
            if row["name"] != found.baseline:
                pairs[row["name"]] = {m: by_measure[m][row["name"]] for m in shown}
    infos = [_run_info(r) for r in run_rows]
    level = float(getattr(found.options, "level", 0.95) or 0.95)
    curves = evaluate(
        store,
        qrels=qrels_id,
        runs=run_ids,
        measures=IPREC_MEASURES,
        with_query_counts=False,
        allow_no_overlap=True,  # the runs were checked when they were evaluated
        asked_for=False,  # the curves' points: history shows them on request only
        **options,
    )
    precision_recall = pd.DataFrame(
        {
            "run": curves.aggregates["run"],
            "recall": [float(m.split("@", 1)[1]) for m in curves.aggregates["measure"]],
            "precision": curves.aggregates["value"].astype(float),
        }
    )
    return QrelsSection(
        qrels=qrels_row,
        runs=infos,
        measures=shown,
        comparison=comparison_frame,
        baseline=found.baseline,
        pairs=pairs,
        trends=trends(
            store,
            qrels_id,
            [_run_info(r) for r in selected],
            shown,
            relevance_level=relevance_level,
            level=level,
        ),
        precision_recall=precision_recall,
        notes=notes,
        rows=[clipped_row(row) for row in found.rows],
        settings=settings_shown(found),
        drift=found.drift,
        selected=len(selected),
        holes=found.holes_warnings,
    )


def compared_runs(
    runs: list[dict[str, Any]], baseline_row: dict[str, Any] | None, brief: bool
) -> list[dict[str, Any]]:
    """The runs the per-run sections cover, in ``runs``' order: the baseline and the newest
    others, :data:`MAX_COMPARED` in all; with ``brief`` the baseline and the newest run."""
    base = None if baseline_row is None else int(baseline_row["id"])
    others = [r for r in runs if int(r["id"]) != base]
    room = 1 if brief else MAX_COMPARED - (base is not None)
    kept = {int(r["id"]) for r in others[-room:]} | ({base} if base is not None else set())
    return [r for r in runs if int(r["id"]) in kept]


#: The runs evaluated against a qrels set, of the chosen systems (all when :all_systems), in
#: ingest order; with :last below the number of runs, the newest :last of each system. One
#: statement, however many runs and systems the warehouse holds.
_EVALUATED_RUNS = """
    SELECT ranked.id, ranked.name, ranked.system_tag, ranked.num_queries, ranked.num_rows,
           ranked.ingested_at, ranked.metadata
    FROM (
        SELECT r.id, r.name, r.system_tag, r.num_queries, r.num_rows, r.ingested_at,
               r.metadata,
               row_number() OVER (
                   PARTITION BY r.system_tag ORDER BY r.ingested_at DESC, r.id DESC
               ) AS recency
        FROM runs r
        WHERE (:all_systems OR r.system_tag = ANY(:systems))
          AND r.id IN (SELECT e.run_id FROM evaluations e WHERE e.qrels_id = :qrels_id)
    ) ranked
    WHERE ranked.recency <= :last
    ORDER BY ranked.ingested_at, ranked.id
    """


def _select_runs(
    store, qrels_id: int, named: list[dict], systems: list[str], last: int | None = None
) -> list[dict]:
    """The named runs, and the runs of ``systems`` (all systems when nothing is named) that
    have an evaluation against the qrels set, in ingest order (one statement, however many);
    with ``last``, the newest ``last`` of each system (named runs stay)."""
    chosen = {int(r["id"]): r for r in named}
    if systems or not named:
        params = {
            "qrels_id": qrels_id,
            "all_systems": not systems,
            "systems": list(systems) or [""],
            "last": last if last is not None else 2**31 - 1,
        }
        with store.connect() as conn:
            found = conn.execute(_EVALUATED_RUNS, params).mappings().all()
        for row in found:
            chosen.setdefault(int(row["id"]), dict(row))
    return sorted(chosen.values(), key=lambda r: (r["ingested_at"], r["id"]))


_STORED_MEASURES = """
    SELECT measure, min(id) AS first
    FROM evaluations
    WHERE qrels_id = :qrels_id AND run_id = ANY(:run_ids) AND options = '{}'
    GROUP BY measure
    ORDER BY first
    """


def _measures(
    store,
    qrels_id: int,
    run_rows: list[dict],
    measures: Sequence[Any] | None,
    max_measures: int,
    notes: list[str],
) -> list[str]:
    """The requested measures (canonical names), else the stored ones in the order they
    were first stored, without the precision-recall points the report stores itself."""
    if measures:
        return list(dict.fromkeys(m.name for m in parse_measures(measure_texts(measures))))
    with store.connect() as conn:
        found = conn.execute(
            _STORED_MEASURES,
            {"qrels_id": qrels_id, "run_ids": [int(r["id"]) for r in run_rows]},
        )
        stored = [r[0] for r in found if r[0] not in IPREC_MEASURES]
    for name in list(stored):
        try:  # an older release stored measures whose parameters are refused now
            parse_measures([name])
        except MeasureError as exc:
            stored.remove(name)
            notes.append(f"{name} is stored but left out: {exc}")
    if len(stored) > max_measures:
        notes.append(
            f"{len(stored)} measures are stored; the first {max_measures} stored are shown "
            "(-m picks others)"
        )
    return stored[:max_measures]


def _run_info(row: dict[str, Any]) -> RunInfo:
    metadata = row.get("metadata") or {}
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except ValueError:
            metadata = {}
    if not isinstance(metadata, dict):
        metadata = {}
    shown = {
        k: v for k, v in metadata.items() if k not in HIDDEN_METADATA and not isinstance(v, dict)
    }
    return RunInfo(
        id=int(row["id"]),
        name=str(row["name"]),
        system=str(row["system_tag"]),
        ingested_at=row["ingested_at"],
        num_queries=int(row.get("num_queries") or 0),
        metadata=shown,
    )
