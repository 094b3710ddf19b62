"""The gate's baseline: which run it weighs the run under test against, when a rule names
it, the system's pinned references, and whether the baseline was judged on the run's inputs.

* ``previous``: the latest run of the same system tag ingested before the run.
* ``last-passed``: the newest of those earlier runs whose gate passed (its newest check
  against the same qrels set, else its newest check; a first run passed as such counts):
  a night that failed is never the yardstick of the next. Runs never gated are skipped,
  unless no earlier run of the system was ever gated (a series that starts gating now):
  then every earlier run counts, and ``last-passed`` is ``previous``.
* ``best``: among the same passed runs, the one with the highest mean of the first gated
  measure on the gate's qrels set (ties: the newest), chosen among the runs judged on the
  run's own inputs when there are any (below).
* ``reference``: the run pinned as the system's reference on the gate's qrels set (table
  ``gate_references``): it stays the yardstick night after night, so a lasting drop keeps
  failing until someone accepts a new reference (:func:`accept_reference`, ``rankhouse gate
  accept``), and a slow creep fails once its total passes the margin. A system without one
  pins it the first time the gate asks: its newest earlier run whose gate passed (as
  ``last-passed`` finds it), or, for the first run of a system, the run itself.

``last-passed`` alone ratchets with a narrow margin (a night passes only by beating the
luckiest night so far) and ``previous`` takes a lasting drop as normal after one night: the
nightly recipe uses ``reference`` (docs/history.md).

Copies of run files kept by ``trec-eval`` are never a baseline: they are not runs of the
series. Whatever the rule, the gate then checks that the baseline was judged on the run's
inputs (``regress``).

**The inputs a baseline was judged on.** The run's side is its evaluation of each gated
measure now. The baseline's side is the evaluation its own gate judged (its newest check
against the same qrels set, else its newest check: the evaluation of that measure the check
weighed, or the one stored for it against the check's qrels set); a baseline never gated has
the evaluation the gate makes of it now. Two evaluations are on the same inputs when their
input signatures (:mod:`rankhouse.evaluation.stored`) are equal; an unknown signature
equals none (:func:`input_changes`).
"""

from __future__ import annotations

import difflib
import getpass
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from ..backends.base import store_of
from ..catalog import TREC_EVAL_COPY, get_run
from ..defaults import DEFAULT_GATE_BASELINE
from ..errors import InputError, Message, NotFoundError, Option, count
from ..evaluation import evaluate, resolve_qrels, resolve_runs

PREVIOUS = DEFAULT_GATE_BASELINE
"""The latest earlier run of the same system tag."""

LAST_PASSED = "last-passed"
"""The newest earlier run of the same system tag whose gate passed."""

BEST = "best"
"""The earlier passed run of the same system tag with the highest mean of the first measure."""

REFERENCE = "reference"
"""The run pinned as the system's reference on the gate's qrels set."""

BASELINE_RULES = (PREVIOUS, LAST_PASSED, BEST, REFERENCE)
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


_REFERENCES = (
    "SELECT id, system_tag, qrels_id, run_id, run_name, reason, accepted_by, accepted_at "
    "FROM gate_references WHERE system_tag = :tag AND qrels_id = :qrels "
    "ORDER BY accepted_at DESC, id DESC"
)


def reference_history(wh, system_tag: str, qrels_id: int) -> list[dict[str, Any]]:
    """Every reference accepted for the system on the qrels set, newest (the current) first."""
    with store_of(wh).connect() as conn:
        rows = conn.execute(_REFERENCES, {"tag": system_tag, "qrels": int(qrels_id)}).mappings()
        return [dict(row) for row in rows]


def current_reference(wh, system_tag: str, qrels_id: int) -> dict[str, Any] | None:
    """The system's reference on the qrels set (its ``gate_references`` row), or None."""
    history = reference_history(wh, system_tag, qrels_id)
    return history[0] if history else None


