"""Report files of a regression check: Markdown (for a PR comment), JSON, JUnit XML (for CI)."""

from __future__ import annotations

import json
import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from .cells import json_value
from .regress import RegressResult
from .words import count


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
    unit = " (relative)" if settings.get("relative") else ""
    return (
        f"{row['measure']}: {_fmt(row['baseline_value'])} -> {_fmt(row['run_value'])} "
        f"(delta {_fmt(row['delta'])}, tolerated drop {_fmt(row['tolerance'])}{unit}), "
        f"p={_pvalue(row['p_value'])} ({settings.get('test')}), corrected "
        f"p={_pvalue(row['p_corrected'])} ({settings.get('correction')}), "
        f"{count(row['improved'], 'query')} better, {row['degraded']} worse: {row['status']}"
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
    lines = [
        f"## Regression check {verdict}: `{result.run}` vs `{result.baseline}`",
        "",
        f"Qrels `{result.qrels}`; {settings['test']} test, correction {settings['correction']},"
        f" alpha {settings['alpha']:g}, tolerated drop {tolerance}.",
        "",
    ]
    if result.regressed:
        lines += [f"Regressed: {', '.join(f'`{m}`' for m in result.regressed)}", ""]
    lines += [
        "| measure | baseline | run | delta | queries +/- | p-value | corrected p | verdict |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in result.verdict_rows:
        status = row["status"].replace("_", " ")
        if row["regressed"]:
            status = f"**{status}**"
        lines.append(
            f"| `{row['measure']}` | {_fmt(row['baseline_value'])} | {_fmt(row['run_value'])} | "
            f"{_fmt(row['delta'])} | {row['improved']}/{row['degraded']} | "
            f"{_pvalue(row['p_value'])} | {_pvalue(row['p_corrected'])} | {status} |"
        )
    return "\n".join(lines) + "\n"


def write_markdown(result: RegressResult, path: str | os.PathLike[str]) -> None:
    """Write the check as Markdown."""
    Path(path).write_text(to_markdown(result), encoding="utf-8")


def to_junit(result: RegressResult) -> ET.ElementTree:
    """The check as JUnit XML: one suite, one test case per measure, a failure per regression."""
    failures = len(result.regressed)
    root = ET.Element(
        "testsuites",
        name="rankhouse regress",
        tests=str(len(result.verdict_rows)),
        failures=str(failures),
        errors="0",
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name=f"regress {result.run} "
        + ("(first run)" if result.baseline is None else f"vs {result.baseline}"),
        tests=str(len(result.verdict_rows)),
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
        ET.SubElement(properties, "property", name=key, value=str(value))
    for row in result.verdict_rows:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"rankhouse.regress.{result.qrels}",
            name=str(row["measure"]),
            time="0",
        )
        text = describe(row, result.settings)
        if row["regressed"]:
            failure = ET.SubElement(
                case, "failure", type="regression", message=f"{row['measure']} regressed"
            )
            failure.text = text
        else:
            ET.SubElement(case, "system-out").text = text
    ET.indent(root)
    return ET.ElementTree(root)


def to_junit_text(result: RegressResult) -> str:
    """The check as the text of a JUnit XML file."""
    body = ET.tostring(to_junit(result).getroot(), encoding="unicode")
    return "<?xml version='1.0' encoding='utf-8'?>\n" + body + "\n"


def write_junit(result: RegressResult, path: str | os.PathLike[str]) -> None:
    """Write the check as a JUnit XML file."""
    Path(path).write_text(to_junit_text(result), encoding="utf-8")
