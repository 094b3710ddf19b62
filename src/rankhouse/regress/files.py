"""What a gate's check leaves: its rows in the warehouse and its words. The words: a check's
outcome in one line (``PASS: ...``, ``FAIL: ...``) and what its margins mean (``rankhouse
regress`` prints them on stderr), and the same in Markdown (for a PR comment), JSON and JUnit
XML (for CI) and the notebook's caption (:attr:`~rankhouse.regress.RegressResult.headline`,
:attr:`~.RegressResult.meaning`).

The outcomes: ``regressed`` names the measures whose evidence shows a drop (the (1 - 2 alpha)
interval below zero, the bound below -margin); ``not shown non-inferior`` names those the
queries cannot judge, with the bound, the margin, the interval that reaches above zero and the
margin these queries could show; a night the same as its reference says so.

The rows: the check, its verdicts and its drift rows (``regress_checks``,
``regress_verdicts``, ``regress_drift``) stored in one transaction, and removed when its
report file cannot be written; the evaluations a gate that fails computed, removed with it.
"""

from __future__ import annotations

import json
import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from ..backends.base import EVALUATION_ROWS, store_of
from ..cells import json_value
from ..columns import VERDICT_COLUMNS
from ..defaults import DEFAULT_FALSE_ALARM
from ..errors import count
from ..outputs import write_text
from ..stats.verdicts import calibrated_margin
from .baselines import store_reference
from .verdicts import describe_target

# Each function takes a :class:`~rankhouse.regress.RegressResult` (``result``); the module
# does not import it, so that the result's own properties can speak these words.


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _pvalue(value: float) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return f"{value:.4g}"


def to_dict(result: Any) -> dict[str, Any]:
    """The check as plain data (what the JSON report holds)."""
    return {
        "check_id": result.check_id,
        "passed": result.passed,
        "outcome": result.outcome,
        "headline": result.headline,
        "run": result.run,
        "system": result.system,
        "baseline": result.baseline,
        "qrels": result.qrels,
        "settings": {key: json_value(value) for key, value in result.settings.items()},
        "regressed": result.regressed,
        "not_shown": result.not_shown,
        "expected_false_alarm": json_value(result.expected_false_alarm),
        "meaning": result.meaning,
        "notes": result.notes,
        "warnings": result.warnings,
        "measures": [
            {key: json_value(value) for key, value in row.items()} for row in result.verdict_rows
        ],
        "drift": [
            {key: json_value(value) for key, value in row.items()} for row in result.drift_rows
        ],
        "drifted": result.drifted,
        "input_change": result.input_change,
    }


def to_json(result: Any) -> str:
    """The check as a JSON document: exact numbers, NaN as null, infinity as ``"Infinity"``
    (``rankhouse.cells``).

    ``regress --json FILE`` writes it and ``regress --format json`` prints it.
    """
    return json.dumps(to_dict(result), indent=2, allow_nan=False) + "\n"


def write_json(result: Any, path: str | os.PathLike[str]) -> None:
    """Write the check as a JSON document (:func:`to_json`), whole or not at all (a device
    such as ``/dev/null`` is written through)."""
    write_text(path, to_json(result), "the JSON report")


def describe(row: dict[str, Any], settings: dict[str, Any]) -> str:
    """One sentence on one measure's verdict."""
    level = f"{settings.get('level', 0.95):.0%}"
    if settings.get("mode") == "non_inferiority":
        bound_level = f"{1 - 2 * settings.get('alpha', 0.05):.0%}"
        judged = (
            f"non-inferiority bound (lower limit of the {bound_level} interval) "
            f"{_fmt(row['bound'])} against -{_fmt(row['margin'])}, margin "
            f"{row.get('margin_source') or 'n/a'}"
        )
    else:
        judged = f"tolerated drop {_fmt(row['tolerance'])}"
    return (
        f"{row['measure']}: {_fmt(row['baseline_value'])} -> {_fmt(row['run_value'])} "
        f"(delta {_fmt(row['delta'])}, {level} interval [{_fmt(row['delta_low'])}, "
        f"{_fmt(row['delta_high'])}], Hedges' g_z {_fmt(row['hedges_gz'], 3)}, "
        f"{count(row['num_q'], 'query')} paired; {judged}), "
        f"p={_pvalue(row['p_value'])} ({settings.get('test')}), corrected "
        f"p={_pvalue(row['p_corrected'])} ({settings.get('correction')}), "
        f"{count(row['improved'], 'query')} better, {row['degraded']} worse: "
        f"{row['verdict'] or 'no verdict'}, {row['status'].replace('_', ' ')}"
    )


