"""PyTerrier's ``pt.Experiment`` frame: ``rankhouse.experiment(..., shape="pyterrier")``.

Code written for ``pt.Experiment`` on result frames reads the same frame from rankhouse
(PyTerrier's ``pyterrier/_evaluation/_rendering.py``, ``RenderFromPerQuery.averages``):

* one row per run, the column ``name`` (``names=``, else the runs' names), then one column per
  measure named as the caller wrote it (``"map"``, ``"ndcg_cut_10"``; an ir_measures object by
  its string, ``nDCG@10``; a name that stands for several measures, such as a nickname or
  ``"P"``, gives each its ir_measures name, ``NumRet(rel=1)`` for trec_eval's
  ``num_rel_ret``): the means, except that a column PyTerrier calls a count (``num_q``,
  ``NumRet``...: ``_mean_of_measures``) holds the sum over the queries;
* the measures in PyTerrier's order, not the order asked: pytrec_eval's (trec_eval's table
  order, a measure's cutoffs ascending) for the measures it computes, grouped by relevance
  level (the groups in the order first asked; PyTerrier's depends on Python's hash seed),
  then the others in the order asked (:func:`pyterrier_order`);
* ``official`` without ``GMAP``: PyTerrier skips trec_eval's ``gm_map`` (asked by name, it
  is kept);
* with a baseline, after all the means, per measure ``<m> +`` and ``<m> -`` (queries improved
  and degraded) and ``<m> p-value``, empty on the baseline's row; with a correction, after each
  ``<m> p-value``, ``<m> reject`` (the corrected test rejects, False on the baseline's row) and
  ``<m> p-value corrected``;
* ``round``: the means rounded with Python's ``round`` (a number, or a dict keyed by the
  column names), as PyTerrier does; the counts and p-values are not rounded;
* ``perquery=True``: the per-query values as PyTerrier's ``name, qid, measure, value``, by
  name and qid, each query's measures in the columns' order; ``"both"``: the pair (averages,
  perquery). The index is 0..n-1 (PyTerrier's keeps each row's place before it sorted, which
  follows the order of the run's lines).

A measure evaluated under other settings than the defaults (``relevance_level=2``) keeps its
label (``AP(rel=2)``), never the bare name. The frame is a DataFrame (PyTerrier returns a
pandas Styler when it highlights; rankhouse's frame is shown highlighted in a notebook).
"""

from __future__ import annotations

import builtins
import math
import sys
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..errors import InputError, Message, RankhouseError
from ..labels import label
from ..lazy import pandas as pd
from ..measures import Measure, measure_items, parse_measures
from ..measures.trec import TABLE_ORDER
from ..present import check_display, frames, normal_highlight
from .comparing import Comparison, comparison
from .options import CompareOptions

#: The shapes :func:`rankhouse.experiment` returns.
SHAPES = ("rankhouse", "pyterrier")
#: The measures pytrec_eval computes for PyTerrier (ir_measures' ``PytrecEvalProvider``), by
#: registry name; the others come after them, from ir_measures' other providers.
_PYTREC_EVAL = frozenset({
    "NumQ", "NumRet", "NumRel", "NumRelRet", "P", "R", "Success", "AP", "RR", "nDCG", "Rprec",
    "Bpref", "IPrec", "infAP", "SetP", "SetRelP", "SetR", "SetAP", "SetF",
})  # fmt: skip
#: Measures pytrec_eval computes at any relevance level: in its first group of measures.
_ANY_LEVEL = frozenset({"NumQ", "NumRet", "nDCG"})
#: The columns PyTerrier sums over the queries (``_mean_of_measures``); it averages the rest.
_SUMMED = frozenset(
    {"num_q", "num_rel", "num_ret", "num_rel_ret", "NumQ", "NumRel", "NumRet", "NumRelRet"}
)
#: rankhouse's names that ir_measures (hence PyTerrier's columns) spells otherwise.
_IR_MEASURES_NAMES = {"NumRelRet": "NumRet(rel=1)"}


class Experiment(NamedTuple):
    """``perquery="both"`` in PyTerrier's shape: its ``EvaluationDataTuple``."""

    averages: pd.DataFrame
    perquery: pd.DataFrame


