"""The regression gate: is the run no worse than its baseline? The verb (:func:`regress`), its
steps in order, and its result (:class:`RegressResult`, whose ``outcome`` is the CLI's exit
code).

What the gate is asked travels as one object (:class:`~rankhouse.regress.options.GateOptions`,
checked before any work). Each gated measure is judged in the gate's mode
(:mod:`rankhouse.regress.verdicts`): ``non_inferiority`` (the default) passes a measure shown
no worse than the baseline by more than its margin (``non_inferior``), and fails it as
``regressed`` (the evidence shows a drop) or ``not_shown`` (the queries cannot tell);
``significance`` fails it when the mean moves to the worse side by more than the tolerance and
the change is significant. Margins not given are calibrated from the system's own nightly
noise for a false-alarm target of the whole check (:mod:`rankhouse.regress.verdicts` too).
Order-drift bounds (:mod:`rankhouse.regress.options`) fail the gate when the run reorders
the baseline's rankings too much. The baseline is a run, or a rule
(:mod:`rankhouse.regress.baselines`: ``previous``, ``last-passed``, ``best``,
``reference``); a baseline judged on other inputs than the run is evaluated on stops the gate
(:mod:`rankhouse.regress.baselines` too). Every check is stored (tables ``regress_checks``,
``regress_verdicts`` and ``regress_drift``: :mod:`rankhouse.regress.files`) so that
``history`` shows the verdicts and ``last-passed`` finds the runs that passed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..backends.base import store_of
from ..catalog import removed_on_failure
from ..columns import VERDICT_COLUMNS, VERDICT_NUMBERS  # noqa: F401 (the verdicts' columns)
from ..errors import InputError, NotFoundError
from ..evaluation import evaluate, resolve_qrels, resolve_runs
from ..judgments.holes import holes_rows, holes_warnings
from ..lazy import pandas as pd
from ..present import HtmlTable, verdicts_html
from .baselines import (
    BASELINE_RULES,
    BEST,
    LAST_PASSED,
    PREVIOUS,
    REFERENCE,
    NoBaselineError,
    best_run,
    current_reference,
    first_notes,
    gate_checks,
    input_changes,
    last_passed_run,
    nearest_systems,
    new_system_error,
    previous_run,
    reference_evaluations,
    reference_pool,
    reference_row,
    reference_run,
    refuse_input_change,
    signatures,
)
from .files import computed_ids, forgotten_on_failure, meaning_lines, outcome_line, store_check
from .options import (
    DRIFT_GATE_COLUMNS,
    GateOptions,
    check_options,
    drift_bounds,
    drift_checks,
    gated_measures,
)
from .verdicts import MIN_NIGHTS, TONIGHT, measure_verdicts, nightly_spread

STATUSES = (
    "regressed",
    "not_shown",
    "non_inferior",
    "not_significant",
    "within_tolerance",
    "unchanged",
    "improved",
)
"""A measure's status: ``regressed`` fails the gate (the evidence shows a drop);
``not_shown`` (the queries cannot rule out a drop beyond the margin) fails it when the margin
was given and passes it, said so, when the margin was calibrated (``not_shown='auto'``; or
``'fail'``, ``'pass'``); ``non_inferior`` passes it in the non-inferiority mode, the others in the
significance mode."""

OUTCOMES = ("passed", "regressed", "not_shown", "first", "unsettled")
"""A check's outcome: ``passed``; ``regressed`` (a measure regressed or a drift bound
failed); ``not_shown`` (only measures not shown non-inferior failed it); ``first`` (the first
run of its system, passed with nothing to compare); ``unsettled`` (every measure that failed
did so where the run's top ranks are much less judged than the baseline's, while its
condensed, judged-only value drops by no more than the measure's margin: holes in the
judgments, :func:`~rankhouse.judgments.holes.within_margin`; exit 3 as for an undecided
check)."""

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
            :data:`~rankhouse.regress.options.DRIFT_GATE_COLUMNS`.
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
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    system: str | None = None
    holes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def headline(self) -> str:
        """The outcome in one line, as ``rankhouse regress`` prints it last (``PASS: ...``,
        ``FAIL: ...``); the Markdown, JUnit and notebook views say the same."""
        if self.outcome == "unsettled":
            names = ", ".join(row["measure"] for row in self.holes if row["fails"])
            return (
                f"UNSETTLED: holes in the judgments: {names} of {self.run} failed where its top "
                f"ranks are much less judged than {self.baseline}'s, and on its judged "
                "documents alone it drops no more than its margin; judge the unjudged "
                "documents (--pool-out) before calling it regressed"
            )
        return outcome_line(self)

    @property
    def meaning(self) -> list[str]:
        """What the check's configuration means, one line per measure and one for the check:
        each margin, where it came from, how often it fails an unchanged night, and the drop
        it catches on the first night with probability 0.8."""
        return meaning_lines(self)

    @property
    def outcome(self) -> str:
        """One of :data:`OUTCOMES`."""
        if self.baseline is None:
            return "first"
        if self.passed:
            return "passed"
        failing = [row for row in self.holes if row["fails"]]
        if failing and all(row["unsettled"] for row in failing) and not self.drifted:
            return "unsettled"
        if self.regressed or self.drifted:
            return "regressed"
        return "not_shown"

    @property
    def not_shown(self) -> list[str]:
        """Names of the measures not shown non-inferior (whether they fail the check follows
        ``not_shown``)."""
        return [
            str(row["measure"]) for row in self.verdict_rows if row.get("status") == "not_shown"
        ]

    @property
    def calibrating(self) -> bool:
        """Whether some margin came from tonight's queries (too little history yet)."""
        return any(row.get("margin_source") == TONIGHT for row in self.verdict_rows)

    @property
    def expected_false_alarm(self) -> float:
        """The expected share of unchanged nights this check fails: at most the sum of its
        measures' (NaN when no measure has one)."""
        shares = [
            float(row["false_alarm"])
            for row in self.verdict_rows
            if row.get("false_alarm") is not None and not math.isnan(row["false_alarm"])
        ]
        return min(1.0, sum(shares)) if shares else math.nan

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
        """Names of the measures whose status is ``regressed`` (the evidence shows a drop)."""
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
    qrels: Any,
    measures: Iterable[Any],
    options: GateOptions | None = None,
    **given: Any,
) -> RegressResult:
    """Gate ``run`` against its baseline and store the verdict.

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        run: the run under test: a stored name or id, or a file (ingested; one run tag).
        qrels: the qrels set (name, id or file).
        measures: measure names (any accepted spelling), each with an optional margin after
            a colon: ``'nDCG@10:0.01'`` (the measure's units), ``'AP:2%'`` (of the
            reference's mean).
        options: the settings (:class:`~rankhouse.regress.options.GateOptions`: the
            baseline, the mode, the margins, the tests...); settings given as keywords
            replace its fields.

    Returns:
        A :class:`RegressResult`; ``passed`` is False when any measure fails (regressed, or
        not shown, as ``not_shown`` says) or any drift bound failed.

    Raises:
        NoBaselineError: a rule, the run is the first of its system and
            ``allow_missing_baseline`` is false.
        NoPassedRunError: ``'last-passed'`` or ``'best'`` and no earlier run passed.
        InputChangeError: the baseline was judged on other inputs (and not
            ``allow_input_change``).
        InputError: ``run`` or ``baseline`` stands for several runs; a negative margin;
            an unknown mode; a malformed drift bound.
        NotFoundError, MeasureError, RankhouseError: unknown names or options.
    """
    options = replace(options or GateOptions(), **given)
    store = store_of(wh)
    check_options(options)
    gated = gated_measures(measures, options.max_drop, options.relative)
    bounds = drift_bounds(options.max_drift)
    baseline = options.baseline
    rule = baseline if isinstance(baseline, str) and baseline in BASELINE_RULES else None
    scoring = {
        "relevance_level": options.relevance_level,
        "missing_queries": options.missing_queries,
    }
    # a gate that fails removes the files it ingested: it leaves the warehouse as it found it
    # and so does one that stops before its verdict: what it computed is removed too
    with removed_on_failure(store) as ingested, forgotten_on_failure(store) as computed:
        run_row = _one_run(resolve_runs(store, run, ingested=ingested), run)
        qrels_row = resolve_qrels(store, qrels, ingested=ingested)
        ours = evaluate(store, qrels_row["id"], [run_row["id"]], gated.texts, **scoring).rows
        computed += computed_ids(ours)
        notes: list[str] = []
        pin = None
        try:
            if rule == REFERENCE:
                baseline_row, pin = reference_run(store, run_row, qrels_row["id"])
                if pin is not None:
                    notes.append(f"reference of {run_row['system_tag']!r} pinned: {pin['reason']}")
            else:
                baseline_row = _baseline(
                    store, run_row, qrels_row, (baseline, rule, ingested), ours, scoring, computed
                )
        except NoBaselineError as exc:
            renamed = options.new_system == "fail" and nearest_systems(store, run_row)
            if not options.allow_missing_baseline or renamed:
                raise new_system_error(store, run_row, exc, bool(renamed)) from None
            baseline_row = None
            notes += first_notes(store, run_row)
            if rule == REFERENCE:
                pin = reference_row(
                    run_row,
                    qrels_row["id"],
                    f"the first night of system {run_row['system_tag']!r}",
                )
                notes.append(f"{run_row['name']} is the reference of {run_row['system_tag']!r}")
        if (
            isinstance(run, str)
            and run not in (run_row["name"], str(run_row["id"]))
            and not _is_file(run)
        ):
            notes.append(f"{run} is run {run_row['name']} (the same content, stored before)")
        if baseline_row is not None and baseline_row["id"] == run_row["id"]:
            if rule != REFERENCE:
                raise InputError(f"run {run_row['name']!r} cannot be its own baseline")
            notes.append(f"{run_row['name']} is the reference itself (the same content)")
        settings = {
            "mode": options.mode,
            "level": options.level,
            "test": options.test,
            "correction": options.correction,
            "alpha": options.alpha,
            "max_drop": options.max_drop,
            "relative": options.relative,
            "false_alarm": options.false_alarm,
            "not_shown": options.not_shown,
            "permutations": options.permutations,
            "seed": options.seed,
            **scoring,
            "baseline_rule": rule,
            "margins": {n: s.text for n, s in gated.margins.items()},
        }
        verdicts, drift, change = [], [], None
        if baseline_row is not None:  # else the first run of its series: nothing to compare
            theirs = evaluate(
                store, qrels_row["id"], [baseline_row["id"]], gated.texts, **scoring
            ).rows
            computed += computed_ids(theirs)
            change = _input_change(store, baseline_row, qrels_row, ours, theirs)
            if change and not options.allow_input_change:
                raise refuse_input_change(baseline_row["name"], change)
            history = (
                _history(store, run_row, qrels_row["id"], ours)
                if options.mode == "non_inferiority"
                else None
            )
            means = _reference_means(
                store, run_row, qrels_row, baseline_row, gated, (ours, theirs), scoring, computed
            )
            pool = None
            if rule == REFERENCE:
                pool, note = _pool(
                    store, baseline_row, run_row, qrels_row, gated, scoring, computed
                )
                notes += note
                if pool:
                    first = next(iter(pool.values()))
                    settings["reference_pool"] = [
                        _run_name(store, int(row["run_id"])) for row in first
                    ]
            verdicts, warnings = _verdicts(
                store,
                ours + theirs,
                run_row["id"],
                baseline_row["id"],
                gated,
                settings,
                history,
                means,
                pool,
            )
            drift = drift_checks(store, run_row["id"], baseline_row["id"], bounds)
            names = {row["label"]: row["measure"] for row in ours}
            gated_rows = []  # each measure with its verdict and the margin it was held to
            for row in verdicts:
                label = str(row["measure"])
                held = (row["fails"], float(row["margin"]))
                gated_rows.append((label, names.get(label, label), *held))
            runs = (int(run_row["id"]), int(baseline_row["id"]))
            drop = options.max_judged_drop
            holes = holes_rows(store, qrels_row["id"], runs, gated_rows, scoring, drop)
            warnings += holes_warnings(holes, drop)
            same = baseline_row["id"] == run_row["id"]
            if not same and any(row["margin_source"] == TONIGHT for row in verdicts):
                notes += _calibrating_notes(run_row, qrels_row, history or {})
        else:
            warnings, holes = [], []
        passed = not any(row["fails"] for row in verdicts) and all(row["passed"] for row in drift)
        text = " / ".join(change) if change else None
        check_id = store_check(
            store, run_row, baseline_row, baseline, qrels_row, settings, (verdicts, drift),
            passed, text, pin,
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
            warnings=warnings,
            notes=notes,
            system=run_row["system_tag"],
            holes=holes,
        )


