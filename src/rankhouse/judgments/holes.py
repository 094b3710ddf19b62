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
* **unsettled** when there are holes and the condensed value of the run is not below the
  baseline's: the drop may be the holes, not the run.

Everything is computed by the engine (:func:`rankhouse.engine.compute`) on the connection
where the store keeps the rows: a DuckDB file's own, a server's workspace.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..engine import compute
from ..measures import parse_measures

#: The k of a measure without a cutoff.
DEFAULT_K = 10


def judged_cutoff(measure: str) -> int:
    """The k of the holes rule for a measure label: its cutoff, 10 when it has none."""
    found = re.search(r"@(\d+)", measure)
    return int(found.group(1)) if found else DEFAULT_K


def judged_means(store, qrels_id: int, run_ids: list[int], cutoffs) -> dict[tuple[int, int], float]:
    """Each run's mean Judged@k for each k of ``cutoffs``: ``{(k, run_id): mean}`` (0.0 for
    a run that answers none of the judged queries)."""
    ks = sorted(set(cutoffs))
    measures = parse_measures([f"Judged@{k}" for k in ks])
    with store.engine_connection(run_ids, qrels_id) as duck:
        values = compute(duck, run_ids, qrels_id, measures, missing_queries="skip")
        found = {(a.measure.name, a.run_id): a.value for a in values.aggregates()}
    return {
        (k, run_id): found.get((measure.name, run_id), 0.0)
        for k, measure in zip(ks, measures, strict=True)
        for run_id in run_ids
    }


def condensed_means(
    store, qrels_id: int, run_ids: list[int], texts: list[str], scoring: dict[str, Any]
) -> dict[tuple[str, int], float]:
    """Each run's condensed (judged-only, trec_eval ``-J``) mean of each measure text under
    the gate's ``scoring`` (relevance level, missing queries): ``{(text, run_id): mean}``."""
    measures = parse_measures(texts)
    with store.engine_connection(run_ids, qrels_id) as duck:
        values = compute(duck, run_ids, qrels_id, measures, judged_only=True, **scoring)
        found = {(a.measure.name, a.run_id): a.value for a in values.aggregates()}
    return {
        (text, run_id): found.get((measure.name, run_id), math.nan)
        for text, measure in zip(texts, measures, strict=True)
        for run_id in run_ids
    }


def holes_rows(
    store, qrels_id: int, runs: tuple[int, int], gated: list[tuple[str, str, bool]],
    scoring: dict[str, Any], max_drop: float,
) -> list[dict[str, Any]]:  # fmt: skip
    """One row per gated measure (``(label, text, fails)``): ``measure, k, run_judged,
    baseline_judged, holes, run_condensed, baseline_condensed, unsettled, fails``; the
    condensed values only where some measure has holes (NaN elsewhere: a gate without holes
    computes nothing more)."""
    run_id, baseline_id = runs
    ids = list(dict.fromkeys(runs))
    shares = judged_means(store, qrels_id, ids, [judged_cutoff(label) for label, _, _ in gated])
    rows = []
    for label, _, fails in gated:
        k = judged_cutoff(label)
        ours, theirs = shares[k, run_id], shares[k, baseline_id]
        rows.append(dict(measure=label, k=k, run_judged=ours, baseline_judged=theirs))
        rows[-1].update(run_condensed=math.nan, baseline_condensed=math.nan, unsettled=False)
        rows[-1].update(fails=fails, holes=theirs - ours > max_drop)
    if any(row["holes"] for row in rows):
        texts = [text for _, text, _ in gated]
        condensed = condensed_means(store, qrels_id, ids, texts, scoring)
        for row, text in zip(rows, texts, strict=True):
            row["run_condensed"] = condensed[text, run_id]
            row["baseline_condensed"] = condensed[text, baseline_id]
            row["unsettled"] = row["holes"] and not row["run_condensed"] < row["baseline_condensed"]
    return rows


def holes_warnings(rows: list[dict[str, Any]], max_drop: float) -> list[str]:
    """One warning per measure whose run is less judged than the baseline by more than
    ``max_drop`` (mean Judged@k), with both condensed values."""
    return [
        f"holes in the judgments: {row['measure']}: Judged@{row['k']} of the run "
        f"{row['run_judged']:.3f}, of the baseline {row['baseline_judged']:.3f} (more "
        f"than {max_drop:g} below); condensed (judged-only) {row['measure']}: run "
        f"{row['run_condensed']:.4f}, baseline {row['baseline_condensed']:.4f}"
        for row in rows
        if row["holes"]
    ]
