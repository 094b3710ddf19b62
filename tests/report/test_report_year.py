"""A year of nights in one report (issue 34, part 6): one system's 365 nightly runs.

The page stays readable and bounded: the trends put each run at its date and label it by
date and commit (never by its 40-character name), drawing the whole year as a line with its
band and the newest 28 nights in detail; the per-run sections cover the baseline and the
newest runs only (``--brief``: the newest one), and the file stays under 2 MB. A mean's
interval is cut to its measure's range. The runs here are tiny (6 queries, 3 documents
each); the time and size at DL19's scale are benchmarks/bench_report.py's (docs/report.md).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import pandas as pd
import pytest

from rankhouse import RankhouseError, Warehouse
from rankhouse.report.gather import MAX_COMPARED, gather
from rankhouse.report.report import OPEN_PAIRS, build_report
from rankhouse.report.trends import DETAIL, RunInfo, clipped, run_labels, run_time

pytestmark = pytest.mark.slow

NIGHTS = 365
QUERIES = [f"q{i}" for i in range(6)]
START = datetime(2025, 11, 28, 2, 13, 14)
SIZE_BOUND = 2 * 2**20


def _stamp(night: int) -> str:
    return (START + timedelta(days=night)).strftime("%Y%m%dT%H%M%SZ")


def _name(night: int) -> str:
    return f"bm25.run-{_stamp(night)}"


def _commit(night: int) -> str:
    return f"{night * 2654435761 % 2**32:08x}" * 5  # 40 hex digits, as git's


@pytest.fixture(scope="module")
def year(tmp_path_factory) -> Warehouse:
    """365 nights of system ``bm25``, each with ``--meta commit=... night=...`` as
    examples/nightly.sh stores them; each night ranks the relevant document first for all
    queries but one (so RR's mean is near 1 and its t interval reaches past 1)."""
    folder = tmp_path_factory.mktemp("year")
    qrels = folder / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 {q}-d{d} {int(d == 0)}\n" for q in QUERIES for d in range(3)),
        encoding="utf-8",
    )
    wh = Warehouse(folder / "year.duckdb")
    wh.ingest_qrels(qrels, name="nightly-qrels")
    rows = []
    for night in range(NIGHTS):
        slow = QUERIES[night % len(QUERIES)]
        rows += [
            (q, f"{q}-d{d}", (3 - d) if q != slow else (1 + d) % 3 + 1, _name(night))
            for q in QUERIES
            for d in range(3)
        ]
    # one ingest of 365 tags (one run each, named by its tag: 365 ingests take a minute),
    # then each run given the system tag and the metadata nightly.sh stores
    wh.ingest_run(pd.DataFrame(rows, columns=["qid", "docid", "score", "tag"]))
    with wh.backend.transaction() as conn:
        for night in range(NIGHTS):
            meta = json.dumps({"commit": _commit(night), "night": _stamp(night)})
            conn.execute(
                "UPDATE runs SET system_tag = 'bm25', metadata = :meta WHERE name = :name",
                {"meta": meta, "name": _name(night)},
            )
    wh.evaluate("nightly-qrels", [_name(n) for n in range(NIGHTS)], ["RR", "nDCG@10"])
    return wh


def _tick_texts(svg: str) -> list[str]:
    """The texts an SVG draws (its tick labels, titles and captions), not its hover titles."""
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_a_year_of_nights_is_bounded_and_labelled_by_date_and_commit(year):
    text = build_report(year, baseline=_name(NIGHTS - 8))
    assert len(text.encode("utf-8")) <= SIZE_BOUND
    trend = text.split('id="s0-trends"', 1)[1].split('id="s0-comparison"', 1)[0]
    svg = trend.split("<svg", 1)[1].split("</svg>", 1)[0]
    drawn = _tick_texts(svg)
    assert not [t for t in drawn if "bm25.run" in t], "a run's name as an x label"
    newest = START + timedelta(days=NIGHTS - 1)
    assert f"{newest:%m-%d} {_commit(NIGHTS - 1)[:7]}" in drawn  # the newest night, labelled
    assert any(re.fullmatch(r"\d\d-\d\d [0-9a-f]{7}", t) for t in drawn)
    assert f"RR: all {NIGHTS} runs, 2025-11-28 to {newest:%Y-%m-%d}" in drawn
    assert f"RR: the newest {DETAIL}" in drawn
    # the year as one line and band; points (with hover texts) only for the newest DETAIL
    assert svg.count("<title>") == 2 * DETAIL
    assert 'id="s0t0-band0-0"' in svg and 'id="s0t0-dband0-0"' in svg
    # the per-run sections do not grow with the nights
    pairs = re.findall(r'<details class="pair"( open)?><summary><h4>([^<]*)</h4>', text)
    assert len(pairs) == MAX_COMPARED - 1
    assert pairs[0] == (" open", f"{_name(NIGHTS - 1)} vs {_name(NIGHTS - 8)}")
    assert text.count("<svg") == 1 + OPEN_PAIRS + 1  # trends, per-query pictures, PR
    assert f"{NIGHTS} runs are selected: the trends show them all" in text
    assert "whose gate failed" not in text  # no gate ran: the table lists the newest DETAIL
    table = trend.split("</svg>", 1)[1]
    assert table.count(f'<td class="text">{_name(0)}</td>') == 0
    assert table.count(f'<td class="text">{_name(NIGHTS - 1)}</td>') == 1