def _is_file(given: str) -> bool:
    return os.path.isfile(given)


def _history(store, run_row, qrels_id: int, ours) -> dict[str, Any]:
    """Each gated label's nightly spread from the system's history (on tonight's inputs)."""
    labels = [row["label"] for row in ours]
    with store.connect() as conn:
        signed = signatures(conn, [int(row["evaluation_id"]) for row in ours])
    by_label = {
        row["label"]: signed.get(int(row["evaluation_id"]), {}).get("input_signature")
        for row in ours
    }
    return nightly_spread(store, run_row, qrels_id, labels, by_label)


def _pool(store, reference, run_row, qrels_row, gated, options, computed):
    """Each label's evaluate rows of the reference pool, and a note naming the pool."""
    members = reference_pool(store, reference, run_row, qrels_row["id"])
    if len(members) < 2:
        return None, []
    ids = [int(m["id"]) for m in members]
    result = evaluate(store, qrels_row["id"], ids, gated.texts, **options)
    computed += computed_ids(result.rows)
    pool: dict[str, list[dict[str, Any]]] = {}
    for run_id in ids:  # the reference first, then the nights in order
        for row in result.rows:
            if int(row["run_id"]) == run_id:
                pool.setdefault(row["label"], []).append(row)
    names = ", ".join(m["name"] for m in members[1:])
    return pool, [
        f"the reference is {reference['name']} pooled with the {len(members) - 1} "
        f"night{'s' if len(members) > 2 else ''} that passed against it first ({names}): "
        "per-query means"
    ]


