"""Holes in the judgments (issue 38 item 5): is a run's top k much less judged than its
baseline's, and what do the two say on their judged documents alone?

An unjudged document counts as non-relevant, so a run that retrieves relevant documents nobody
judged looks worse than it is. The rule, for each measure (k its cutoff, 10 without one):

* both runs' **mean Judged@k** (the measure ``Judged@k``: per query, the share of the top
  min(k, n) documents with a qrels line, any grade, over the queries the run answered that the
  qrels judge; trec_eval's order);
* **holes** when the run's mean is below the baseline's by more than ``max_judged_drop``
  (:data:`rankhouse.defaults.MAX_JUDGED_DROP`);
* then both runs' **condensed** value: the measure on the rankings without their unjudged
  documents, renumbered (trec_eval ``-J``; Sakai's condensed lists), computed in the engine and
  not stored;
* **unsettled** (the gate, :mod:`rankhouse.regress.gate`; :func:`within_margin`) when there
  are holes and the run's condensed value lies below the baseline's by no more than the
  measure's margin (the one the gate held the measure to): the judged documents alone show no
  drop the gate would fail, so the drop may be the holes, not the run.

The gate reads :func:`holes_rows`; ``compare`` and the report (each run against the baseline)
and ``eval`` of several runs (each against the first) read :func:`compared_holes` and warn
(:func:`holes_warnings`) without changing a verdict. ``compare`` over a subset of the queries
(``--queries``) applies the rule to the subset: both means and both condensed values over its
queries alone.

Each evaluation computed at schema 20 or later stores the judged shares of its run's top k per
query (``evaluation_judged``, written in the engine pass and the transaction that store the
evaluation): :func:`judged_means` reads them, and computes only what older evaluations lack.
The rest is computed by the engine (:func:`rankhouse.engine.compute`) on the connection where
the store keeps the rows: a DuckDB file's own, a server's workspace.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from typing import Any

from ..columns import Rows
from ..engine import compute, judged_cutoff
from ..measures import parse_measures
from ..measures.model import direction


def evaluated_qrels(store, result) -> int:
    """The id of the qrels set an :class:`~rankhouse.results.EvaluationResult` was made on
    (its rows name the stored evaluations)."""
    with store.connect() as conn:
        return conn.execute(
            "SELECT qrels_id FROM evaluations WHERE id = :id",
            {"id": int(result.rows[0]["evaluation_id"])},
        ).scalar_one()


def judged_means(
    store, qrels_id: int, run_ids: list[int], cutoffs, queries: Collection[str] | None = None
) -> dict[tuple[int, int], float]:
    """Each run's mean Judged@k for each k of ``cutoffs``: ``{(k, run_id): mean}`` (0.0 for
    a run that answers none of the judged queries): read from the shares stored with an
    evaluation of the run on the qrels set (``evaluation_judged``, migration 0020), computed
    in the engine for the runs and cutoffs that have none (evaluations stored before it).
    With ``queries`` (query ids), the mean over those of the queries only."""
    found = stored_judged_means(store, qrels_id, run_ids, cutoffs, queries)
    missing = [(k, run_id) for k in set(cutoffs) for run_id in run_ids if (k, run_id) not in found]
    if missing:
        ks, ids = sorted({k for k, _ in missing}), sorted({run_id for _, run_id in missing})
        found = computed_judged_means(store, qrels_id, ids, ks, queries) | found
    return {(k, run_id): found[k, run_id] for k in sorted(set(cutoffs)) for run_id in run_ids}


def stored_judged_means(
    store, qrels_id: int, run_ids: list[int], cutoffs, queries: Collection[str] | None = None
) -> dict[tuple[int, int], float]:
    """The mean Judged@k of each run and k that an evaluation on the qrels set stored shares
    for (the latest such evaluation): ``{(k, run_id): mean}``, added in query-id byte order
    from 0.0 as the engine's mean is (:meth:`rankhouse.engine.Values.aggregates`), so a
    stored mean is the computed one to the last bit. With ``queries``, the shares of those
    queries only (0.0 where the run answered none of them: its shares are stored all the
    same)."""
    with store.connect() as conn:
        rows = conn.execute(_STORED_SHARES, {
            "qrels": int(qrels_id), "runs": [int(r) for r in run_ids],
            "ks": sorted({int(k) for k in cutoffs}),
        }).all()  # fmt: skip
    wanted = None if queries is None else {str(query) for query in queries}
    shares: dict[tuple[int, int], list[tuple[str, float]]] = {}
    for run_id, k, query_id, judged in rows:
        kept = shares.setdefault((k, run_id), [])
        if wanted is None or query_id in wanted:
            kept.append((query_id, judged))
    return {key: _in_query_order(found) if found else 0.0 for key, found in shares.items()}


#: The shares of the latest evaluation of each run (of :runs) and k (of :ks) on :qrels.
_STORED_SHARES = """
SELECT l.run_id, l.k, j.query_id, j.judged
FROM evaluation_judged AS j
JOIN (SELECT e.run_id, s.k, max(s.evaluation_id) AS id
      FROM evaluation_judged AS s JOIN evaluations AS e ON e.id = s.evaluation_id
      WHERE e.qrels_id = :qrels AND e.run_id = ANY(:runs) AND s.k = ANY(:ks)
      GROUP BY e.run_id, s.k) AS l
  ON j.evaluation_id = l.id AND j.k = l.k
