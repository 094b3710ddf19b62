"""The regression gate: does a run score significantly worse than its baseline?

A measure *regresses* when its mean drops by more than the tolerance (``max_drop``, absolute
or relative to the baseline's mean) **and** the drop is significant (corrected p-value at
most ``alpha``). Improvements never fail the gate. Every measure here is "higher is better",
as all of trec_eval's effectiveness measures are. Every check is stored (tables
``regress_checks`` and ``regress_verdicts``) so that ``history`` shows the verdicts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .backends.base import store_of
from .catalog import TREC_EVAL_COPY, get_run, removed_on_failure
from .columns import VERDICT_COLUMNS, VERDICT_NUMBERS  # noqa: F401 (the verdicts' columns)
from .display.tables import HtmlTable
from .display.verdicts import verdicts_html
from .errors import InputError, Message, NotFoundError, Option
from .evaluation import evaluate, resolve_qrels, resolve_runs
from .lazy import pandas as pd
from .pairing import compare_pair
from .stats import (
    DEFAULT_PERMUTATIONS,
    DEFAULT_SEED,
    check_alpha,
    check_correction,
    check_resampling,
    check_test,
    correct,
)

PREVIOUS = "previous"
"""The baseline spelling that means the latest earlier run of the same system tag."""

STATUSES = ("regressed", "not_significant", "within_tolerance", "unchanged", "improved")


class NoBaselineError(NotFoundError):
    """``previous`` was asked for but the run is the first of its system."""


@dataclass
class RegressResult:
    """The outcome of one :func:`regress` check.

    Attributes:
        check_id: ``regress_checks.id`` of the stored check.
        run: the run's name.
        baseline: the baseline run's name; None for the first run of a series passed with
            ``allow_missing_baseline`` (``verdicts`` is then empty).
        qrels: the qrels set's name.
        passed: no measure regressed.
        verdict_rows: one dict per measure, keys :data:`VERDICT_COLUMNS` (plain values).
        settings: test, correction, alpha, max_drop, relative, permutations, seed.
    """

    check_id: int
    run: str
    baseline: str | None
    qrels: str
    passed: bool
    verdict_rows: list[dict[str, Any]]
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def verdicts(self) -> pd.DataFrame:
        """One row per measure, columns :data:`VERDICT_COLUMNS` (a DataFrame)."""
        if not self.verdict_rows:
            return pd.DataFrame(columns=list(VERDICT_COLUMNS))
        return pd.DataFrame(self.verdict_rows, columns=list(VERDICT_COLUMNS))

    @property
    def regressed(self) -> list[str]:
        """Names of the measures that regressed."""
        return [str(row["measure"]) for row in self.verdict_rows if row["regressed"]]

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
    max_drop: float = 0.01,
    relative: bool = False,
    alpha: float = 0.05,
    test: str = "t",
    correction: str = "none",
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    allow_missing_baseline: bool = False,
) -> RegressResult:
    """Gate ``run`` against ``baseline`` and store the verdict.

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        run: the run under test: a stored name or id, or a file (ingested; one run tag).
        baseline: a run (name, id or file), or ``'previous'``: the latest run of the same
            system tag ingested before ``run``.
        qrels: the qrels set (name, id or file).
        measures: measure names (any accepted spelling).
        max_drop: the tolerated drop of a mean (absolute, or a fraction with ``relative``).
        relative: read ``max_drop`` as a fraction of the baseline's mean.
        alpha: significance level of the (corrected) p-values.
        test: the paired test (see :mod:`rankhouse.stats`).
        correction: correction over the measures of this check.
        permutations: resamples of the randomization and bootstrap tests.
        seed: seed of the randomization and bootstrap tests.
        relevance_level: as for evaluate.
        missing_queries: as for evaluate.
        allow_missing_baseline: with ``baseline='previous'``, pass the first run of a
            system (evaluated and stored as a check without a baseline: ``history`` shows
            its gate as ``first run``) instead of raising NoBaselineError.

    Returns:
        A :class:`RegressResult`; ``passed`` is False when any measure regressed.

    Raises:
        NoBaselineError: ``baseline='previous'``, no earlier run of the system exists and
            ``allow_missing_baseline`` is false.
        InputError: ``run`` or ``baseline`` stands for several runs; a negative ``max_drop``.
        NotFoundError, MeasureError, RankhouseError: unknown names or options.
    """
    store = store_of(wh)
    check_test(test)
    check_correction(correction)
    check_alpha(alpha)
    check_resampling(permutations, seed)
    if not max_drop >= 0:
        raise InputError(f"max_drop must be zero or positive, got {max_drop}", field="max_drop")
    # a gate that fails removes the files it ingested: it leaves the warehouse as it found it
    with removed_on_failure(store) as ingested:
        run_row = _one_run(resolve_runs(store, run, ingested=ingested), run)
        try:
            baseline_row = (
                previous_run(store, run_row)
                if isinstance(baseline, str) and baseline == PREVIOUS
                else _one_run(resolve_runs(store, baseline, ingested=ingested), baseline)
            )
        except NoBaselineError:
            if not allow_missing_baseline:
                raise
            baseline_row = None
        qrels_row = resolve_qrels(store, qrels, ingested=ingested)
        options = {"relevance_level": relevance_level, "missing_queries": missing_queries}
        compared = [run_row["id"]] if baseline_row is None else [baseline_row["id"], run_row["id"]]
        aggregates = evaluate(store, qrels_row["id"], compared, measures, **options).rows
        settings = {
            "test": test,
            "correction": correction,
            "alpha": alpha,
            "max_drop": max_drop,
            "relative": relative,
            "permutations": permutations,
            "seed": seed,
            **options,
        }
        if baseline_row is None:  # the first run of its series: nothing to compare with
            verdicts = []
        else:
            verdicts = _verdicts(store, aggregates, run_row["id"], baseline_row["id"], settings)
        passed = not any(row["regressed"] for row in verdicts)
        check_id = _store(
            store, run_row, baseline_row, baseline, qrels_row, settings, verdicts, passed
        )
        return RegressResult(
            check_id=check_id,
            run=run_row["name"],
            baseline=None if baseline_row is None else baseline_row["name"],
            qrels=qrels_row["name"],
            passed=passed,
            verdict_rows=verdicts,
            settings=settings,
        )


def remove_check(wh, check_id: int) -> None:
    """Delete a stored check and its verdicts (``regress`` removes its own check when its
    report file cannot be written: history never shows a gate whose report CI lacked)."""
    with store_of(wh).transaction() as conn:
        conn.execute("DELETE FROM regress_verdicts WHERE check_id = :id", {"id": int(check_id)})
        conn.execute("DELETE FROM regress_checks WHERE id = :id", {"id": int(check_id)})


def previous_run(wh, run_row: dict[str, Any]) -> dict[str, Any]:
    """The latest run of ``run_row``'s system tag ingested before it (ties: lower id).

    Copies of run files kept by ``trec-eval`` (parse options ``{"format": "trec_eval"}``)
    are never a ``previous`` baseline: they are not runs of the series.

    Raises:
        NoBaselineError: there is none.
    """
    with store_of(wh).connect() as conn:
        found = conn.execute(
            (
                "SELECT id FROM runs WHERE system_tag = :tag AND id <> :id "
                "AND (ingested_at < :at OR (ingested_at = :at AND id < :id)) "
                "AND parse_options <> :trec_eval_copy "
                "ORDER BY ingested_at DESC, id DESC LIMIT 1"
            ),
            {
                "tag": run_row["system_tag"],
                "id": run_row["id"],
                "at": run_row["ingested_at"],
                "trec_eval_copy": TREC_EVAL_COPY,
            },
        ).scalar()
    if found is None:
        raise NoBaselineError(
            Message(
                f"run {run_row['name']!r} is the first of system {run_row['system_tag']!r}: "
                "there is no previous run to compare with; name a baseline run, or pass ",
                Option("allow_missing_baseline", True, cli_value=""),
                " to let the first run of a series pass",
            )
        )
    return get_run(wh, int(found))


def _one_run(rows: list[dict[str, Any]], given: Any) -> dict[str, Any]:
    if len(rows) != 1:
        raise InputError(
            f"{given!r} stands for {len(rows)} runs",
            hint="name one stored run (a file with several run tags holds several runs)",
        )
    return rows[0]


def _verdicts(
    store, aggregates: list[dict[str, Any]], run_id: int, baseline_id: int, settings: dict[str, Any]
) -> list[dict[str, Any]]:
    # verdicts are about labels: AP gated at level 2 is AP(rel=2)
    by_run: dict[int, dict[str, dict[str, Any]]] = {}
    for row in aggregates:
        by_run.setdefault(row["run_id"], {})[row["label"]] = row
    ours, theirs = by_run[run_id], by_run.get(baseline_id, by_run[run_id])
    rows = []
    for measure in dict.fromkeys(row["label"] for row in aggregates):
        run_value = float(ours[measure]["value"])
        baseline_value = float(theirs[measure]["value"])
        paired = compare_pair(
            store,
            ours[measure]["evaluation_id"],
            theirs[measure]["evaluation_id"],
            test=settings["test"],
            permutations=settings["permutations"],
            seed=settings["seed"],
        )
        delta = run_value - baseline_value
        rows.append(
            {
                "measure": measure,
                "baseline_value": baseline_value,
                "run_value": run_value,
                "delta": delta,
                "drop": _drop(delta, baseline_value, settings["relative"]),
                "tolerance": float(settings["max_drop"]),
                "num_q": paired.num_paired,
                "improved": paired.improved,
                "degraded": paired.degraded,
                "p_value": paired.p_value,
                "run_evaluation_id": int(ours[measure]["evaluation_id"]),
                "baseline_evaluation_id": int(theirs[measure]["evaluation_id"]),
            }
        )
    corrected, reject = correct(
        [row["p_value"] for row in rows], settings["correction"], alpha=settings["alpha"]
    )
    for row, p_corrected, significant in zip(rows, corrected, reject, strict=True):
        row["p_corrected"] = p_corrected
        row["significant"] = significant
        row["status"] = _status(row["delta"], row["drop"], row["tolerance"], significant)
        row["regressed"] = row["status"] == "regressed"
    return [{name: row[name] for name in VERDICT_COLUMNS} for row in rows]


def _drop(delta: float, baseline_value: float, relative: bool) -> float:
    """How much worse the run is (positive = worse), absolute or relative to the baseline."""
    drop = -delta
    if not relative or math.isnan(drop):
        return drop
    if baseline_value == 0:
        return 0.0 if drop <= 0 else math.inf
    return drop / abs(baseline_value)


def _status(delta: float, drop: float, tolerance: float, significant: bool) -> str:
    if math.isnan(delta) or delta == 0:
        return "unchanged"
    if delta > 0:
        return "improved"
    if drop <= tolerance:
        return "within_tolerance"
    return "regressed" if significant else "not_significant"


def _store(
    store,
    run_row: dict[str, Any],
    baseline_row: dict[str, Any] | None,
    baseline_spec: Any,
    qrels_row: dict[str, Any],
    settings: dict[str, Any],
    verdicts: list[dict[str, Any]],
    passed: bool,
) -> int:
    spec = baseline_spec if isinstance(baseline_spec, str | int) else "dataframe"
    extra = {
        k: v
        for k, v in settings.items()
        if k not in ("test", "correction", "alpha", "max_drop", "relative")
    }
    with store.transaction() as conn:
        check_id = conn.execute(
            (
                "INSERT INTO regress_checks (run_id, baseline_run_id, baseline_spec, qrels_id, "
                "test, correction, alpha, max_drop, relative, options, passed, created_at, "
                "baseline_name) VALUES (:run_id, :baseline_id, :spec, :qrels_id, :test, "
                ":correction, :alpha, :max_drop, :relative, :options, :passed, :created_at, "
                ":baseline_name) RETURNING id"
            ),
            {
                "run_id": int(run_row["id"]),
                "baseline_id": None if baseline_row is None else int(baseline_row["id"]),
                "baseline_name": None if baseline_row is None else baseline_row["name"],
                "spec": str(spec),
                "qrels_id": int(qrels_row["id"]),
                "test": settings["test"],
                "correction": settings["correction"],
                "alpha": float(settings["alpha"]),
                "max_drop": float(settings["max_drop"]),
                "relative": bool(settings["relative"]),
                "options": json.dumps(extra, sort_keys=True),
                "passed": bool(passed),
                "created_at": datetime.now(UTC).replace(tzinfo=None),
            },
        ).scalar_one()
        if not verdicts:
            return int(check_id)
        conn.execute(
            (
                "INSERT INTO regress_verdicts (check_id, measure, baseline_value, run_value, "
                "delta, num_q, improved, degraded, p_value, p_corrected, status, regressed, "
                "run_evaluation_id, baseline_evaluation_id) VALUES (:check_id, :measure, "
                ":baseline_value, :run_value, :delta, :num_q, :improved, :degraded, :p_value, "
                ":p_corrected, :status, :regressed, :run_evaluation_id, :baseline_evaluation_id)"
            ),
            [{"check_id": check_id, **row} for row in verdicts],
        )
    return int(check_id)