def pyterrier_experiment(wh, qrels: Any, runs: Any, measures: Any, options: CompareOptions):
    """:func:`~rankhouse.compare.comparison` in PyTerrier's shape (see the module).

    Returns:
        The averages frame (a :class:`~rankhouse.present.frames.ExperimentFrame`), the
        per-query frame (``perquery=True``), or both as an :class:`Experiment`.
    """
    if options.perquery not in (False, True, "both"):
        raise RankhouseError(f"perquery must be False, True or 'both', not {options.perquery!r}")
    round = options.round  # noqa: A001 (PyTerrier's name)
    check_display(4 if round is None else round, options.highlight)
    # PyTerrier cannot compute trec_eval's gm_map, and its "official" leaves it out
    items = [(text, own) for text, own in measure_items(measures) if own or text != "gm_map"]
    columns = column_names(items, options.relevance_level, options.missing_queries)
    found = comparison(wh, qrels, runs, [text for text, _ in items], options)
    averages = frames.ExperimentFrame(_averages(found, columns, options))
    averages.attrs["display"] = {"highlight": normal_highlight(options.highlight)}
    if round is not None:
        averages.attrs["display"]["round"] = round
    if options.perquery is False:
        return averages
    perquery = _perquery(found, columns, round)
    return perquery if options.perquery is True else Experiment(averages, perquery)


def column_names(
    items: list[tuple[str, bool]], relevance_level: int, missing_queries: str
) -> dict[str, str]:
    """Each requested measure's label -> its column, in PyTerrier's order: the text the caller
    wrote for it when it stands for that one measure at the default settings, else the label
    (in ir_measures' spelling)."""
    measures: dict[str, Measure] = {}
    columns: dict[str, str] = {}
    for text, written in items:
        parsed = parse_measures([text])
        for measure in parsed:
            shown = label(measure, relevance_level, missing_queries)
            own = written and len(parsed) == 1 and shown == measure.name
            measures.setdefault(shown, measure)
            columns.setdefault(shown, text.strip() if own else _IR_MEASURES_NAMES.get(shown, shown))
    order = pyterrier_order(list(measures.values()), relevance_level)
    shown_of = {id(measure): shown for shown, measure in measures.items()}
    return {shown_of[id(m)]: columns[shown_of[id(m)]] for m in order}


def pyterrier_order(measures: list[Measure], relevance_level: int) -> list[Measure]:
    """``measures`` in the order of pt.Experiment's columns.

    PyTerrier takes its columns from the first query's values as ir_measures yields them:
    pytrec_eval's first, one call per relevance level, each in trec_eval's table order (a
    measure's cutoffs ascending), then the other providers'. Its order of the levels follows a
    set's (Python's hash seed); here they come in the order first asked, and the measures
    pytrec_eval does not compute follow in the order asked.
    """
    groups: dict[int, list[tuple[int, float, int]]] = {}
    others: list[Measure] = []
    anywhere: list[tuple[int, float, int]] = []
    for i, measure in enumerate(measures):
        place = _pytrec_eval_place(measure, relevance_level)
        if place is None:
            others.append(measure)
        elif measure.definition.name in _ANY_LEVEL:
            anywhere.append((*place, i))
        else:
            groups.setdefault(measure.effective_level(relevance_level), []).append((*place, i))
    first = next(iter(groups.values()), None)
    if first is None:
        groups[relevance_level] = first = []
    first.extend(anywhere)
    placed = [measures[i] for group in groups.values() for *_, i in sorted(group)]
    return placed + others


def _pytrec_eval_place(measure: Measure, relevance_level: int) -> tuple[int, float] | None:
    """Where pytrec_eval prints ``measure`` (its trec_eval table position, then its cutoff),
    or None when PyTerrier has another provider compute it."""
    definition = measure.definition
    params = measure.params
    if (
        definition.name not in _PYTREC_EVAL
        or (definition.name == "RR" and params.get("cutoff") is not None)
        or (definition.name == "nDCG" and params.get("dcg") != "log2")
        or (definition.name == "NumRel" and measure.effective_level(relevance_level) != 1)
    ):
        return None
    keyed = [t for t in definition.trec if t.key is not None and params.get(t.key) is not None]
    trec = keyed[0] if keyed else definition.trec[0]
    return TABLE_ORDER.index(trec.name), float(params[trec.key]) if keyed else 0.0