"""


def computed_judged_means(
    store, qrels_id: int, run_ids: list[int], cutoffs, queries: Collection[str] | None = None
) -> dict[tuple[int, int], float]:
    """:func:`judged_means` computed in the engine: the measure ``Judged@k`` over the
    queries each run answers that the qrels judge (of ``queries``, with them)."""
    ks = sorted(set(cutoffs))
    measures = parse_measures([f"Judged@{k}" for k in ks])
    with store.engine_connection(run_ids, qrels_id) as duck:
        values = compute(duck, run_ids, qrels_id, measures, missing_queries="skip")
        found = {(a.measure.name, a.run_id): a.value for a in values.aggregates(queries)}
    return {
        (k, run_id): found.get((measure.name, run_id), 0.0)
        for k, measure in zip(ks, measures, strict=True)
        for run_id in run_ids
    }


def condensed_means(
    store, qrels_id: int, run_ids: list[int], texts: list[str], scoring: dict[str, Any],
    queries: Collection[str] | None = None,
) -> dict[tuple[str, int], float]:  # fmt: skip
    """Each run's condensed (judged-only, trec_eval ``-J``) mean of each measure text under
    ``scoring`` (relevance level, missing queries): ``{(text, run_id): mean}``; with
    ``queries``, over those of the evaluated queries only."""
    measures = parse_measures(texts)
    with store.engine_connection(run_ids, qrels_id) as duck:
        values = compute(duck, run_ids, qrels_id, measures, judged_only=True, **scoring)
        found = {(a.measure.name, a.run_id): a.value for a in values.aggregates(queries)}
    return {
        (text, run_id): found.get((measure.name, run_id), math.nan)
        for text, measure in zip(texts, measures, strict=True)
        for run_id in run_ids
    }


def compared_holes(
    store, qrels_id: int, runs: dict[int, str], baseline_id: int, measures: dict[str, str],
    scoring: dict[str, Any], max_drop: float, queries: Collection[str] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """The holes rule for each run of ``runs`` (id -> name shown) against the baseline, for
    each measure of ``measures`` (text -> label): one row per run other than the baseline and
    measure, ``run, baseline, measure, k, run_judged, baseline_judged, holes, run_condensed,
    baseline_condensed``; the condensed values only for the measures where some run has holes
    (NaN elsewhere: a comparison without holes computes nothing more). With ``queries`` (a
    subset of the query ids: ``compare --queries``), the means Judged@k and the condensed
    values are those of the subset's queries, the threshold the same. A read-only warehouse
    checks too: the shares are read, and what is computed (the condensed values, the shares of
    evaluations stored before schema 20) stays in the engine's own tables."""
    ids = list(dict.fromkeys([*runs, baseline_id]))
    others = [run_id for run_id in runs if run_id != baseline_id] or [baseline_id]
    cutoff = {text: judged_cutoff(label) for text, label in measures.items()}
    shares = judged_means(store, qrels_id, ids, cutoff.values(), queries)
    rows = []
    for run_id in others:
        for text, label in measures.items():
            ours, theirs = shares[cutoff[text], run_id], shares[cutoff[text], baseline_id]
            rows.append(dict(run=runs.get(run_id), baseline=runs.get(baseline_id), text=text))
            rows[-1].update(measure=label, k=cutoff[text], run_judged=ours, baseline_judged=theirs)
            rows[-1].update(holes=theirs - ours > max_drop, run_id=run_id)
    holed = list(dict.fromkeys(row["text"] for row in rows if row["holes"]))
    condensed = condensed_means(store, qrels_id, ids, holed, scoring, queries) if holed else {}
    for row in rows:
        row["run_condensed"] = condensed.get((row["text"], row["run_id"]), math.nan)
        row["baseline_condensed"] = condensed.get((row["text"], baseline_id), math.nan)
    return rows


def evaluation_holes(store, result, scoring: dict[str, Any], max_drop: float) -> list[str]:
    """``eval``'s warnings for several runs: each run against the first
    (:func:`compared_holes` on an :class:`~rankhouse.results.EvaluationResult`, ``scoring``
    its relevance level and missing queries); none for a single run."""
    runs = {int(row["run_id"]): row["run"] for row in result.rows}
    if len(runs) < 2:
        return []
    measures = {name: result.labels.get(name, name) for name in result.measures}
    first = next(iter(runs))
    qrels_id = evaluated_qrels(store, result)
    rows = compared_holes(store, qrels_id, runs, first, measures, scoring, max_drop)
    return holes_warnings(rows, max_drop, against="first run")