def reference_run(
    wh, run_row: dict[str, Any], qrels_id: int
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The run's reference, and the row to pin when the system has none yet (None when it
    has one).

    Raises:
        NoBaselineError: the run is the first of its system (the gate may pin it itself).
        NoPassedRunError: earlier runs were gated, and none passed.
        NotFoundError: the reference run was removed.
    """
    pinned = current_reference(wh, run_row["system_tag"], qrels_id)
    if pinned is not None:
        try:
            return get_run(wh, int(pinned["run_id"])), None
        except NotFoundError:
            raise NotFoundError(
                f"the reference of system {run_row['system_tag']!r}, run "
                f"{pinned['run_name']!r}, was removed: accept another run as the reference "
                "(rankhouse gate accept RUN --qrels QRELS --reason '...')"
            ) from None
    chosen = get_run(wh, passed_runs(wh, run_row, qrels_id)[0][0])
    return chosen, reference_row(
        chosen,
        qrels_id,
        f"pinned automatically: the newest earlier run of {run_row['system_tag']!r} whose gate "
        "passed, when the gate first weighed a night against the reference",
    )


POOL_NIGHTS = 5
"""The nights a reference pools: the accepted run and the first nights after it that passed
against it (per-query means)."""


_POOLED = """
    SELECT r.id FROM runs r
    JOIN regress_checks c ON c.run_id = r.id AND c.qrels_id = :qrels
    WHERE r.system_tag = :tag AND r.id NOT IN (:ref, :id)
      AND (r.ingested_at > :ref_at OR (r.ingested_at = :ref_at AND r.id > :ref))
      AND (r.ingested_at < :at OR (r.ingested_at = :at AND r.id < :id))
      AND r.parse_options <> :trec_eval_copy
      AND c.passed AND c.baseline_run_id = :ref
      AND NOT EXISTS (
          SELECT 1 FROM regress_checks e
          WHERE e.run_id = r.id AND e.qrels_id = :qrels
            AND (e.created_at < c.created_at OR (e.created_at = c.created_at AND e.id < c.id)))
    ORDER BY r.ingested_at, r.id
    LIMIT :nights
    """
"""The nights pooled with a reference: c is each night's first check against the qrels set
(no earlier one exists, as :func:`first_checks` chooses it), passed against the reference.
The database stops at the first few: a system's years of nights are never read into Python."""


def reference_pool(
    wh, reference: dict[str, Any], run_row: dict[str, Any], qrels_id: int
) -> list[dict[str, Any]]:
    """The reference and the nights pooled with it: the runs of its system ingested after it
    and before ``run_row`` whose gate against ``qrels_id`` passed with this reference as
    their baseline, the first :data:`POOL_NIGHTS` - 1 of them, oldest first. One noisy
    reference night would otherwise be the yardstick of every night after it: a lucky one
    makes the whole series fail often, an unlucky one hides drops."""
    with store_of(wh).connect() as conn:
        pooled = [
            int(row[0])
            for row in conn.execute(
                _POOLED,
                {
                    "tag": reference["system_tag"],
                    "ref": int(reference["id"]),
                    "ref_at": reference["ingested_at"],
                    "id": int(run_row["id"]),
                    "at": run_row["ingested_at"],
                    "trec_eval_copy": TREC_EVAL_COPY,
                    "qrels": int(qrels_id),
                    "nights": POOL_NIGHTS - 1,
                },
            ).all()
        ]
    return [reference, *(get_run(wh, run_id) for run_id in pooled)]


def reference_row(
    run_row: dict[str, Any], qrels_id: int, reason: str, by: str | None = None
) -> dict[str, Any]:
    """A ``gate_references`` row for ``run_row`` (not stored: :func:`store_reference`)."""
    return {
        "system_tag": run_row["system_tag"],
        "qrels_id": int(qrels_id),
        "run_id": int(run_row["id"]),
        "run_name": run_row["name"],
        "reason": reason,
        "accepted_by": by if by is not None else _login(),
        "accepted_at": datetime.now(UTC).replace(tzinfo=None),
    }


def store_reference(conn, row: dict[str, Any]) -> None:
    """Insert a ``gate_references`` row (the caller's transaction)."""
    conn.execute(
        "INSERT INTO gate_references (system_tag, qrels_id, run_id, run_name, reason, "
        "accepted_by, accepted_at) VALUES (:system_tag, :qrels_id, :run_id, :run_name, "
        ":reason, :accepted_by, :accepted_at)",
        row,
    )


