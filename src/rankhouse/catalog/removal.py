"""Removing a run or a qrels set with everything made from it (evaluations, gate checks,
order drift).

The ``delete_*`` functions work inside the caller's transaction (a ``--replace`` ingest
deletes what it overwrites); ``remove_*`` are the verbs, one transaction each.

A call that ingests files on its way (``eval FILE``, ``regress FILE``, ``report --run FILE``)
and then fails removes what it ingested (:func:`removed_on_failure`): a failed call leaves the
warehouse as it found it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..backends.base import store_of
from ..errors import Message, RankhouseError
from .lookup import _QRELS_COLUMNS, _RUN_COLUMNS, TABLES, alias_target, aliases_of, find

if TYPE_CHECKING:
    from ..backends.base import Connection


def _delete_evaluations(conn: Connection, column: str, value: int) -> None:
    conn.execute(
        (
            "DELETE FROM evaluation_values WHERE evaluation_id IN "
            f"(SELECT id FROM evaluations WHERE {column} = :value)"
        ),
        {"value": value},
    )
    conn.execute(f"DELETE FROM evaluations WHERE {column} = :value", {"value": value})


def _delete_checks(conn: Connection, column: str, value: int) -> None:
    for table in ("regress_verdicts", "regress_drift"):
        conn.execute(
            (
                f"DELETE FROM {table} WHERE check_id IN "
                f"(SELECT id FROM regress_checks WHERE {column} = :value)"
            ),
            {"value": value},
        )
    conn.execute(f"DELETE FROM regress_checks WHERE {column} = :value", {"value": value})


def _delete_drift(conn: Connection, run_id: int) -> None:
    """The run's order drift, from a baseline or as another run's baseline (a drift is a
    pair of rankings: one gone, it cannot be computed again)."""
    chosen = "SELECT id FROM drift_evaluations WHERE run_id = :id OR baseline_run_id = :id"
    conn.execute(f"DELETE FROM drift_values WHERE drift_id IN ({chosen})", {"id": run_id})
    conn.execute(
        "DELETE FROM drift_evaluations WHERE run_id = :id OR baseline_run_id = :id", {"id": run_id}
    )


def drop_alias(conn: Connection, kind: str, name: str) -> None:
    """Remove the alias ``name`` (what it named stays)."""
    conn.execute(f"DELETE FROM {TABLES[kind].aliases} WHERE name = :name", {"name": name})


def drop_aliases_of(conn: Connection, kind: str, item_id: int) -> None:
    """Remove every alias of a run or qrels set (it is being deleted)."""
    tables = TABLES[kind]
    conn.execute(f"DELETE FROM {tables.aliases} WHERE {tables.column} = :id", {"id": int(item_id)})


def delete_run(conn: Connection, run_id: int) -> None:
    """Delete a run, its rows, its aliases, its evaluations, its gate checks and its order
    drift (the caller's transaction).

    Checks that used the run as their baseline belong to other runs: they stay, with the
    baseline's name (``regress_results.baseline_deleted`` is then true).
    """
    _delete_checks(conn, "run_id", run_id)
    _delete_drift(conn, run_id)
    _delete_evaluations(conn, "run_id", run_id)
    drop_aliases_of(conn, "run", run_id)
    conn.execute("DELETE FROM run_rows WHERE run_id = :id", {"id": run_id})
    conn.execute("DELETE FROM runs WHERE id = :id", {"id": run_id})


def delete_qrels(conn: Connection, qrels_id: int) -> None:
    """Delete a qrels set, its judgments, its aliases, the evaluations and gate checks made
    with it, and the gate references that held for it."""
    _delete_checks(conn, "qrels_id", qrels_id)
    conn.execute("DELETE FROM gate_references WHERE qrels_id = :id", {"id": qrels_id})
    _delete_evaluations(conn, "qrels_id", qrels_id)
    drop_aliases_of(conn, "qrels", qrels_id)
    conn.execute("DELETE FROM judgments WHERE qrels_id = :id", {"id": qrels_id})
    conn.execute("DELETE FROM qrels_sets WHERE id = :id", {"id": qrels_id})


def remove_run(wh, name_or_id: str | int) -> dict:
    """Delete a run by name or id with its rows, aliases, evaluations and checks; returns its
    row, with ``aliases`` (the aliases that went with it).

    Given an alias, only the alias is removed (the run stays): the row returned is the run's,
    with ``removed_alias`` (the alias).

    Raises:
        NotFoundError: no such run.
    """
    with store_of(wh).transaction() as conn:
        row = find(conn, "runs", _RUN_COLUMNS, name_or_id, "run")
        if _is_alias(conn, "run", name_or_id, row):
            drop_alias(conn, "run", str(name_or_id))
            return {**row, "removed_alias": str(name_or_id)}
        row["aliases"] = aliases_of(conn, "run", row["id"])
        delete_run(conn, row["id"])
    return row


def remove_qrels(wh, name_or_id: str | int) -> dict:
    """Delete a qrels set by name or id, with its judgments, aliases, evaluations and gate
    checks; returns its row with what went with it (``evaluations``, ``evaluated_runs``,
    ``checks``: :func:`qrels_dependents`; ``aliases``).

    Given an alias, only the alias is removed (the qrels set stays): the row returned is the
    set's, with ``removed_alias`` (the alias).

    Raises:
        NotFoundError: no such qrels set.
    """
    with store_of(wh).transaction() as conn:
        row = find(conn, "qrels_sets", _QRELS_COLUMNS, name_or_id, "qrels set")
        if _is_alias(conn, "qrels", name_or_id, row):
            drop_alias(conn, "qrels", str(name_or_id))
            return {**row, "removed_alias": str(name_or_id)}
        row.update(_dependents(conn, row["id"]))
        row["aliases"] = aliases_of(conn, "qrels", row["id"])
        delete_qrels(conn, row["id"])
    return row


def qrels_dependents(wh, name_or_id: str | int) -> dict:
    """A qrels set's row with what removing it deletes besides its judgments:
    ``evaluations`` (made with it), ``evaluated_runs`` (the runs they belong to; the runs
    stay), ``checks`` (the gate checks made with it) and ``aliases``; given an alias, the
    set's row with ``alias`` (removing an alias deletes only the alias).

    Raises:
        NotFoundError: no such qrels set.
    """
    with store_of(wh).connect() as conn:
        row = find(conn, "qrels_sets", _QRELS_COLUMNS, name_or_id, "qrels set")
        if _is_alias(conn, "qrels", name_or_id, row):
            return {**row, "alias": str(name_or_id)}
        row.update(_dependents(conn, row["id"]))
        row["aliases"] = aliases_of(conn, "qrels", row["id"])
    return row


def _is_alias(conn: Connection, kind: str, name_or_id: str | int, row: dict) -> bool:
    """Whether ``name_or_id`` found ``row`` as one of its aliases."""
    return str(name_or_id) != row["name"] and alias_target(conn, kind, str(name_or_id)) == int(
        row["id"]
    )


def _dependents(conn: Connection, qrels_id: int) -> dict[str, int]:
    found = (
        conn.execute(
            "SELECT (SELECT count(*) FROM evaluations WHERE qrels_id = :id) AS evaluations, "
            "(SELECT count(DISTINCT run_id) FROM evaluations WHERE qrels_id = :id) "
            "AS evaluated_runs, "
            "(SELECT count(*) FROM regress_checks WHERE qrels_id = :id) AS checks",
            {"id": int(qrels_id)},
        )
        .mappings()
        .one()
    )
    return {key: int(value) for key, value in found.items()}


@dataclass
class Ingested:
    """The runs and qrels sets one call stored as new content (ids), in order."""

    runs: list[int] = field(default_factory=list)
    qrels: list[int] = field(default_factory=list)

    def note(self, kind: str, item_id: int, created: bool) -> None:
        """Record an ingest's result (``kind`` ``'run'`` or ``'qrels'``); content that was
        stored already (``created`` false) is not the call's to remove."""
        if created:
            (self.runs if kind == "run" else self.qrels).append(int(item_id))

    def __bool__(self) -> bool:
        return bool(self.runs or self.qrels)


@contextmanager
def removed_on_failure(wh, outer: Ingested | None = None) -> Iterator[Ingested]:
    """An :class:`Ingested` for the block to fill; when the block raises, what it ingested
    is removed (one transaction) and the error goes on (an interruption too). Should the
    removal fail, the error says what stays stored. Given the ``outer`` call's record, the
    block notes what it ingests there and leaves the removal to that call."""
    if outer is not None:
        yield outer
        return
    ingested = Ingested()
    try:
        yield ingested
    except (Exception, KeyboardInterrupt) as exc:  # Ctrl-C too: the call did not finish
        if ingested:
            try:
                remove_ingested(wh, ingested)
            except Exception as failed:  # the first error is the one to report
                if isinstance(exc, RankhouseError):
                    exc.message = Message(
                        exc.message,
                        f" (what this call ingested stays stored: removing it failed: {failed})",
                    )
                    exc.args = (exc.message.render(cli=False),)
        raise


def remove_ingested(wh, ingested: Ingested) -> None:
    """Delete the runs and qrels sets of ``ingested`` with what was made from them."""
    with store_of(wh).transaction() as conn:
        for run_id in ingested.runs:
            delete_run(conn, run_id)
        for qrels_id in ingested.qrels:
            delete_qrels(conn, qrels_id)