def holes_rows(
    store, qrels_id: int, runs: tuple[int, int], gated: list[tuple[str, str, bool, float]],
    scoring: dict[str, Any], max_drop: float,
) -> list[dict[str, Any]]:  # fmt: skip
    """The gate's rows (:func:`compared_holes` of its run against its baseline), one per
    gated measure (``(label, text, fails, margin)``, the margin in the measure's units, NaN
    for none), with ``fails``, ``margin`` and ``unsettled`` (:func:`within_margin`; the gate
    writes: it is never read-only)."""
    run_id, baseline_id = runs
    measures = {text: label for label, text, *_ in gated}
    rows = compared_holes(store, qrels_id, {run_id: None}, baseline_id, measures, scoring, max_drop)
    held = {label: (failing, margin) for label, _, failing, margin in gated}
    for row in rows:
        row.update(run=None, baseline=None)
        row["fails"], row["margin"] = held[row["measure"]]
        row["unsettled"] = within_margin(row)
    return rows


def within_margin(row: dict[str, Any]) -> bool:
    """The gate's holes rule for one measure's row (:func:`compared_holes`, with its
    ``margin``): **unsettled** when the row has holes and the condensed drop (the baseline's
    condensed mean minus the run's, on the measure's better side: reversed for a measure where
    lower is better) is at most the margin. The margin is the one the gate held the measure to,
    in its units: given (``nDCG@10:0.02``; a percent of the reference's mean, as the gate
    resolves it) or calibrated; a measure without one (NaN: the significance mode without
    ``max_drop``) must show no condensed drop at all. A condensed value that cannot be
    computed (NaN) settles nothing: not unsettled."""
    if not row["holes"]:
        return False
    sign = -1 if direction(row["measure"]) < 0 else 1
    drop = sign * (row["baseline_condensed"] - row["run_condensed"])
    margin = 0.0 if math.isnan(row["margin"]) else row["margin"]
    return drop <= margin


def holes_warnings(
    rows: list[dict[str, Any]], max_drop: float, against: str = "baseline"
) -> list[str]:
    """One warning per row with holes (:func:`compared_holes`): both mean Judged@k and both
    condensed values. Rows with the runs' names name them (the baseline as ``against``: the
    baseline, the first run); the gate's say "the run" and "the baseline"."""
    found = []
    for row in rows:
        if not row["holes"]:
            continue
        run, base = row["run"] or "run", row["baseline"] or against
        of = ("the run", f"the {against}") if row["run"] is None else (run, f"the {against} {base}")
        found.append(
            f"holes in the judgments: {row['measure']}: Judged@{row['k']} of {of[0]} "
            f"{row['run_judged']:.3f}, of {of[1]} {row['baseline_judged']:.3f} (more than "
            f"{max_drop:g} below); condensed (judged-only) {row['measure']}: {run} "
            f"{row['run_condensed']:.4f}, {base} {row['baseline_condensed']:.4f}"
        )
    return found


# --- history's columns (history --judged) ---------------------------------------------------


def judged_columns(measures: Iterable[str]) -> dict[str, int]:
    """The columns ``judged=True`` adds, ``{judged_at_K: K}``: one for each k the measures
    read (a measure's cutoff, 10 without one: the k of the gate's holes rule)."""
    ks = sorted({judged_cutoff(measure) for measure in measures})
    return {f"judged_at_{k}": k for k in ks}


def with_judged_columns(
    conn, found: Rows, shown: list[str], evaluations: dict[tuple, tuple[int, int]]
) -> Rows:
    """``found`` with :func:`judged_columns`: the mean judged share of the run's top k over
    the queries it answered that the qrels judge, as the evaluation of a shown measure with
    that k stored it (``evaluation_judged``); empty for evaluations stored before 0.19.0."""
    columns = judged_columns(shown)
    wanted: dict[tuple[str, str, int], int] = {}  # (run, qrels, k) -> the newest evaluation
    for (run, qrels, measure), (_, evaluation_id) in evaluations.items():
        key = (run, qrels, judged_cutoff(measure))
        wanted[key] = max(wanted.get(key, evaluation_id), evaluation_id)
    shares: dict[tuple[int, int], list[tuple[str, float]]] = {}
    if wanted:
        for evaluation_id, k, query_id, share in conn.execute(
            "SELECT evaluation_id, k, query_id, judged FROM evaluation_judged "
            "WHERE evaluation_id = ANY(:ids)",
            {"ids": sorted(set(wanted.values()))},
        ):
            shares.setdefault((evaluation_id, k), []).append((query_id, share))
    run, qrels = found.columns.index("run"), found.columns.index("qrels")
    rows = []
    for row in found.rows:
        means = []
        for k in columns.values():
            found_shares = shares.get((wanted.get((row[run], row[qrels], k)), k))
            means.append(_in_query_order(found_shares) if found_shares else None)
        rows.append((*row, *means))
    return Rows([*found.columns, *columns], rows)


def _in_query_order(shares: list[tuple[str, float]]) -> float:
    """The mean of ``(query_id, share)`` pairs added in query-id byte order from 0.0, as the
    engine adds a mean (:meth:`rankhouse.engine.Values.aggregates`), so a stored mean is the
    computed Judged@k to the last bit."""
    total = 0.0
    for _, share in sorted(shares, key=lambda pair: pair[0].encode()):
        total += share
    return total / len(shares)