def accept_reference(
    wh, run: Any, *, qrels: Any, reason: str, by: str | None = None
) -> dict[str, Any]:
    """Accept ``run`` as its system's reference on ``qrels`` from now on (the former
    references stay in ``gate_references`` as its history).

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        run: a stored run (name or id).
        qrels: the qrels set (name, id or file already stored).
        reason: why (kept with the reference; ``rankhouse gate status`` shows it).
        by: who accepts it (default: the login of this process).

    Returns:
        The stored ``gate_references`` row.

    Raises:
        InputError: an empty reason; a name that stands for several runs.
        NotFoundError: an unknown run or qrels set.
    """
    if not str(reason or "").strip():
        raise InputError(
            "a reference needs a reason",
            hint="say why the new level is right, e.g. --reason 'new tokenizer: -0.02 nDCG@10 "
            "accepted for +30% speed'",
        )
    store = store_of(wh)
    runs = resolve_runs(store, run)
    if len(runs) != 1:
        raise InputError(f"{run!r} stands for {len(runs)} runs", hint="name one stored run")
    qrels_row = resolve_qrels(store, qrels)
    row = reference_row(runs[0], int(qrels_row["id"]), str(reason).strip(), by)
    with store.transaction() as conn:
        store_reference(conn, row)
    return row


def _login() -> str | None:
    try:
        return getpass.getuser()
    except Exception:  # no login name (a container without a passwd entry)
        return None


def first_notes(store, run_row) -> list[str]:
    """A new system tag that no stored run has: a warning naming the nearest known one."""
    nearest = nearest_systems(store, run_row)
    if not nearest:
        return []
    return [
        f"warning: {run_row['system_tag']!r} is a new system: no earlier run has this tag; "
        f"the nearest known system is {nearest[0]!r} (a renamed run tag starts a new series "
        "with no baseline: rename the tag back, or accept the new series)"
    ]


def new_system_error(store, run_row, exc: NoBaselineError, stopped: bool) -> NoBaselineError:
    """The error of a first run of a system: naming the nearest known system when there is
    one; ``stopped``: ``new_system='fail'`` stopped it (the first run would else pass)."""
    nearest = nearest_systems(store, run_row)
    if not nearest:
        return exc
    tag = run_row["system_tag"]
    renamed = (
        f"{tag!r} is a new system: no earlier run has this tag; the nearest known system is "
        f"{nearest[0]!r} (was the run tag renamed?)"
    )
    if not stopped:
        return NoBaselineError(Message(renamed, "; ", exc.message))
    return NoBaselineError(
        Message(
            renamed,
            "; ",
            Option("new_system", "fail"),
            f" stops the gate on it: rename the tag back, or start the series {tag!r} on "
            "purpose by accepting this run as its reference (rankhouse gate accept RUN "
            "--qrels QRELS --reason '...')",
        )
    )


def nearest_systems(store, run_row) -> list[str]:
    with store.connect() as conn:
        tags = [
            str(row[0])
            for row in conn.execute(
                "SELECT DISTINCT system_tag FROM runs WHERE system_tag <> :tag "
                "AND parse_options <> :copy",
                {"tag": run_row["system_tag"], "copy": TREC_EVAL_COPY},
            ).all()
        ]
    if not tags:
        return []
    close = difflib.get_close_matches(run_row["system_tag"], tags, n=1, cutoff=0.5)
    if close:
        return close
    tag = run_row["system_tag"]
    return sorted(tags, key=lambda t: -difflib.SequenceMatcher(None, t, tag).ratio())[:1]


# --- the inputs a baseline was judged on ---------------------------------------------------------


class InputChangeError(InputError):
    """The baseline was judged on other inputs than the run is evaluated on."""


def gate_checks(conn, run_ids: Iterable[int], qrels_id: int) -> dict[int, Any]:
    """The gate of each run: its newest check against ``qrels_id``, else its newest check
    (runs never gated are left out)."""
    rows = _checks(conn, run_ids, "ORDER BY created_at, id")
    found: dict[int, Any] = {}
    for row in rows:  # oldest first: the newest wins, one against qrels_id before any other
        kept = found.get(row.run_id)
        if kept is None or row.qrels_id == qrels_id or kept.qrels_id != qrels_id:
            found[row.run_id] = row
    return found


def first_checks(conn, run_ids: Iterable[int], qrels_id: int) -> dict[int, Any]:
    """Each run's first check against ``qrels_id``: the night as it was judged when it was
    new. A night submitted again (the same content under a new name) is judged again, and
    that newer check must not rewrite the night's place in the calibration or the pool."""
    rows = _checks(
        conn,
        run_ids,
        "AND qrels_id = :qrels ORDER BY created_at DESC, id DESC",
        qrels=int(qrels_id),
    )
    return {row.run_id: row for row in rows}  # newest first: the oldest wins


def _checks(conn, run_ids: Iterable[int], rest: str, **params: Any) -> list[Any]:
    """The checks of ``run_ids`` as ``rest`` (more conditions, the order) selects them."""
    ids = sorted({int(i) for i in run_ids})
    if not ids:
        return []
    return conn.execute(
        "SELECT id, run_id, qrels_id, passed, baseline_run_id FROM regress_checks "
        f"WHERE run_id = ANY(:ids) {rest}",
        {"ids": ids, **params},
    ).all()