def _averages(found: Comparison, columns: dict[str, str], options: CompareOptions):
    runs = list(dict.fromkeys(row["run"] for row in found.rows))
    present = {row["measure"] for row in found.rows}
    labels = [m for m in columns if m in present]
    by = {(row["run"], row["measure"]): row for row in found.rows}
    names = [columns[m] for m in labels]
    rows = [
        [
            run,
            *(
                _rounded(_mean(found, by[(run, m)], columns[m]), columns[m], options.round)
                for m in labels
            ),
        ]
        for run in runs
    ]
    header = ["name", *names]
    baseline = found.baseline
    if baseline is not None:
        for run, row in zip(runs, rows, strict=True):
            for m in labels:
                cells = by[(run, m)]
                row += (
                    [None] * 3
                    if run == baseline
                    else [cells["improved"], cells["degraded"], cells["p_value"]]
                )
        header += [f"{name}{suffix}" for name in names for suffix in (" +", " -", " p-value")]
    frame = pd.DataFrame(rows, columns=header)
    if baseline is None or options.correction in (None, "none"):
        return frame
    for m, name in zip(labels, names, strict=True):
        at = frame.columns.get_loc(f"{name} p-value")
        reject = [False if run == baseline else bool(by[(run, m)]["significant"]) for run in runs]
        corrected = [
            math.nan if run == baseline else float(by[(run, m)]["p_corrected"]) for run in runs
        ]
        frame.insert(at + 1, f"{name} reject", reject)
        frame.insert(at + 2, f"{name} p-value corrected", corrected)
    return frame


def _mean(found: Comparison, row: dict[str, Any], column: str) -> float:
    """The value of a mean column: PyTerrier sums the columns it calls counts, and averages
    every other (``NumRet(rel=1)`` too, where trec_eval sums ``num_rel_ret``)."""
    if found.aggregates.get(row["measure"]) == "sum" and column not in _SUMMED:
        return row["mean"] / row["num_q"]
    return row["mean"]


def _perquery(found: Comparison, columns: dict[str, str], round: Any) -> pd.DataFrame:  # noqa: A002
    values = found.values
    shown = [columns[m] for m in values.measure]
    position = {m: i for i, m in enumerate(columns)}
    frame = pd.DataFrame(
        {
            "name": values.run,
            "qid": values.query,
            "measure": shown,
            "value": [_rounded(v, c, round) for c, v in zip(shown, values.value, strict=True)],
            "at": [position[m] for m in values.measure],
        }
    )
    frame = frame.sort_values(["name", "qid", "at"], kind="stable", ignore_index=True)
    frame = frame.drop(columns="at")
    if isinstance(round, int):
        frame["value"] = frame["value"].round(round)
    return frame


def _rounded(value: Any, column: str, round: Any) -> Any:  # noqa: A002 (PyTerrier's name)
    """PyTerrier's ``_apply_round``: Python's ``round`` with one number, or with the dict's
    number for this column (keyed by the column's name)."""
    if isinstance(round, int):
        return builtins.round(value, round)
    if isinstance(round, Mapping) and column in round:
        return builtins.round(value, round[column])
    return value


def refuse_pyterrier_order(qrels: Any, runs: Any, measures: Any, more: tuple) -> None:
    """Raise InputError when ``rankhouse.experiment`` was called in ``pt.Experiment``'s order,
    ``(systems, topics, qrels, metrics)``: a fourth positional argument, or a list of result
    frames or transformers where the qrels go and a qrels frame where the measures go."""
    if not more and not (_systems(qrels) and _is_frame(measures)):
        return
    raise InputError(
        Message(
            "these are pt.Experiment's arguments (systems, topics, qrels, metrics); "
            "rankhouse.experiment takes the qrels first, as `rankhouse eval QRELS RUN` does: "
            "rankhouse.experiment(qrels, [results, ...], ['map', ...], queries=topics), "
            "where each run is a result frame (run a PyTerrier transformer on the topics "
            "first: bm25(topics)) and queries= keeps the topics' queries (filter_by_topics)"
        )
    )


def _systems(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and bool(value)
        and all(_is_frame(v) or hasattr(v, "transform") for v in value)
    )


def _is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (without importing pandas to ask)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)
