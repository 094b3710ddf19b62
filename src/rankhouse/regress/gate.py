"""The regression gate: is the run no worse than its baseline?

Each gated measure is judged in the gate's mode (:mod:`rankhouse.regress.verdicts`):
``non_inferiority`` (the default) fails a measure when the lower limit of the (1 - 2 alpha)
t interval of the paired difference lies below -margin; ``significance`` fails it when the
mean drops by more than the tolerance and the drop is significant. Order-drift bounds
(:mod:`rankhouse.regress.drift`) fail the gate when the run reorders the baseline's
rankings too much. The baseline is a run, or a rule (:mod:`rankhouse.regress.baselines`:
``previous``, ``last-passed``, ``best``); a baseline judged on other inputs than the run is
evaluated on stops the gate (:mod:`rankhouse.regress.inputs`). Every check is stored (tables
``regress_checks``, ``regress_verdicts`` and ``regress_drift``) so that ``history`` shows
the verdicts and ``last-passed`` finds the runs that passed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..backends.base import store_of
from ..catalog import removed_on_failure
from ..columns import VERDICT_COLUMNS, VERDICT_NUMBERS  # noqa: F401 (the verdicts' columns)
from ..display.tables import HtmlTable
from ..display.verdicts import verdicts_html
from ..errors import InputError
from ..evaluation import evaluate, resolve_qrels, resolve_runs
from ..lazy import pandas as pd
from ..stats import (
    DEFAULT_LEVEL,
    DEFAULT_PERMUTATIONS,
    DEFAULT_SEED,
    check_alpha,
    check_correction,
    check_level,
    check_resampling,
    check_test,
)
from .baselines import (
    BASELINE_RULES,
    BEST,
    LAST_PASSED,
    PREVIOUS,
    NoBaselineError,
    best_run,
    last_passed_run,
    previous_run,
)
from .drift import DRIFT_GATE_COLUMNS, drift_bounds, drift_checks
from .inputs import (
    gate_checks,
    input_changes,
    reference_evaluations,
    refuse_input_change,
)
from .store import computed_ids, forgotten_on_failure, store_check
from .verdicts import MODES, gated_measures, measure_verdicts

STATUSES = (
    "regressed",
    "non_inferior",
    "not_significant",
    "within_tolerance",
    "unchanged",
    "improved",
)
"""A measure's status: ``regressed`` fails the gate; ``non_inferior`` passes it in the
non-inferiority mode, the others in the significance mode."""

#: Each measure's verdict (a name the tests may replace with one that fails).
_verdicts = measure_verdicts


@dataclass
class RegressResult:
    """The outcome of one :func:`regress` check.

    Attributes:
        check_id: ``regress_checks.id`` of the stored check.
        run: the run's name.
        baseline: the baseline run's name; None for the first run of a series passed with
            ``allow_missing_baseline`` (``verdicts`` is then empty).
        qrels: the qrels set's name.
        passed: no measure regressed and no drift bound failed.
        verdict_rows: one dict per measure, keys :data:`VERDICT_COLUMNS` (plain values).
        settings: mode, level, test, correction, alpha, max_drop, relative, permutations,
            seed, relevance level, missing-query policy, baseline rule.
        drift_rows: one dict per ``max_drift`` bound, keys
            :data:`~rankhouse.regress.drift.DRIFT_GATE_COLUMNS`.
        input_change: what differed between the run's inputs and the baseline's when
            ``allow_input_change`` let the gate compare them anyway; None when nothing did.
    """

    check_id: int
    run: str
    baseline: str | None
    qrels: str
    passed: bool
    verdict_rows: list[dict[str, Any]]
    settings: dict[str, Any] = field(default_factory=dict)
    drift_rows: list[dict[str, Any]] = field(default_factory=list)
    input_change: str | None = None

    @property
    def verdicts(self) -> pd.DataFrame:
        """One row per measure, columns :data:`VERDICT_COLUMNS` (a DataFrame)."""
        if not self.verdict_rows:
            return pd.DataFrame(columns=list(VERDICT_COLUMNS))
        return pd.DataFrame(self.verdict_rows, columns=list(VERDICT_COLUMNS))

    @property
    def drift(self) -> pd.DataFrame:
        """One row per drift bound, columns :data:`DRIFT_GATE_COLUMNS` (a DataFrame)."""
        return pd.DataFrame(self.drift_rows, columns=list(DRIFT_GATE_COLUMNS))

    @property
    def regressed(self) -> list[str]:
        """Names of the measures that regressed."""
        return [str(row["measure"]) for row in self.verdict_rows if row["regressed"]]

    @property
    def drifted(self) -> list[str]:
        """The drift bounds the run failed (``rbo@100``)."""
        return [str(row["measure"]) for row in self.drift_rows if not row["passed"]]

    def styled(self, round: int | dict[str, int] = 4) -> HtmlTable:  # noqa: A002
        """The verdicts as an HTML table, the verdict as its caption (Jupyter shows it).

        Args:
            round: decimals, one number or a dict measure -> decimals.
        """
        return HtmlTable(verdicts_html(self, round=round))

    def _repr_html_(self) -> str:
        return self.styled().html


def regress(
    wh,
    run: Any,
    *,
    baseline: Any = PREVIOUS,
    qrels: Any,
    measures: Iterable[Any],
    mode: str = MODES[0],
    max_drop: float = 0.01,
    relative: bool = False,
    alpha: float = 0.05,
    level: float = DEFAULT_LEVEL,
    test: str = "t",
    correction: str = "none",
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    max_drift: Iterable[str] | str | None = None,
    allow_missing_baseline: bool = False,
    allow_input_change: bool = False,
) -> RegressResult:
    """Gate ``run`` against ``baseline`` and store the verdict.

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        run: the run under test: a stored name or id, or a file (ingested; one run tag).
        baseline: a run (name, id or file), or a rule: ``'previous'`` (the latest run of the
            same system tag ingested before ``run``), ``'last-passed'`` (the newest of those
            whose gate passed) or ``'best'`` (the passed one with the highest mean of the
            first measure); :mod:`rankhouse.regress.baselines`.
        qrels: the qrels set (name, id or file).
        measures: measure names (any accepted spelling), each with an optional margin after
            a colon: ``'nDCG@10:0.01'`` (the measure's units), ``'AP:2%'`` (of the
            baseline's mean).
        mode: ``'non_inferiority'`` (fail when the lower limit of the (1 - 2 alpha) t
            interval of the paired difference lies below -margin) or ``'significance'``
            (fail when the drop exceeds the margin and is significant).
        max_drop: the margin of the measures given without one (absolute, or a fraction
            of the baseline's mean with ``relative``).
        relative: read ``max_drop`` as a fraction of the baseline's mean.
        alpha: significance level: of the (corrected) p-values, and of the one-sided
            non-inferiority test.
        level: confidence level of the intervals of the differences shown.
        test: the paired test of the p-values (see :mod:`rankhouse.stats`).
        correction: correction over the measures of this check.
        permutations: resamples of the randomization and bootstrap tests.
        seed: seed of the randomization and bootstrap tests.
        relevance_level: as for evaluate.
        missing_queries: as for evaluate.
        max_drift: order-drift bounds (``'rbo@100:0.9'``, ``'tau@10:0.8'``,
            ``'overlap@100:0.8'``): fail when the run's mean drift from the baseline is
            below the bound.
        allow_missing_baseline: pass the first run of a system (stored as a check without
            a baseline: ``history`` shows its gate as ``first run``) instead of raising
            NoBaselineError.
        allow_input_change: gate against a baseline judged on other inputs (qrels
            content, queries, settings) instead of raising InputChangeError; the check
            records what differed.

    Returns:
        A :class:`RegressResult`; ``passed`` is False when any measure regressed or any
        drift bound failed.

    Raises:
        NoBaselineError: a rule, the run is the first of its system and
            ``allow_missing_baseline`` is false.
        NoPassedRunError: ``'last-passed'`` or ``'best'`` and no earlier run passed.
        InputChangeError: the baseline was judged on other inputs (see above).
        InputError: ``run`` or ``baseline`` stands for several runs; a negative margin;
            an unknown mode; a malformed drift bound.
        NotFoundError, MeasureError, RankhouseError: unknown names or options.
    """
    store = store_of(wh)
    _check(mode, alpha, level, max_drop, test, correction, permutations, seed)
    gated = gated_measures(measures, max_drop, relative)
    bounds = drift_bounds(max_drift)
    rule = baseline if isinstance(baseline, str) and baseline in BASELINE_RULES else None
    options = {"relevance_level": relevance_level, "missing_queries": missing_queries}
    # a gate that fails removes the files it ingested: it leaves the warehouse as it found it
    # and so does one that stops before its verdict: what it computed is removed too
    with removed_on_failure(store) as ingested, forgotten_on_failure(store) as computed:
        run_row = _one_run(resolve_runs(store, run, ingested=ingested), run)
        qrels_row = resolve_qrels(store, qrels, ingested=ingested)
        ours = evaluate(store, qrels_row["id"], [run_row["id"]], gated.texts, **options).rows
        computed += computed_ids(ours)
        try:
            baseline_row = _baseline(
                store, run_row, qrels_row, (baseline, rule, ingested), ours, options, computed
            )
        except NoBaselineError:
            if not allow_missing_baseline:
                raise
            baseline_row = None
        if baseline_row is not None and baseline_row["id"] == run_row["id"]:
            raise InputError(f"run {run_row['name']!r} cannot be its own baseline")
        settings = {
            "mode": mode,
            "level": level,
            "test": test,
            "correction": correction,
            "alpha": alpha,
            "max_drop": max_drop,
            "relative": relative,
            "permutations": permutations,
            "seed": seed,
            **options,
            "baseline_rule": rule,
            "margins": {n: s.text for n, s in gated.margins.items()},
        }
        verdicts, drift, change = [], [], None
        if baseline_row is not None:  # else the first run of its series: nothing to compare
            theirs = evaluate(
                store, qrels_row["id"], [baseline_row["id"]], gated.texts, **options
            ).rows
            computed += computed_ids(theirs)
            change = _input_change(store, baseline_row, qrels_row, ours, theirs)
            if change and not allow_input_change:
                raise refuse_input_change(baseline_row["name"], change)
            verdicts = _verdicts(
                store, ours + theirs, run_row["id"], baseline_row["id"], gated, settings
            )
            drift = drift_checks(store, run_row["id"], baseline_row["id"], bounds)
        passed = not any(row["regressed"] for row in verdicts) and all(
            row["passed"] for row in drift
        )
        text = " / ".join(change) if change else None
        check_id = store_check(
            store, run_row, baseline_row, baseline, qrels_row, settings, (verdicts, drift),
            passed, text,
        )  # fmt: skip
        return RegressResult(
            check_id=check_id,
            run=run_row["name"],
            baseline=None if baseline_row is None else baseline_row["name"],
            qrels=qrels_row["name"],
            passed=passed,
            verdict_rows=verdicts,
            settings=settings,
            drift_rows=drift,
            input_change=text,
        )


def _check(mode, alpha, level, max_drop, test, correction, permutations, seed) -> None:
    if mode not in MODES:
        raise InputError(
            f"mode must be one of {', '.join(MODES)}, not {mode!r}",
            hint="non_inferiority fails a measure unless it is shown no worse than the "
            "margin; significance fails it when a drop beyond the margin is significant",
        )
    check_test(test)
    check_correction(correction)
    check_alpha(alpha)
    check_level(level)
    check_resampling(permutations, seed)
    if mode == "non_inferiority" and not alpha < 0.5:
        raise InputError(
            f"alpha must be below 0.5 in the non-inferiority mode, got {alpha} (its bound is "
            "the lower limit of the (1 - 2 alpha) interval)"
        )
    if not max_drop >= 0:
        raise InputError(f"max_drop must be zero or positive, got {max_drop}", field="max_drop")


def _baseline(store, run_row, qrels_row, given, ours, options, computed) -> dict[str, Any]:
    baseline, rule, ingested = given
    if rule == PREVIOUS:
        return previous_run(store, run_row)
    if rule == LAST_PASSED:
        return last_passed_run(store, run_row, qrels_row["id"])
    if rule == BEST:
        first = ours[0]
        with store.connect() as conn:
            signature = conn.execute(
                "SELECT input_signature FROM evaluations WHERE id = :id",
                {"id": int(first["evaluation_id"])},
            ).scalar()
        return best_run(store, run_row, qrels_row, first["measure"], (options, signature), computed)
    return _one_run(resolve_runs(store, baseline, ingested=ingested), baseline)


def _input_change(store, baseline_row, qrels_row, ours, theirs) -> list[str]:
    """What differs between the run's evaluations and those the baseline was judged by."""
    labels = [row["label"] for row in ours]
    reference = {row["label"]: int(row["evaluation_id"]) for row in theirs}
    with store.connect() as conn:
        check = gate_checks(conn, [baseline_row["id"]], qrels_row["id"]).get(baseline_row["id"])
        if check is not None:
            reference |= reference_evaluations(conn, check, labels)
    pairs = {row["label"]: (int(row["evaluation_id"]), reference[row["label"]]) for row in ours}
    return input_changes(store, pairs)


def _one_run(rows: list[dict[str, Any]], given: Any) -> dict[str, Any]:
    if len(rows) != 1:
        raise InputError(
            f"{given!r} stands for {len(rows)} runs",
            hint="name one stored run (a file with several run tags holds several runs)",
        )
    return rows[0]
