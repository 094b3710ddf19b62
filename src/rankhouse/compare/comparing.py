"""Compare runs on the same qrels: means with their intervals, and against a baseline, per
run and measure, the paired counts and test, the correction over the runs, the interval of the
paired difference, Hedges' g_z and the verdict; with a margin, also the nightly gate's word at
that margin (non-inferior, regressed, not shown: :func:`rankhouse.stats.gate_status`), so that
a comparison and the gate given the same margin say the same. The order drift of each run
comes from :mod:`.drift`.

The parameters are PyTerrier's ``Experiment``'s where they mean the same (``names``,
``baseline`` by index or name, ``test`` with a callable, ``correction`` by statsmodels'
names, ``correction_alpha``, ``perquery``, ``round``, ``highlight``; ``queries`` plays
``filter_by_topics``): docs/compare.md maps them one by one (:mod:`.options`).

The per-query values come from stored evaluations (computed first when missing) and are
paired by query id (:mod:`rankhouse.pairing`), in query-id byte order, never by position.
Queries where either value is NaN (trec_eval's ``-nan``) are left out of the pairs. The
tests, intervals, effect sizes and verdicts are those of :mod:`rankhouse.stats`; the
correction for multiple testing is applied per measure over the runs compared with the
baseline (the family of PyTerrier's ``Experiment``).

Intervals of differences, effect sizes and verdicts are made for measures averaged over the
queries (``aggregate`` ``mean``): the difference of two sums (``num_rel_ret``) or of two
geometric means (``gm_map``) is not the mean of the per-query differences, so those rows
keep their means and p-values but get no interval, effect size or verdict. A measure that
ranks nothing (a count: :func:`rankhouse.measures.model.direction` 0) has no better or worse
and gets no verdict either, nor does any row when ``alpha`` is 0.5 or more (equivalence is
shown by the (1 - 2 alpha) interval, which then has no width to show it with).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from ..backends.base import store_of
from ..catalog import Ingested, removed_on_failure
from ..columns import COMPARE_COLUMNS, COMPARE_NUMBERS
from ..errors import Either, InputError, Message, Option, RankhouseError, RankhouseWarning, count
from ..evaluation import evaluate
from ..judgments.holes import compared_holes, evaluated_qrels, holes_warnings
from ..lazy import numpy as np
from ..lazy import pandas as pd
from ..measures import measure_texts, parse_measures
from ..measures.model import direction
from ..pairing import paired, paired_comparison, values_by_measure
from ..present import check_display, frames, normal_highlight
from ..results import PerQueryValues
from ..stats import (
    INTERVAL_METHODS,
    check_alpha,
    check_correction,
    check_level,
    check_resampling,
    check_test,
    correct,
    effect_size,
    gate_status,
    mean_interval,
    summarize,
    t_interval,
    verdict,
)
from ..stats.drift import check_depth, check_persistence
from .drift import drift_frame, drift_rows
from .options import (
    CompareOptions,
    MarginSetting,
    margin_settings,
    read_queries,
    subset,
    subset_means,
)

COUNTS = ("num_paired", "improved", "degraded", "tied")

_TESTED_NUMBERS = ("delta", "delta_low", "delta_high", "hedges_gz", "margin", "mde")


@dataclass
class Comparison:
    """Everything :func:`compare` computes, before it is shaped for the caller, as plain rows
    (the command line prints them without pandas) and as DataFrames built when first read.

    Attributes:
        rows: one dict per run and measure, :data:`~rankhouse.columns.COMPARE_COLUMNS` as
            keys (a missing count is None, a missing number NaN).
        values: the per-query values the means and tests were made of (runs by their shown
            names, measures by their labels).
        baseline: the baseline's shown name, or None.
        options: the settings it was made with.
        alpha: the significance level the verdicts used.
        drift: with ``options.drift`` and a baseline, one dict per run other than the
            baseline, :data:`~rankhouse.columns.DRIFT_COLUMNS` as keys; else empty.
        aggregates: each measure's label -> how it aggregates (``mean``, ``sum``, ``gmean``).
        holes: with a baseline, the holes rule for each other run and measure
            (:func:`rankhouse.judgments.holes.compared_holes`), over the subset's queries
            with ``queries``; each row with holes is also a warning (:attr:`holes_warnings`).
    """

    rows: list[dict[str, Any]]
    values: PerQueryValues
    baseline: str | None
    options: CompareOptions = field(default_factory=CompareOptions)
    alpha: float = 0.05
    drift: list[dict[str, Any]] = field(default_factory=list)
    aggregates: dict[str, str] = field(default_factory=dict)
    holes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def holes_warnings(self) -> list[str]:
        """One line per run and measure much less judged than the baseline (the rule of
        :mod:`rankhouse.judgments.holes`), with both condensed values."""
        return holes_warnings(self.holes, self.options.max_judged_drop)

    @cached_property
    def means(self) -> pd.DataFrame:
        """:attr:`rows` as a DataFrame, :data:`~rankhouse.columns.COMPARE_COLUMNS`: names as
        text, the counts nullable integers, the flags and verdicts objects (None for none)."""
        frame = pd.DataFrame(
            {
                "run": [row["run"] for row in self.rows],
                "measure": [row["measure"] for row in self.rows],
                "num_q": np.asarray([row["num_q"] for row in self.rows], dtype=np.int64),
            }
        )
        for name in ("baseline", "significant", "verdict", "gate"):
            frame[name] = pd.Series([row[name] for row in self.rows], dtype=object)
        if self.baseline is not None:  # one name in every row: a text column
            frame["baseline"] = self.baseline
        for name in COMPARE_NUMBERS - {"num_q", *COUNTS}:
            frame[name] = np.asarray([row[name] for row in self.rows], dtype=float)
        for name in COUNTS:
            frame[name] = pd.array(
                [pd.NA if row[name] is None else row[name] for row in self.rows], dtype="Int64"
            )
        return frame[list(COMPARE_COLUMNS)]

    @cached_property
    def per_query(self) -> pd.DataFrame:
        """:attr:`values` as a DataFrame, :data:`~rankhouse.columns.PER_QUERY_COLUMNS`."""
        return pd.DataFrame(
            {
                "run": np.asarray(self.values.run, dtype=object),
                "query": np.asarray(self.values.query, dtype=object),
                "measure": np.asarray(self.values.measure, dtype=object),
                "value": np.asarray(self.values.value, dtype=float),
            }
        )

    @cached_property
    def drift_frame(self) -> pd.DataFrame:
        """:attr:`drift` as a DataFrame, :data:`~rankhouse.columns.DRIFT_COLUMNS`."""
        return drift_frame(self.drift)


def compare(
    wh,
    qrels: Any,
    runs: Any,
    measures: Iterable[Any],
    options: CompareOptions | None = None,
    **settings: Any,
):
    """Means of several runs and, with a baseline, paired tests of each run against it.

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        qrels: a stored qrels set (name or id), a file path, or qrels data (a DataFrame,
            ``{qid: {docid: grade}}``, ir_measures ``Qrel`` tuples).
        runs: runs as :func:`rankhouse.evaluation.evaluate` accepts them: stored names or
            ids, files, or data (DataFrames, PyTerrier result frames, ``{qid: {docid:
            score}}``, ir_measures ``ScoredDoc`` tuples; a dict name -> run names them).
        measures: measure names (any accepted spelling) or Measure objects.
        options: the settings (:class:`~rankhouse.compare.options.CompareOptions`);
            ``settings`` given as keywords replace its fields.

    Returns:
        A DataFrame (a :class:`~rankhouse.present.frames.ComparisonFrame`, which a notebook
        shows as the Experiment table and :func:`rankhouse.present.frames.experiment_table` makes
        wide) with :data:`~rankhouse.columns.COMPARE_COLUMNS`, one row per run and measure
        (runs in the order given, measures in request order). ``mean`` and ``num_q`` are the
        stored aggregate (or the subset's), ``mean_low``/``mean_high`` its interval;
        ``delta`` is the run's mean minus the baseline's, ``delta_low``/``delta_high`` the
        interval of the paired difference, ``hedges_gz`` its effect size, ``verdict`` the
        word (better, worse, equivalent, inconclusive), ``margin`` the absolute margin it
        used and ``mde`` the minimum detectable effect; ``num_paired`` counts the queries
        paired by id; ``improved``/``degraded``/``tied`` count those queries; the test
        columns are empty for the baseline itself and when no baseline is given. With
        ``drift``, the frame's ``drift`` holds each run's order drift
        (:data:`~rankhouse.columns.DRIFT_COLUMNS`). With ``perquery``, the per-query values
        (:data:`~rankhouse.columns.PER_QUERY_COLUMNS`) or both. With a baseline, a
        :class:`~rankhouse.errors.RankhouseWarning` for each run and measure whose mean
        Judged@k lies more than ``max_judged_drop`` below the baseline's, with both condensed
        values (the holes rule, :mod:`rankhouse.judgments.holes`); with ``queries``, the
        means Judged@k and the condensed values are the subset's, like the other means.

    Raises:
        RankhouseError: an unknown test or correction, alpha or the level outside (0, 1), an
            unknown interval method, a baseline index out of range, names that do not match
            the runs, or drift settings out of range.
        InputError: a baseline that stands for several runs (a multi-tag file), a query
            subset that holds no judged query, a margin that is no number or percentage.
        NotFoundError, MeasureError: as for evaluate.
    """
    options = replace(options or CompareOptions(), **settings)
    perquery, round, highlight = options.perquery, options.round, options.highlight  # noqa: A001
    if perquery not in (False, True, "both"):
        raise RankhouseError(f"perquery must be False, True or 'both', not {perquery!r}")
    check_display(4 if round is None else round, highlight)
    found = comparison(wh, qrels, runs, measures, options)
    means = frames.ComparisonFrame(found.means)
    means.attrs["display"] = {"highlight": normal_highlight(highlight)}
    means.attrs["comparison"] = settings_shown(found)
    if options.drift:
        means._drift = found.drift_frame
    if round is not None:
        means.attrs["display"]["round"] = round
    if perquery == "both":
        return means, found.per_query
    return found.per_query if perquery else means


def comparison(
    wh,
    qrels: Any,
    runs: Any,
    measures: Iterable[Any],
    options: CompareOptions | None = None,
    **settings: Any,
) -> Comparison:
    """:func:`compare`'s means and per-query values together, as plain rows (the command
    line prints them without pandas; the report uses both). The arguments are
    :func:`compare`'s; the display settings (``perquery``, ``round``, ``highlight``) are not
    read."""
    options = replace(options or CompareOptions(), **settings)
    store = store_of(wh)
    measures = measure_texts(measures)  # read once: they are evaluated more than once
    if options.test == "tukey":
        raise RankhouseError(
            Message(
                "Tukey's HSD tests every pair of runs, not each run against a baseline: use ",
                Either("Warehouse.all_pairs", "compare --all-pairs"),
            )
        )
    check_test(options.test)
    check_correction(options.correction)
    alpha = _alpha(options.alpha, options.correction_alpha)
    check_settings(options)
    wanted_queries = read_queries(options.queries) if options.queries is not None else None
    # a comparison that fails removes the files it ingested (its runs, then its baseline)
    with removed_on_failure(store) as ingested:
        return _compared(store, qrels, runs, measures, options, alpha, wanted_queries, ingested)


def _compared(
    store,
    qrels: Any,
    runs: Any,
    measures: list,
    options: CompareOptions,
    alpha: float,
    wanted_queries: Any,
    ingested: Ingested,
) -> Comparison:
    """:func:`comparison` once its options are checked."""
    evaluation = {
        "relevance_level": options.relevance_level,
        "missing_queries": options.missing_queries,
        "with_query_counts": False,
        "ingested": ingested,
    }
    result = evaluate(store, qrels, runs, measures, **evaluation)
    run_names = result.runs
    shown = _shown_names(run_names, options.names)
    parts = [result]
    base_name = None
    baseline = options.baseline
    if isinstance(baseline, bool):
        raise RankhouseError("baseline is a run's position, name or file, not a boolean")
    if isinstance(baseline, numbers.Integral):
        if not 0 <= baseline < len(run_names):
            raise RankhouseError(
                f"baseline={baseline} is no position among the {count(len(run_names), 'run')} "
                f"(0 to {len(run_names) - 1})"
            )
        base_name = run_names[int(baseline)]
    elif baseline is not None:
        base_name = _named(baseline, run_names, shown)
        if base_name is None:
            base = evaluate(store, qrels, [baseline], measures, **evaluation)
            stands_for = len({row["run_id"] for row in base.rows})
            if stands_for != 1:
                raise InputError(
                    f"the baseline {baseline!r} stands for {stands_for} runs",
                    hint="name one stored run (a file with several run tags holds several runs)",
                )
            base_name = str(base.rows[0]["run"])
            if base_name not in run_names:
                parts = [base, result]
                shown = {base_name: base_name, **shown}
    aggregates = [row for part in parts for row in part.rows]
    values = _per_query(parts, result.labels, shown)
    labels = {name: result.labels[name] for name in dict.fromkeys(r["measure"] for r in aggregates)}
    if wanted_queries is not None:
        values = subset(values, wanted_queries)
        means = subset_means(values, measures, labels)
    else:
        means = [
            {
                "run": shown[row["run"]],
                "measure": row["label"],
                "mean": math.nan if row["value"] is None else float(row["value"]),
                "num_q": int(row["num_q"]),
            }
            for row in aggregates
        ]
    base_shown = shown[base_name] if base_name is not None else None
    kinds = _aggregates(measures, labels)
    margins = margin_settings(options.margin, labels)
    rows = with_mean_intervals(means, values, options, kinds)
    rows = with_tests(rows, values, base_shown, options, alpha, kinds, margins)
    drift = []
    if options.drift and base_name is not None:
        ids = {shown[row["run"]]: int(row["run_id"]) for row in aggregates}
        pairs = [(ids[run], ids[base_shown], run, base_shown) for run in ids if run != base_shown]
        drift = drift_rows(store, pairs, options.depth, options.persistence, wanted_queries)
    holes = []
    if base_name is not None:
        ids = {int(row["run_id"]): shown[row["run"]] for row in aggregates}
        base_id = next(run_id for run_id, name in ids.items() if name == base_shown)
        scoring = {k: evaluation[k] for k in ("relevance_level", "missing_queries")}
        qrels_id = evaluated_qrels(store, result)
        drop = options.max_judged_drop
        holes = compared_holes(store, qrels_id, ids, base_id, labels, scoring, drop, wanted_queries)
        for line in holes_warnings(holes, drop):
            warnings.warn(RankhouseWarning(line), stacklevel=3)
    return Comparison(
        [{name: row[name] for name in COMPARE_COLUMNS} for row in rows],
        values,
        base_shown,
        options,
        alpha,
        drift,
        kinds,
        holes,
    )


def settings_shown(found: Comparison) -> dict[str, Any]:
    """What a table of the comparison says it was made with (its caption, its title)."""
    options = found.options
    return {
        "alpha": found.alpha,
        "level": options.level,
        "interval": options.interval,
        "test": getattr(options.test, "__name__", options.test),
        "correction": options.correction or "none",
        "permutations": options.permutations,
        "seed": options.seed,
    }


def check_settings(options: CompareOptions) -> None:
    """Raise RankhouseError for resamples, a level, an interval method or drift settings
    that cannot be used (before anything is evaluated)."""
    check_resampling(options.permutations, options.seed)
    check_level(options.level)
    if options.interval not in INTERVAL_METHODS:
        raise RankhouseError(
            Message(
                Option("interval"),
                f" must be one of {', '.join(INTERVAL_METHODS)}, not {options.interval!r}",
            )
        )
    if options.drift and options.baseline is None:
        raise RankhouseError(
            Message(
                Option("drift"), " measures each run against ", Option("baseline"), "; give one"
            )
        )
    if not 0 <= options.max_judged_drop <= 1:
        raise RankhouseError(
            Message(
                Option("max_judged_drop"),
                f" must lie between 0 and 1, not {options.max_judged_drop!r}",
            )
        )
    if options.drift:
        check_depth(options.depth, "depth")
        check_persistence(options.persistence)


def _aggregates(measures: list[str], labels: dict[str, str]) -> dict[str, str]:
    """Each label -> how its measure aggregates (``mean``, ``sum``, ``gmean``)."""
    return {labels[m.name]: m.aggregate for m in parse_measures(measures) if m.name in labels}


def _alpha(alpha: float, correction_alpha: float | None) -> float:
    if correction_alpha is not None and alpha not in (0.05, correction_alpha):
        raise RankhouseError(
            f"alpha={alpha} and correction_alpha={correction_alpha} disagree; give one"
        )
    chosen = alpha if correction_alpha is None else correction_alpha
    check_alpha(chosen)
    return chosen


def _shown_names(run_names: list[str], names: Sequence[str] | None) -> dict[str, str]:
    """Stored run name -> the name shown for it."""
    if names is None:
        return {name: name for name in run_names}
    if isinstance(names, str):
        raise RankhouseError("names is a list of names, one per run, not one string")
    given = [str(n) for n in names]
    if len(given) != len(run_names):
        raise RankhouseError(
            f"{count(len(given), 'name')} for {count(len(run_names), 'run')} "
            f"({', '.join(run_names)}); give one "
            "name per run, in order"
        )
    if len(set(given)) != len(given):
        raise RankhouseError(f"the names must differ, got {', '.join(given)}")
    return dict(zip(run_names, given, strict=True))


def _named(baseline: Any, run_names: list[str], shown: dict[str, str]) -> str | None:
    """The stored name of the run among ``runs`` that ``baseline`` names, or None."""
    if not isinstance(baseline, str):
        return None
    by_shown = {v: k for k, v in shown.items()}
    if baseline in by_shown:
        return by_shown[baseline]
    return baseline if baseline in run_names else None


def _per_query(parts, labels: dict[str, str], shown: dict[str, str]) -> PerQueryValues:
    found = PerQueryValues()
    for part in parts:
        values = part._loaded_per_query()
        found.run += [shown[run] for run in values.run]
        found.query += [str(query) for query in values.query]
        found.measure += [labels[measure] for measure in values.measure]
        found.value += [float(value) for value in values.value]
    return found


def with_mean_intervals(
    rows: list[dict[str, Any]],
    values: PerQueryValues,
    options: CompareOptions,
    aggregates: Mapping[str, str],
) -> list[dict[str, Any]]:
    """``rows`` (run, measure, mean, num_q) with ``mean_low`` and ``mean_high``: the interval
    of the mean of each run's per-query values (NaN for a measure not averaged)."""
    by_measure = values_by_measure(values)
    found = []
    for row in rows:
        low = high = math.nan
        if aggregates.get(row["measure"]) == "mean":
            mine = by_measure.get(row["measure"], {}).get(row["run"], {})
            present = [v for v in mine.values() if not math.isnan(v)]
            interval = _interval(present, options)
            low, high = interval.low, interval.high
        found.append({**row, "mean_low": low, "mean_high": high})
    return found


