"""A report of one system does not grow with the warehouse (issue 37, item 4).

``report --system S`` (:func:`~rankhouse.report.gather.gather`, which reads what the page
shows; drawing it reads nothing) selects the system's evaluated runs in one statement and reads the
trends, verdicts and intervals of those runs only: the statements it runs are the same for 30
nights of two systems as for 40, and its precision-recall figure draws at most
:data:`~rankhouse.report.gather.MAX_COMPARED` curves. The statements are counted by wrapping
the DuckDB store's connection (every statement the warehouse's SQL runs goes through it).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from series_helpers import add_tiny_nights

from rankhouse import Warehouse
from rankhouse.backends.duckdb_file.connection import DuckDBConnection
from rankhouse.report.gather import MAX_COMPARED, gather
from rankhouse.report.report import MAX_FAILED_LISTED, _trend_table, build_report
from rankhouse.report.trends import DETAIL, RunInfo, Trend

pytestmark = pytest.mark.slow


def _statements(monkeypatch, work) -> Counter:
    """The statements ``work()`` runs on the store, by text; ``"other system's rows"``
    counts the rows they returned that name a run of system ``b``."""
    seen: Counter = Counter()
    execute = DuckDBConnection.execute

    def counted(self, sql, params=None):
        seen[" ".join(str(sql).split())] += 1
        found = execute(self, sql, params)
        seen["other system's rows"] += sum(
            any(isinstance(v, str) and v.startswith("b.night") for v in row) for row in found._rows
        )
        return found

    with monkeypatch.context() as patch:
        patch.setattr(DuckDBConnection, "execute", counted)
        work()
    return seen


def test_a_systems_report_runs_the_same_statements_at_12_and_40_nights(tmp_path, monkeypatch):
    wh = Warehouse(tmp_path / "nights.duckdb")
    add_tiny_nights(wh, ["a", "b"], range(12))
    gather(wh, systems=["a"])  # stores the compared runs' precision-recall points
    before = _statements(monkeypatch, lambda: gather(wh, systems=["a"]))
    add_tiny_nights(wh, ["a", "b"], range(12, 40))
    gather(wh, systems=["a"])
    after = _statements(monkeypatch, lambda: gather(wh, systems=["a"]))
    assert after["other system's rows"] == 0  # nothing of system b is read
    assert sum(after.values()) == sum(before.values()) <= 40
    assert after == before  # the same statements, however many nights
    # the selection is one statement; no statement lists every run of the warehouse
    selecting = [text for text in after if "FROM runs r" in text and "row_number()" in text]
    assert len(selecting) == 1 and after[selecting[0]] == 1

    (section,) = gather(wh, systems=["a"]).sections
    assert section.selected == 40
    assert [t.system for t in section.trends] == ["a"] and len(section.trends[0].runs) == 40
    assert section.precision_recall["run"].nunique() == MAX_COMPARED
    text = build_report(wh, systems=["a"])
    figure = text.split('id="s0-pr"', 1)[1].split("</svg>", 1)[0]
    legend = re.findall(r">(a\.night\d{3})</text>", figure)
    assert sorted(legend) == [f"a.night{n:03d}" for n in range(40 - MAX_COMPARED, 40)]
    assert "40 runs are selected: the trends show them all" in text
    assert f"the newest {DETAIL}" in text


def test_a_long_series_lists_its_newest_runs_and_a_bounded_number_of_failures():
    import pandas as pd

    runs = [RunInfo(i, f"n{i:03d}", "a", f"2025-01-{1 + i % 28:02d}", 6, {}) for i in range(200)]
    trend = Trend(
        "a",
        runs,
        pd.DataFrame({"RR": [0.5] * 200}),
        verdicts={(i, "RR"): "fail" for i in range(200)},
        baselines={i: f"n{i - 1:03d}" for i in range(200)},
    )
    table = _trend_table(trend, ["RR"], round=4, highlight=None)
    listed = re.findall(r'<td class="text">(n\d{3})</td>', table)
    assert listed == [f"n{i:03d}" for i in range(200 - DETAIL - MAX_FAILED_LISTED, 200)]
    earlier = 200 - DETAIL
    assert (
        f"The newest {DETAIL} of the 200 runs, and the newest {MAX_FAILED_LISTED} of the "
        f"{earlier} earlier runs whose gate failed" in table
    )
    assert "rankhouse history -s a --limit 0</code> lists them all" in table