def reference_evaluations(conn, check: Any, labels: Iterable[str]) -> dict[str, int]:
    """The evaluation of each label a baseline's ``check`` judged it by (labels it holds
    none of are left out)."""
    labels = list(labels)
    found = {
        row[0]: int(row[1])
        for row in conn.execute(
            "SELECT measure, run_evaluation_id FROM regress_verdicts WHERE check_id = :id "
            "AND run_evaluation_id IS NOT NULL AND measure = ANY(:labels)",
            {"id": int(check.id), "labels": labels},
        ).all()
    }
    missing = [label for label in labels if label not in found]
    if missing:
        for label, evaluation_id in conn.execute(
            "SELECT measure, evaluation_id FROM latest_evaluations WHERE run_id = :run "
            "AND qrels_id = :qrels AND measure = ANY(:labels)",
            {"run": int(check.run_id), "qrels": int(check.qrels_id), "labels": missing},
        ).all():
            found[label] = int(evaluation_id)
    return found


def signatures(conn, evaluation_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """The rows of the evaluations: their signature and its parts."""
    ids = sorted({int(i) for i in evaluation_ids})
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT e.id, e.input_signature, e.qrels_sha256, e.relevance_level, "
        "e.missing_queries, e.options, q.name AS qrels_name FROM evaluations e "
        "LEFT JOIN qrels_sets q ON q.id = e.qrels_id WHERE e.id = ANY(:ids)",
        {"ids": ids},
    ).mappings()
    return {int(row["id"]): dict(row) for row in rows}


def input_changes(wh, pairs: dict[str, tuple[int, int]]) -> list[str]:
    """What differs, per label, between the run's evaluation and the baseline's reference
    (``pairs``: label -> (run's evaluation id, baseline's)); empty when nothing does."""
    with store_of(wh).connect() as conn:
        rows = signatures(conn, [i for pair in pairs.values() for i in pair])
        found: dict[str, list[str]] = {}
        for label, (mine, theirs) in pairs.items():
            run, base = rows.get(mine), rows.get(theirs)
            if run is None or base is None:
                continue
            same = run["input_signature"] is not None and (
                run["input_signature"] == base["input_signature"]
            )
            if not same:
                text = "; ".join(_differences(conn, run, base))
                found.setdefault(text, []).append(label)
    return [f"{', '.join(labels)}: {text}" for text, labels in found.items()]


def _differences(conn, run: dict[str, Any], base: dict[str, Any]) -> list[str]:
    if base["input_signature"] is None or run["input_signature"] is None:
        return ["the baseline's inputs are unknown (no signature stored)"]
    said = []
    if run["qrels_sha256"] != base["qrels_sha256"]:
        said.append(
            f"qrels content (the run's qrels {run['qrels_name']!r} {run['qrels_sha256'][:8]}, "
            f"the baseline's {base['qrels_name']!r} {base['qrels_sha256'][:8]})"
        )
    queries = [
        {r[0] for r in conn.execute(_QUERIES, {"id": int(row["id"])}).all()} for row in (run, base)
    ]
    if queries[0] != queries[1]:
        said.append(
            f"queries ({count(len(queries[0] - queries[1]), 'query')} only in the run's, "
            f"{count(len(queries[1] - queries[0]), 'query')} only in the baseline's)"
        )
    for name, words in (
        ("relevance_level", "relevance level"),
        ("missing_queries", "missing-query policy"),
        ("options", "options"),
    ):
        if run[name] != base[name]:
            said.append(f"{words} ({run[name]} for the run, {base[name]} for the baseline)")
    return said or ["the input signatures differ"]


_QUERIES = "SELECT DISTINCT query_id FROM evaluation_values WHERE evaluation_id = :id"


def refuse_input_change(baseline: str, changes: list[str]) -> InputChangeError:
    """The error of a gate whose baseline was judged on other inputs."""
    return InputChangeError(
        Message(
            f"the baseline {baseline!r} was judged on other inputs than the run is evaluated "
            f"on: {' / '.join(changes)}; their difference would mix a change of the system "
            "with a change of what it is measured on. Name a baseline judged on the same "
            "inputs, or pass ",
            Option("allow_input_change", True, cli_value=""),
            " to gate against it anyway (both are evaluated again on the run's inputs)",
        )
    )