def with_tests(
    rows: list[dict[str, Any]],
    values: PerQueryValues,
    baseline: str | None,
    options: CompareOptions,
    alpha: float,
    aggregates: Mapping[str, str],
    margins: Mapping[str, MarginSetting],
) -> list[dict[str, Any]]:
    """``rows`` with the test columns of :data:`~rankhouse.columns.COMPARE_COLUMNS`: empty
    without a baseline and on the baseline's own rows; else each run against the baseline,
    per measure, the p-values corrected over the runs of the measure, and the verdict on the
    corrected p-value."""
    rows = [
        {
            **row,
            "baseline": baseline,
            **dict.fromkeys(_TESTED_NUMBERS, math.nan),
            "verdict": None,
            "gate": None,
            "p_value": math.nan,
            "p_corrected": math.nan,
            "significant": None,
            **dict.fromkeys(COUNTS),
        }
        for row in rows
    ]
    if baseline is None:
        return rows
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["measure"], []).append(row)
    by_measure = values_by_measure(values)
    for measure, group in groups.items():
        base_mean = next(row["mean"] for row in group if row["run"] == baseline)
        others = [row for row in group if row["run"] != baseline]
        by_run = by_measure.get(measure, {})
        averaged = aggregates.get(measure) == "mean"
        margin = margins.get(measure)
        differences = {}
        for row in others:
            _, run_values, baseline_values = paired(by_run, row["run"], baseline)
            compared = paired_comparison(
                run_values,
                baseline_values,
                test=options.test,
                permutations=options.permutations,
                seed=options.seed,
            )
            row["delta"] = row["mean"] - base_mean
            row["num_paired"] = compared.num_paired
            row["improved"] = compared.improved
            row["degraded"] = compared.degraded
            row["tied"] = compared.tied
            row["p_value"] = compared.p_value
            if averaged:
                differences[row["run"]] = run_values - baseline_values
                _add_difference(row, differences[row["run"]], options)
            if margin is not None:
                row["margin"] = _or_nan(margin.absolute(base_mean))
        p_values = [row["p_value"] for row in others]
        corrected, reject = correct(p_values, options.correction, alpha=alpha)
        sign = direction(measure)
        for row, p_corrected, significant in zip(others, corrected, reject, strict=True):
            row["p_corrected"] = p_corrected
            row["significant"] = significant
            if averaged and sign != 0 and alpha < 0.5:
                _add_verdict(row, differences[row["run"]], alpha, sign)
    return rows


def _add_difference(row: dict[str, Any], differences: np.ndarray, options: CompareOptions):
    summary = summarize(differences)
    interval = _interval(differences, options, summary)
    row["delta_low"], row["delta_high"] = interval.low, interval.high
    row["hedges_gz"] = effect_size(summary).hedges_gz


def _add_verdict(row: dict[str, Any], differences: np.ndarray, alpha: float, sign: int):
    margin = None if math.isnan(row["margin"]) else row["margin"]
    found = verdict(
        summarize(differences), row["p_corrected"], alpha=alpha, margin=margin, direction=sign
    )
    row["verdict"] = found.word
    row["mde"] = found.minimum_detectable_effect
    if margin is not None:  # the gate's word at the same margin (rankhouse regress)
        row["gate"] = gate_status(summarize(differences), margin, alpha=alpha, direction=sign)[0]


def _interval(values, options: CompareOptions, summary=None):
    if options.interval == "t":
        return t_interval(summary or summarize(values), options.level)
    return mean_interval(
        values,
        options.level,
        method=options.interval,
        resamples=options.permutations,
        seed=options.seed,
    )


def _or_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)