def _run_name(store, run_id: int) -> str:
    with store.connect() as conn:
        return str(conn.execute("SELECT name FROM runs WHERE id = :id", {"id": run_id}).scalar())


def _calibrating_notes(run_row, qrels_row, history) -> list[str]:
    """'calibrating: k of 5 nightly differences' while a calibrated measure lacks history."""
    have = min((0 if spread is None else spread.nights for spread in history.values()), default=0)
    return [
        f"calibrating: {have} of {MIN_NIGHTS} nightly differences of system "
        f"{run_row['system_tag']!r} on {qrels_row['name']!r} stored; until then each margin "
        "comes from tonight's queries (a one-sided t-test of a drop at the measure's share of "
        "the false-alarm target)"
    ]


def _reference_means(store, run_row, qrels_row, baseline_row, gated, evaluated, options, computed):
    """Each label's mean on the system's reference, the base of percent margins: the
    baseline's when it is the reference or the system has none (None then)."""
    ours, theirs = evaluated
    relative = any(
        setting is not None and setting.relative
        for setting in [gated.default, *gated.margins.values()]
    )
    if not relative:
        return None
    pinned = current_reference(store, run_row["system_tag"], qrels_row["id"])
    if pinned is None or int(pinned["run_id"]) == int(baseline_row["id"]):
        return None
    try:
        result = evaluate(store, qrels_row["id"], [int(pinned["run_id"])], gated.texts, **options)
    except NotFoundError:  # the reference was removed: the baseline's mean
        return None
    computed += computed_ids(result.rows)
    return {row["label"]: float(row["value"]) for row in result.rows}


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
