"""Report files of a regression check: Markdown (for a PR comment), JSON, JUnit XML (for CI)."""

from __future__ import annotations

import json
import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ..cells import json_value
from ..words import count
from .gate import RegressResult


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


def to_dict(result: RegressResult) -> dict[str, Any]:
    """The check as plain data (what the JSON report holds)."""
    return {
        "check_id": result.check_id,
        "passed": result.passed,
        "run": result.run,
        "baseline": result.baseline,
        "qrels": result.qrels,
        "settings": {key: json_value(value) for key, value in result.settings.items()},
        "regressed": result.regressed,
        "measures": [
            {key: json_value(value) for key, value in row.items()} for row in result.verdict_rows
        ],
        "drift": [
            {key: json_value(value) for key, value in row.items()} for row in result.drift_rows
        ],
        "drifted": result.drifted,
        "input_change": result.input_change,
    }


def to_json(result: RegressResult) -> str:
    """The check as a JSON document: exact numbers, NaN as null, infinity as ``"Infinity"``
    (``rankhouse.cells``).

    ``regress --json FILE`` writes it and ``regress --format json`` prints it.
    """
    return json.dumps(to_dict(result), indent=2, allow_nan=False) + "\n"


def write_json(result: RegressResult, path: str | os.PathLike[str]) -> None:
    """Write the check as a JSON document (:func:`to_json`)."""
    Path(path).write_text(to_json(result), encoding="utf-8")


def describe(row: dict[str, Any], settings: dict[str, Any]) -> str:
    """One sentence on one measure's verdict."""
    level = f"{settings.get('level', 0.95):.0%}"
    judged = (
        f"non-inferiority bound {_fmt(row['bound'])} against -{_fmt(row['margin'])}"
        if settings.get("mode") == "non_inferiority"
        else f"tolerated drop {_fmt(row['tolerance'])}"
    )
    return (
        f"{row['measure']}: {_fmt(row['baseline_value'])} -> {_fmt(row['run_value'])} "
        f"(delta {_fmt(row['delta'])}, {level} interval [{_fmt(row['delta_low'])}, "
        f"{_fmt(row['delta_high'])}], Hedges' g_z {_fmt(row['hedges_gz'], 3)}, "
        f"{count(row['num_q'], 'query')} paired; {judged}), "
        f"p={_pvalue(row['p_value'])} ({settings.get('test')}), corrected "
        f"p={_pvalue(row['p_corrected'])} ({settings.get('correction')}), "
        f"{count(row['improved'], 'query')} better, {row['degraded']} worse: "
        f"{row['verdict'] or 'no verdict'}, {row['status']}"
    )


def describe_drift(row: dict[str, Any]) -> str:
    """One sentence on one drift bound."""
    return (
        f"order drift {row['measure']}: mean {_fmt(row['value'])} over "
        f"{count(row['num_q'], 'query')}, at least {_fmt(row['bound'])} needed: "
        + ("passed" if row["passed"] else "failed")
    )


def to_markdown(result: RegressResult) -> str:
    """The check as Markdown: a verdict line and a table of the measures."""
    verdict = "FAILED" if not result.passed else "passed"
    settings = result.settings
    tolerance = f"{settings['max_drop']:g}" + (" (relative)" if settings["relative"] else "")
    if result.baseline is None:
        return (
            f"## Regression check passed: `{result.run}` is the first run of its series\n\n"
            f"Qrels `{result.qrels}`; there is no previous run to compare with.\n"
        )
    level = f"{settings['level']:.0%}"
    if settings["mode"] == "non_inferiority":
        rule = (
            f"non-inferiority: a measure fails when the lower limit of the "
            f"{1 - 2 * settings['alpha']:.0%} interval of the difference lies below -margin "
            f"(default margin {tolerance})"
        )
    else:
        rule = f"significance: a significant drop beyond {tolerance} fails"
    lines = [
        f"## Regression check {verdict}: `{result.run}` vs `{result.baseline}`",
        "",
        f"Qrels `{result.qrels}`; {rule}; {settings['test']} test, correction "
        f"{settings['correction']}, alpha {settings['alpha']:g}; {level} intervals.",
        "",
    ]
    if result.input_change:
        lines += [f"Inputs changed, compared anyway: {result.input_change}", ""]
    if result.regressed:
        lines += [f"Regressed: {', '.join(f'`{m}`' for m in result.regressed)}", ""]
    lines += [
        f"| measure | baseline | run | delta | {level} interval | g_z | n | queries +/- "
        "| corrected p | bound | margin | verdict | status |",
        "| --- | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: | ---: | ---: | --- "
        "| --- |",
    ]
    for row in result.verdict_rows:
        status = row["status"].replace("_", " ")
        if row["regressed"]:
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


def write_markdown(result: RegressResult, path: str | os.PathLike[str]) -> None:
    """Write the check as Markdown."""
    Path(path).write_text(to_markdown(result), encoding="utf-8")


def to_junit(result: RegressResult) -> ET.ElementTree:
    """The check as JUnit XML: one suite, one test case per measure, a failure per regression."""
    failures = len(result.regressed) + len(result.drifted)
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
            failure=("regression", f"{row['measure']} regressed") if row["regressed"] else None,
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


def to_junit_text(result: RegressResult) -> str:
    """The check as the text of a JUnit XML file."""
    body = ET.tostring(to_junit(result).getroot(), encoding="unicode")
    return "<?xml version='1.0' encoding='utf-8'?>\n" + body + "\n"


def write_junit(result: RegressResult, path: str | os.PathLike[str]) -> None:
    """Write the check as a JUnit XML file."""
    Path(path).write_text(to_junit_text(result), encoding="utf-8")