def describe_drift(row: dict[str, Any]) -> str:
    """One sentence on one drift bound."""
    return (
        f"order drift {row['measure']}: mean {_fmt(row['value'])} over "
        f"{count(row['num_q'], 'query')}, at least {_fmt(row['bound'])} needed: "
        + ("passed" if row["passed"] else "failed")
    )


def to_markdown(result: Any) -> str:
    """The check as Markdown: a verdict line and a table of the measures."""
    verdict = {
        "passed": "passed",
        "first": "passed",
        "regressed": "FAILED (regressed)",
        "not_shown": "FAILED (not shown non-inferior)",
        "unsettled": "UNSETTLED (holes in the judgments: judge them before calling it)",
    }[result.outcome]
    settings = result.settings
    max_drop = settings.get("max_drop")
    tolerance = (
        "calibrated"
        if max_drop is None or max_drop != max_drop
        else f"{max_drop:g}" + (" (relative)" if settings["relative"] else "")
    )
    if result.baseline is None:
        notes = "".join(f"\n{note}\n" for note in result.notes)
        return (
            f"## Regression check passed: `{result.run}` is the first run of its series\n\n"
            f"Qrels `{result.qrels}`; there is no previous run to compare with.\n{notes}"
        )
    level = f"{settings['level']:.0%}"
    if settings["mode"] == "non_inferiority":
        rule = (
            f"non-inferiority: a measure passes when the lower limit of the "
            f"{1 - 2 * settings['alpha']:.0%} interval of the difference (the bound) is at "
            f"least -margin (default margin: {tolerance}); it is regressed when that interval "
            "lies below zero too, else not shown"
        )
    else:
        rule = f"significance: a significant change to the worse side beyond {tolerance} fails"
    lines = [
        f"## Regression check {verdict}: `{result.run}` vs `{result.baseline}`",
        "",
        f"Qrels `{result.qrels}`; {rule}; {settings['test']} test, correction "
        f"{settings['correction']}, alpha {settings['alpha']:g}; the interval column is the "
        f"{level} interval.",
        "",
        result.headline,
        "",
    ]
    if result.input_change:
        lines += [f"Inputs changed, compared anyway: {result.input_change}", ""]
    for line in [*result.notes, *result.warnings]:
        lines += [f"> {line}", ""]
    if result.meaning:
        lines += [f"- {line}" for line in result.meaning] + [""]
    lines += [
        f"| measure | baseline | run | delta | {level} interval | g_z | n | queries +/- "
        "| corrected p | bound | margin | verdict | status |",
        "| --- | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: | ---: | --- "
        "| --- |",
    ]
    for row in result.verdict_rows:
        status = row["status"].replace("_", " ")
        if row["fails"]:
            status = f"**{status}**"
        lines.append(
            f"| `{row['measure']}` | {_fmt(row['baseline_value'])} | {_fmt(row['run_value'])} | "
            f"{_fmt(row['delta'])} | [{_fmt(row['delta_low'])}, {_fmt(row['delta_high'])}] | "
            f"{_fmt(row['hedges_gz'], 3)} | {row['num_q']} | "
            f"{row['improved']}/{row['degraded']} | {_pvalue(row['p_corrected'])} | "
            f"{_fmt(row['bound'])} | {_fmt(row['margin'])} | {row['verdict'] or 'n/a'} | "
            f"{status} |"
        )
    if result.drift_rows:
        lines += [
            "",
            "| order drift | mean | bound | n | passed |",
            "| --- | ---: | ---: | ---: | --- |",
        ]
        for row in result.drift_rows:
            passed = "yes" if row["passed"] else "**no**"
            lines.append(
                f"| `{row['measure']}` | {_fmt(row['value'])} | {_fmt(row['bound'])} | "
                f"{row['num_q']} | {passed} |"
            )
    return "\n".join(lines) + "\n"


def write_markdown(result: Any, path: str | os.PathLike[str]) -> None:
    """Write the check as Markdown."""
    write_text(path, to_markdown(result), "the Markdown report")