def test_brief_compares_the_newest_night_with_its_baseline(year):
    full = build_report(year, baseline=_name(NIGHTS - 2))
    brief = build_report(year, baseline=_name(NIGHTS - 2), brief=True)
    pairs = re.findall(r'<details class="pair"( open)?><summary><h4>([^<]*)</h4>', brief)
    assert pairs == [(" open", f"{_name(NIGHTS - 1)} vs {_name(NIGHTS - 2)}")]
    assert len(brief) < len(full) and f"RR: all {NIGHTS} runs" in brief
    assert "the newest run against the baseline (--brief)" in brief


def test_last_keeps_the_newest_runs_of_each_system(year):
    (section,) = gather(year, last=20).sections
    (trend,) = section.trends
    assert [r.name for r in trend.runs] == [_name(n) for n in range(NIGHTS - 20, NIGHTS)]
    (section,) = gather(year, last=20, baseline=_name(3)).sections
    assert section.trends[0].runs[0].name == _name(3)  # the baseline stays
    with pytest.raises(RankhouseError, match="last must be a whole number"):
        gather(year, last=0)


def test_the_intervals_of_a_bounded_measure_stay_in_its_range(year):
    """RR's t interval reaches past 1 (history prints it as it is); the report cuts it at 1."""
    raw = year.history(qrels="nightly-qrels", measures=["RR"])
    assert (raw["RR high"] > 1).all()
    (section,) = gather(year, measures=["RR", "nDCG@10"]).sections
    (trend,) = section.trends
    assert trend.high["RR"].max() == 1.0 and trend.low["RR"].min() >= 0.0
    assert (trend.high["RR"] >= trend.means["RR"]).all()
    row = section.comparison[section.comparison["measure"] == "RR"]
    assert (row["mean_high"] <= 1.0).all()


def test_clipping_leaves_an_unbounded_measure_alone():
    values = pd.Series([-0.2, 0.5, 1.3])
    assert list(clipped(values, "AP(rel=2)")) == [0.0, 0.5, 1.0]
    assert list(clipped(values, "nDCG@10 [max_rank=100]")) == [0.0, 0.5, 1.0]
    assert list(clipped(values, "DCG@10")) == [-0.2, 0.5, 1.3]
    assert list(clipped(values, "NoSuchMeasure")) == [-0.2, 0.5, 1.3]


@pytest.mark.parametrize(
    ("night", "expected"),
    [
        ("20261127T121314Z", datetime(2026, 11, 27, 12, 13, 14)),
        ("2026-11-27", datetime(2026, 11, 27)),
        ("2026-11-27T12:13:14Z", datetime(2026, 11, 27, 12, 13, 14)),
        ("not a date", datetime(2026, 1, 2, 3, 4, 5)),  # the ingest time
    ],
)
def test_a_run_is_placed_at_its_night(night, expected):
    info = RunInfo(1, "r", "s", datetime(2026, 1, 2, 3, 4, 5), 8, {"night": night})
    assert run_time(info) == expected


def test_labels_are_dates_and_commits():
    runs = [
        RunInfo(i, f"bm25.run-2026112{i}T121314Z", "s", None, 8, {"commit": "3f2a9c1e" * 5})
        for i in range(3)
    ]
    days = [datetime(2026, 11, 20 + i) for i in range(3)]
    assert run_labels(runs, days) == ["11-20 3f2a9c1", "11-21 3f2a9c1", "11-22 3f2a9c1"]
    years = [datetime(2025, 12, 31), datetime(2026, 1, 1), datetime(2027, 1, 2)]
    assert run_labels(runs, years)[0] == "2025-12-31 3f2a9c1"  # more than a year
    assert run_labels(runs[:2], years[:2])[0] == "12-31 3f2a9c1"
    bare = [RunInfo(1, "bm25", "s", None, 8, {}), RunInfo(2, "a-very-long-name", "s", None, 8, {})]
    assert run_labels(bare, [days[0], days[0]]) == ["bm25", "a-very-long…"]
