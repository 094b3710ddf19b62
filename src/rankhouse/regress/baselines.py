"""Which run a gate weighs the run under test against, when it is named by a rule.

* ``previous``: the latest run of the same system tag ingested before the run.
* ``last-passed``: the newest of those earlier runs whose gate passed (its newest check
  against the same qrels set, else its newest check; a first run passed as such counts):
  a night that failed is never the yardstick of the next. Runs never gated are skipped,
  unless no earlier run of the system was ever gated (a series that starts gating now):
  then every earlier run counts, and ``last-passed`` is ``previous``.
* ``best``: among the same passed runs, the one with the highest mean of the first gated
  measure on the gate's qrels set (ties: the newest), chosen among the runs judged on the
  run's own inputs when there are any (:mod:`rankhouse.regress.inputs`).

Copies of run files kept by ``trec-eval`` are never a baseline: they are not runs of the
series. Whatever the rule, the gate then checks that the baseline was judged on the run's
inputs (``regress``).
"""

from __future__ import annotations

from typing import Any

from ..backends.base import store_of
from ..catalog import TREC_EVAL_COPY, get_run
from ..errors import Message, NotFoundError, Option
from ..evaluation import evaluate
from ..words import count
from .inputs import gate_checks, reference_evaluations, signatures

PREVIOUS = "previous"
"""The latest earlier run of the same system tag."""

LAST_PASSED = "last-passed"
"""The newest earlier run of the same system tag whose gate passed."""

BEST = "best"
"""The earlier passed run of the same system tag with the highest mean of the first measure."""

BASELINE_RULES = (PREVIOUS, LAST_PASSED, BEST)
"""The baselines named by a rule rather than a run."""


class NoBaselineError(NotFoundError):
    """The rule names no run: the run is the first of its system."""


class NoPassedRunError(NotFoundError):
    """``last-passed`` or ``best``: earlier runs of the system exist, none passed its gate."""


_EARLIER = (
    "SELECT id FROM runs WHERE system_tag = :tag AND id <> :id "
    "AND (ingested_at < :at OR (ingested_at = :at AND id < :id)) "
    "AND parse_options <> :trec_eval_copy "
    "ORDER BY ingested_at DESC, id DESC"
)


def earlier_runs(wh, run_row: dict[str, Any]) -> list[int]:
    """The ids of the runs of ``run_row``'s system tag ingested before it, newest first."""
    with store_of(wh).connect() as conn:
        return [int(row[0]) for row in conn.execute(_EARLIER, _params(run_row)).all()]


def previous_run(wh, run_row: dict[str, Any]) -> dict[str, Any]:
    """The latest run of ``run_row``'s system tag ingested before it (ties: lower id).

    Raises:
        NoBaselineError: there is none.
    """
    found = earlier_runs(wh, run_row)
    if not found:
        raise _first(run_row)
    return get_run(wh, found[0])


def passed_runs(wh, run_row: dict[str, Any], qrels_id: int) -> list[tuple[int, Any]]:
    """The earlier runs of the system whose gate passed, newest first, with that check;
    when none of them was ever gated (a series that starts gating now), all of them, each
    with None.

    Raises:
        NoBaselineError: the run is the first of its system.
        NoPassedRunError: earlier runs were gated, and none passed.
    """
    earlier = earlier_runs(wh, run_row)
    if not earlier:
        raise _first(run_row)
    with store_of(wh).connect() as conn:
        checks = gate_checks(conn, earlier, qrels_id)
    if not checks:  # a series that starts gating now: no gate failed, every run counts
        return [(i, None) for i in earlier]
    found = [(i, checks[i]) for i in earlier if i in checks and checks[i].passed]
    if not found:
        raise NoPassedRunError(
            f"no earlier run of system {run_row['system_tag']!r} passed its gate "
            f"({count(len(earlier), 'earlier run')}): there is no baseline to gate "
            f"{run_row['name']!r} against; name a baseline run"
        )
    return found


def last_passed_run(wh, run_row: dict[str, Any], qrels_id: int) -> dict[str, Any]:
    """The newest earlier run of the system whose gate passed.

    Raises:
        NoBaselineError: the run is the first of its system.
        NoPassedRunError: no earlier run passed its gate.
    """
    return get_run(wh, passed_runs(wh, run_row, qrels_id)[0][0])


def best_run(
    wh,
    run_row: dict[str, Any],
    qrels_row: dict[str, Any],
    measure: Any,
    settings: tuple[dict[str, Any], str | None],
    computed: list[int],
) -> dict[str, Any]:
    """The earlier passed run with the highest mean of ``measure`` on ``qrels_row`` (ties:
    the newest), among those judged on the run's inputs when any is.

    ``settings``: evaluate's options and the signature of the run's evaluation of
    ``measure``; the evaluations this computes are noted in ``computed``.

    Raises:
        NoBaselineError: the run is the first of its system.
        NoPassedRunError: no earlier run passed its gate.
    """
    found = passed_runs(wh, run_row, qrels_row["id"])
    options, run_signature = settings
    store = store_of(wh)
    result = evaluate(store, qrels_row["id"], [run_id for run_id, _ in found], [measure], **options)
    computed += [int(row["evaluation_id"]) for row in result.rows if not row["reused"]]
    means = {row["run_id"]: row["value"] for row in result.rows}
    label = result.rows[0]["label"]
    with store.connect() as conn:
        references = {row["run_id"]: int(row["evaluation_id"]) for row in result.rows}
        for run_id, check in found:
            judged = None if check is None else reference_evaluations(conn, check, [label])
            references[run_id] = (judged or {}).get(label, references[run_id])
        rows = signatures(conn, references.values())
    same = [
        run_id
        for run_id, _ in found
        if run_signature is not None
        and references[run_id] in rows
        and rows[references[run_id]]["input_signature"] == run_signature
    ]
    chosen = same or [run_id for run_id, _ in found]
    # newest first: max keeps the first of equal means
    best = max(chosen, key=lambda run_id: (_number(means.get(run_id)), -chosen.index(run_id)))
    return get_run(wh, best)


def _number(value: Any) -> float:
    return float("-inf") if value is None or value != value else float(value)


def _params(run_row: dict[str, Any]) -> dict[str, Any]:
    return {
        "tag": run_row["system_tag"],
        "id": run_row["id"],
        "at": run_row["ingested_at"],
        "trec_eval_copy": TREC_EVAL_COPY,
    }


def _first(run_row: dict[str, Any]) -> NoBaselineError:
    return NoBaselineError(
        Message(
            f"run {run_row['name']!r} is the first of system {run_row['system_tag']!r}: "
            "there is no previous run to compare with; name a baseline run, or pass ",
            Option("allow_missing_baseline", True, cli_value=""),
            " to let the first run of a series pass",
        )
    )