def to_junit(result: Any) -> ET.ElementTree:
    """The check as JUnit XML: one suite, one test case per measure, a failure per regression."""
    failures = sum(bool(row["fails"]) for row in result.verdict_rows) + len(result.drifted)
    tests = len(result.verdict_rows) + len(result.drift_rows)
    root = ET.Element(
        "testsuites",
        name="rankhouse regress",
        tests=str(tests),
        failures=str(failures),
        errors="0",
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name=f"regress {result.run} "
        + ("(first run)" if result.baseline is None else f"vs {result.baseline}"),
        tests=str(tests),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    properties = ET.SubElement(suite, "properties")
    for key, value in {
        "run": result.run,
        "baseline": result.baseline or "",
        "qrels": result.qrels,
        **result.settings,
    }.items():
        shown = json.dumps(value, sort_keys=True) if isinstance(value, dict) else str(value)
        ET.SubElement(properties, "property", name=key, value=shown)
    for row in result.verdict_rows:
        _testcase(
            suite,
            f"rankhouse.regress.{result.qrels}",
            str(row["measure"]),
            describe(row, result.settings),
            failure=_failure(row),
        )
    for row in result.drift_rows:
        _testcase(
            suite,
            f"rankhouse.regress.{result.qrels}.drift",
            str(row["measure"]),
            describe_drift(row),
            failure=None if row["passed"] else ("drift", f"order drift {row['measure']} failed"),
        )
    ET.indent(root)
    return ET.ElementTree(root)


def _failure(row: dict[str, Any]) -> tuple[str, str] | None:
    """The JUnit failure of a measure that fails the gate: (type, message)."""
    if not row["fails"]:
        return None
    if row["status"] == "regressed":
        return "regression", f"{row['measure']} regressed"
    return "not_shown", f"{row['measure']} not shown non-inferior (no drop shown either)"


def _testcase(
    suite: ET.Element, classname: str, name: str, text: str, failure: tuple[str, str] | None
) -> None:
    """One JUnit test case: ``failure`` (type, message) holds the text, else system-out."""
    case = ET.SubElement(suite, "testcase", classname=classname, name=name, time="0")
    if failure is None:
        ET.SubElement(case, "system-out").text = text
    else:
        kind, message = failure
        ET.SubElement(case, "failure", type=kind, message=message).text = text


def to_junit_text(result: Any) -> str:
    """The check as the text of a JUnit XML file."""
    body = ET.tostring(to_junit(result).getroot(), encoding="unicode")
    return "<?xml version='1.0' encoding='utf-8'?>\n" + body + "\n"


def write_junit(result: Any, path: str | os.PathLike[str]) -> None:
    """Write the check as a JUnit XML file."""
    write_text(path, to_junit_text(result), "the JUnit report")


def _plain(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _signed(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:+.4f}"


def _share(value: float) -> str:
    return "n/a" if value is None or math.isnan(value) else describe_target(value)


def _about(value: float) -> str:
    """``about 0.5%``, ``under 0.01%``."""
    shown = _share(value)
    return shown if shown.startswith(("under", "n/a")) else f"about {shown}"


def outcome_line(result: Any) -> str:
    """The check's outcome in words (:attr:`RegressResult.headline`)."""
    if result.baseline is None:
        return (
            f"PASS: {result.run} is the first run of system {result.system!r}: there is no "
            "previous run to compare with (history shows its gate as 'first run')"
        )
    rows = result.verdict_rows
    against = f"against {result.baseline}"
    pooled = len(result.settings.get("reference_pool") or []) > 1
    if result.run == result.baseline and not pooled:
        return f"PASS: {result.run} is the reference itself (the same content): nothing changed"
    if result.passed:
        passed_anyway = [r for r in rows if r.get("status") == "not_shown"]
        if result.settings.get("mode") != "non_inferiority":
            line = f"PASS: no measure of {result.run} regressed {against}"
        else:
            line = (
                f"PASS: every measure of {result.run} is shown no worse than {result.baseline} "
                "by more than its margin"
            )
            if passed_anyway:
                names = ", ".join(str(r["measure"]) for r in passed_anyway)
                why = (
                    "as asked (--not-shown pass)"
                    if result.settings.get("not_shown") == "pass"
                    else "as its margin is calibrated: tonight's queries spread wider than the "
                    "system's nights, and no drop is shown (--not-shown fail fails it)"
                )
                line = (
                    f"PASS: {result.run} {against}: {names} not shown non-inferior, passed "
                    f"{why}; the others shown no worse than their margins"
                )
        return line
    parts = []
    for row in rows:
        if row.get("status") == "regressed":
            if math.isnan(row["bound"]):
                why = f"significant, p corrected {row['p_corrected']:.3g}"
            else:
                level = 1 - 2 * float(result.settings.get("alpha", 0.05))
                why = (
                    f"the {level:.0%} interval of the difference lies below zero and its bound "
                    f"{_signed(row['bound'])} below -{_plain(row['margin'])}"
                )
            parts.append(f"{row['measure']} regressed ({_signed(row['delta'])}: {why})")
        elif row.get("status") == "not_shown" and row.get("fails"):
            shown = row.get("margin_source") == "given" and row.get("spread") == row.get("spread")
            reach = ""
            if shown and row.get("num_q", 0) >= 2:
                fitting = calibrated_margin(
                    float(row["spread"]),
                    int(row["num_q"]),
                    alpha=float(result.settings.get("alpha", 0.05)),
                    false_alarm=float(result.settings.get("false_alarm", DEFAULT_FALSE_ALARM)),
                )
                reach = f"; these queries can show a margin of about {fitting:.3g}"
            parts.append(
                f"{row['measure']} not shown non-inferior ({_signed(row['delta'])}: its bound "
                f"{_signed(row['bound'])} lies below -{_plain(row['margin'])}, but the interval "
                f"[{_signed(row['delta_low'])}, {_signed(row['delta_high'])}] reaches above zero: "
                f"no drop is shown either{reach})"
            )
    for row in result.drift_rows:
        if not row["passed"]:
            parts.append(
                f"order drift {row['measure']} {_plain(row['value'])} below its bound "
                f"{_plain(row['bound'])}"
            )
    return f"FAIL: {'; '.join(parts)} {against}"


def meaning_lines(result: Any) -> list[str]:
    """What the check's margins mean (:attr:`RegressResult.meaning`)."""
    rows = [r for r in result.verdict_rows if r.get("margin_source")]
    same = result.run == result.baseline and len(result.settings.get("reference_pool") or []) < 2
    if not rows or result.settings.get("mode") != "non_inferiority" or same:
        return []
    lines = []
    for row in rows:
        source = row["margin_source"]
        if source == "calibrated":
            origin = (
                f"calibrated from {row['spread_nights']} nightly differences, spread "
                f"{row['spread']:.3g}"
            )
        elif source == "tonight":
            origin = f"calibrating: from tonight's queries, spread {row['spread']:.3g}"
        else:
            origin = f"given; spread {row['spread']:.3g}" + (
                f" from {row['spread_nights']} nightly differences"
                if row["spread_nights"]
                else " tonight"
            )
        caught = row["detectable_drop"]
        if row["spread"] == 0:
            catches = (
                f"catches every drop beyond {_plain(row['margin'])}: the differences do not vary"
            )
        elif caught > 0:
            catches = f"catches a drop of {_plain(caught)} on the first night 80% of the time"
        else:
            catches = "so it fails most nights whatever happens: no drop is needed"
        lines.append(
            f"{row['measure']}: margin {_plain(row['margin'])} ({origin}): fails an unchanged "
            f"night {_about(row['false_alarm'])} of the time, {catches}"
        )
    target = float(result.settings.get("false_alarm", DEFAULT_FALSE_ALARM))
    lines.append(
        f"this check fails an unchanged run on at most "
        f"{_about(result.expected_false_alarm)} of nights (target {_share(target)}, split over "
        f"{len(rows)} measure{'s' if len(rows) != 1 else ''})"
    )
    return lines


# --- the check stored ----------------------------------------------------------------------------


def remove_check(wh, check_id: int) -> None:
    """Delete a stored check and its verdicts (``regress`` removes its own check when its
    report file cannot be written: history never shows a gate whose report CI lacked)."""
    with store_of(wh).transaction() as conn:
        for table in ("regress_verdicts", "regress_drift"):
            conn.execute(f"DELETE FROM {table} WHERE check_id = :id", {"id": int(check_id)})
        conn.execute("DELETE FROM regress_checks WHERE id = :id", {"id": int(check_id)})


@contextmanager
def forgotten_on_failure(wh) -> Iterator[list[int]]:
    """A list for the block to note the evaluations it computed (not reused) in; when the
    block raises, they are deleted and the error goes on: a gate that stops (a baseline on
    other inputs, no baseline) leaves the warehouse as it found it."""
    computed: list[int] = []
    try:
        yield computed
    except (Exception, KeyboardInterrupt):
        if computed:
            ids = {"ids": sorted(set(computed))}
            with store_of(wh).transaction() as conn:
                for table in EVALUATION_ROWS:
                    conn.execute(f"DELETE FROM {table} WHERE evaluation_id = ANY(:ids)", ids)
                conn.execute("DELETE FROM evaluations WHERE id = ANY(:ids)", ids)
        raise


def computed_ids(rows: list[dict[str, Any]]) -> list[int]:
    """The evaluations of evaluate's ``rows`` that it computed rather than reused."""
    return [int(row["evaluation_id"]) for row in rows if not row["reused"]]


_CHECK_COLUMNS = (
    "run_id, baseline_run_id, baseline_spec, qrels_id, test, correction, alpha, max_drop, "
    "relative, options, passed, created_at, baseline_name, mode, level, input_change"
)
#: What ``regress_verdicts`` keeps of each verdict row: all but what follows from the rest
#: (the drop, the tolerance as given, the significance flag).
_VERDICT_STORED = [c for c in VERDICT_COLUMNS if c not in ("drop", "tolerance", "significant")]


def store_check(
    store,
    run_row: dict[str, Any],
    baseline_row: dict[str, Any] | None,
    baseline_spec: Any,
    qrels_row: dict[str, Any],
    settings: dict[str, Any],
    rows: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    passed: bool,
    input_change: str | None,
    reference: dict[str, Any] | None = None,
) -> int:
    """Store the check, its verdicts and drift rows, and the reference it pinned (one
    transaction); returns the check's id."""
    verdicts, drift = rows
    spec = baseline_spec if isinstance(baseline_spec, str | int) else "dataframe"
    kept = ("test", "correction", "alpha", "max_drop", "relative", "mode", "level")
    extra = {k: v for k, v in settings.items() if k not in kept}
    values = ", ".join(":" + name for name in _CHECK_COLUMNS.split(", "))
    with store.transaction() as conn:
        check_id = conn.execute(
            f"INSERT INTO regress_checks ({_CHECK_COLUMNS}) VALUES ({values}) RETURNING id",
            {
                "run_id": int(run_row["id"]),
                "baseline_run_id": None if baseline_row is None else int(baseline_row["id"]),
                "baseline_name": None if baseline_row is None else baseline_row["name"],
                "baseline_spec": str(spec),
                "qrels_id": int(qrels_row["id"]),
                "test": settings["test"],
                "correction": settings["correction"],
                "alpha": float(settings["alpha"]),
                # NaN: the margins were calibrated (no default margin was given)
                "max_drop": float("nan")
                if settings["max_drop"] is None
                else float(settings["max_drop"]),
                "relative": bool(settings["relative"]),
                "options": json.dumps(extra, sort_keys=True),
                "passed": bool(passed),
                "created_at": datetime.now(UTC).replace(tzinfo=None),
                "mode": settings["mode"],
                "level": float(settings["level"]),
                "input_change": input_change,
            },
        ).scalar_one()
        if verdicts:
            conn.execute(
                f"INSERT INTO regress_verdicts (check_id, {', '.join(_VERDICT_STORED)}) "
                f"VALUES (:check_id, {', '.join(':' + n for n in _VERDICT_STORED)})",
                [
                    {"check_id": check_id, **{n: row[n] for n in _VERDICT_STORED}}
                    for row in verdicts
                ],
            )
        store_drift_rows(conn, check_id, drift)
        if reference is not None:
            store_reference(conn, reference)
    return int(check_id)


def store_drift_rows(conn, check_id: int, rows: list[dict[str, Any]]) -> None:
    """The drift rows of a check into ``regress_drift`` (the caller's transaction)."""
    for row in rows:
        conn.execute(
            "INSERT INTO regress_drift (check_id, measure, k, p, value, bound, num_q, "
            "drift_id, passed) VALUES (:check_id, :measure, :k, :p, :value, :bound, :num_q, "
            ":drift_id, :passed)",
            {
                "check_id": int(check_id),
                **row,
                "value": None if math.isnan(row["value"]) else row["value"],
            },
        )
