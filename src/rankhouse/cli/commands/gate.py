"""``rankhouse gate status|accept``: what the nightly gate weighs each system against, how it
is calibrated, and accepting a new reference."""

from __future__ import annotations

import sys

import typer

from .common import open_warehouse
from .output import FORMAT_OPTION, OutputFormat, print_rows

# The newest check of each system on each qrels set, one row per measure, with the system's
# current reference (views and tables of migrations 0003 and 0013).
_STATUS = """
WITH newest AS (
    SELECT c.id AS check_id, r.system_tag, c.qrels_id, r.name AS run_name, c.passed,
           c.baseline_run_id, row_number() OVER (
               PARTITION BY r.system_tag, c.qrels_id ORDER BY c.created_at DESC, c.id DESC
           ) AS recency
    FROM regress_checks c
    JOIN runs r ON r.id = c.run_id
),
reference AS (
    SELECT system_tag, qrels_id, run_name, row_number() OVER (
        PARTITION BY system_tag, qrels_id ORDER BY accepted_at DESC, id DESC
    ) AS recency
    FROM gate_references
)
SELECT n.system_tag, q.name AS qrels, ref.run_name AS reference, n.run_name AS last_run,
       CASE WHEN n.baseline_run_id IS NULL THEN 'first run'
            WHEN n.passed THEN 'pass' ELSE 'fail' END AS gate,
       v.measure, v.status, v.margin, v.margin_source, v.spread, v.spread_nights,
       v.false_alarm, v.detectable_drop
FROM newest n
JOIN qrels_sets q ON q.id = n.qrels_id
LEFT JOIN regress_verdicts v ON v.check_id = n.check_id
LEFT JOIN reference ref
       ON ref.system_tag = n.system_tag AND ref.qrels_id = n.qrels_id AND ref.recency = 1
WHERE n.recency = 1
  AND (CAST(:system AS VARCHAR) IS NULL OR n.system_tag = :system)
ORDER BY n.system_tag, q.name, v.measure
"""

_HISTORY = """
SELECT r.system_tag, q.name AS qrels, r.accepted_at, r.run_name, r.reason, r.accepted_by
FROM gate_references r
JOIN qrels_sets q ON q.id = r.qrels_id
WHERE (CAST(:system AS VARCHAR) IS NULL OR r.system_tag = :system)
ORDER BY r.system_tag, q.name, r.accepted_at DESC, r.id DESC
"""

_STATUS_COLUMNS = [
    "system_tag",
    "qrels",
    "reference",
    "last_run",
    "gate",
    "measure",
    "status",
    "margin",
    "margin_source",
    "spread",
    "spread_nights",
    "false_alarm",
    "detectable_drop",
]
_STATUS_HEADERS = {
    "system_tag": "system",
    "last_run": "last night",
    "margin_source": "from",
    "spread_nights": "nights",
    "false_alarm": "false alarms",
    "detectable_drop": "drop caught (80%)",
}
_STATUS_NUMBERS = {"margin", "spread", "spread_nights", "false_alarm", "detectable_drop"}


def register(app: typer.Typer) -> None:
    gate = typer.Typer(
        help="The nightly gate: each system's reference and calibration, and accepting a new "
        "reference."
    )
    app.add_typer(gate, name="gate")

    @gate.command("status")
    def gate_status(
        ctx: typer.Context,
        system: str = typer.Option(None, "--system", "-s", help="Only this system tag."),
        history: bool = typer.Option(
            False,
            "--history",
            help="Every reference accepted (when, which run, why, by whom) instead.",
        ),
        fmt: OutputFormat = FORMAT_OPTION,
    ) -> None:
        """Each system's newest gate check, per measure: its reference, the margin, where the
        margin came from (calibrated from N nightly differences, tonight's queries while
        calibrating, or given), the night-to-night spread, the expected share of unchanged
        nights it fails, and the drop it catches on the first night 80% of the time."""
        wh = open_warehouse(ctx, write=False, reads=True)
        with wh.connect() as conn:
            if history:
                rows = conn.execute(_HISTORY, {"system": system}).all()
                print_rows(
                    ["system", "qrels", "accepted_at", "reference", "reason", "by"],
                    [(*row[:2], str(row[2])[:19], *row[3:]) for row in rows],
                    fmt,
                    title="references",
                    numeric=[False] * 6,
                )
                return
            rows = conn.execute(_STATUS, {"system": system}).all()
        if not rows:
            which = f" for {system!r}" if system else ""
            print(f"no gate check is stored yet{which}", file=sys.stderr)
        print_rows(
            [_STATUS_HEADERS.get(name, name) for name in _STATUS_COLUMNS],
            [tuple(row) for row in rows],
            fmt,
            title="the nightly gate",
            keys=["system", "measure"],
            numeric=[name in _STATUS_NUMBERS for name in _STATUS_COLUMNS],
        )

    @gate.command("accept")
    def gate_accept(
        ctx: typer.Context,
        run: str = typer.Argument(..., help="The run that becomes its system's reference."),
        qrels: str = typer.Option(..., "--qrels", help="Qrels: a stored name or id, or a file."),
        reason: str = typer.Option(
            ..., "--reason", help="Why the new level is right (kept with the reference)."
        ),
    ) -> None:
        """Accept RUN as its system's reference on QRELS: from the next night on, `regress
        --baseline reference` weighs the system's nights against it (a lasting drop stops
        failing once accepted). The former references stay: `gate status --history`."""
        wh = open_warehouse(ctx)
        row = wh.accept_reference(run, qrels=qrels, reason=reason)
        print(
            f"{row['run_name']} is now the reference of system {row['system_tag']!r} "
            f"(reason: {row['reason']})",
            file=sys.stderr,
        )
