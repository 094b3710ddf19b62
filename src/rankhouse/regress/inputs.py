"""Whether a gate's baseline was judged on the inputs the run is evaluated on, and what
differs when it was not.

The run's side is its evaluation of each gated measure now. The baseline's side is the
evaluation its own gate judged (its newest check against the same qrels set, else its
newest check: the evaluation of that measure the check weighed, or the one stored for it
against the check's qrels set); a baseline never gated has the evaluation the gate makes
of it now. Two evaluations are on the same inputs when their input signatures
(:mod:`rankhouse.evaluation.stored`) are equal; an unknown signature equals none.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..backends.base import store_of
from ..errors import InputError, Message, Option, count


class InputChangeError(InputError):
    """The baseline was judged on other inputs than the run is evaluated on."""


def gate_checks(conn, run_ids: Iterable[int], qrels_id: int) -> dict[int, Any]:
    """The gate of each run: its newest check against ``qrels_id``, else its newest check
    (runs never gated are left out)."""
    ids = sorted({int(i) for i in run_ids})
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT id, run_id, qrels_id, passed, baseline_run_id FROM regress_checks "
        "WHERE run_id = ANY(:ids) ORDER BY created_at, id",
        {"ids": ids},
    ).all()
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
    ids = sorted({int(i) for i in run_ids})
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT id, run_id, qrels_id, passed, baseline_run_id FROM regress_checks "
        "WHERE run_id = ANY(:ids) AND qrels_id = :qrels ORDER BY created_at DESC, id DESC",
        {"ids": ids, "qrels": int(qrels_id)},
    ).all()
    return {row.run_id: row for row in rows}  # newest first: the oldest wins


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
