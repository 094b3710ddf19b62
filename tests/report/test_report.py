"""rankhouse report: one self-contained HTML file of trends, comparisons and curves.

Numbers in the report are checked against pytrec_eval on the example files; the browser
test (test_report_browser.py) checks that the page loads offline without errors.
"""

from __future__ import annotations

import math
import re
import shutil
from html.parser import HTMLParser

import pandas as pd
import pytest
from report_helpers import EXAMPLES, QRELS, read_trec

from rankhouse import NotFoundError, RankhouseError, Warehouse
from rankhouse.report import figures
from rankhouse.report.gather import IPREC_MEASURES, gather
from rankhouse.report.report import build_report


@pytest.fixture(scope="module")
def reference(pytrec):
    """pytrec_eval's per-query nDCG@10 and AP of bm25 and dense (a missing query is 0)."""
    qrels = read_trec(QRELS, 4)
    values = {}
    for run in ("bm25", "dense"):
        found = pytrec.evaluate(
            qrels, read_trec(EXAMPLES / f"run.{run}.txt", 6), ["ndcg_cut_10", "map"]
        )
        values[run] = {
            measure: {q: found.get(q, {}).get(key, 0.0) for q in qrels}
            for measure, key in (("nDCG@10", "ndcg_cut_10"), ("AP", "map"))
        }
    return values


class _Page(HTMLParser):
    """Tags, attributes and the text of table cells by class."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.cells: list[tuple[str, str]] = []  # (class, text)
        self._open: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "td":
            self._open = [attrs.get("class") or "", ""]

    def handle_data(self, data):
        if self._open is not None:
            self._open[1] += data

    def handle_endtag(self, tag):
        if tag == "td" and self._open is not None:
            self.cells.append(tuple(self._open))
            self._open = None


def parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


def assert_self_contained(text: str) -> None:
    """No script, no stylesheet or image from elsewhere, no link out of the page."""
    page = parse(text)
    names = {tag for tag, _ in page.tags}
    assert not names & {"script", "link", "iframe", "img", "object", "embed"}
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            if name in ("href", "xlink:href"):
                assert value.startswith("#"), (tag, name, value)
            assert name != "src", (tag, attrs)
    # the only URLs are the SVG and XLink namespace names, which are never fetched
    urls = set(re.findall(r"(?:https?|ftp|wss?)://[^\s\"'<>)]+", text))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert "url(" not in text.replace("url(#", "")
    assert "@import" not in text and "@font-face" not in text


def test_report_against_a_baseline(example_wh, reference):
    text = build_report(example_wh, baseline="bm25", measures=["nDCG@10", "AP"], runs=["dense"])
    assert_self_contained(text)
    page = parse(text)
    # the means are pytrec_eval's, rounded to 4 decimals; dense has the best of both
    bm25 = {m: sum(v.values()) / 8 for m, v in reference["bm25"].items()}
    dense = {m: sum(v.values()) / 8 for m, v in reference["dense"].items()}
    best = [text for css, text in page.cells if "best-bold" in css]
    marked = [f"{dense['nDCG@10']:.4f}", f"{dense['AP']:.4f}"]
    assert best == marked * 2  # in compare's panels, then in the table of every column
    assert f"{bm25['nDCG@10']:.4f}" in [t for _, t in page.cells]
    delta = dense["nDCG@10"] - bm25["nDCG@10"]
    assert f"+{delta:.4f}" in [t for _, t in page.cells]
    # the queries that lost most, with both values, worst first
    worst = sorted(
        (reference["dense"]["nDCG@10"][q] - reference["bm25"]["nDCG@10"][q], q)
        for q in reference["bm25"]["nDCG@10"]
    )
    lost = [(d, q) for d, q in worst if d < 0]
    assert "nDCG@10: the 2 queries that lost most" in text
    table = text.split("nDCG@10: the 2 queries that lost most", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td class=\"text\">(\w+)</td><td>([\d.]+)</td><td>([\d.]+)</td>", table)
    assert [q for q, _, _ in rows] == [q for _, q in lost]
    q = lost[0][1]
    assert rows[0][1:] == (
        f"{reference['bm25']['nDCG@10'][q]:.4f}",
        f"{reference['dense']['nDCG@10'][q]:.4f}",
    )
    # the per-query bars carry every query id (8 queries), and both values on hover
    assert "nDCG@10: dense − bm25 per query (2 worse, 4 better, 2 tied)" in text
    bm25_q, dense_q = reference["bm25"]["nDCG@10"][q], reference["dense"]["nDCG@10"][q]
    assert (
        f"<title>{q}: bm25 {bm25_q:.4f}, dense {dense_q:.4f} ({dense_q - bm25_q:+.4f})</title>"
        in text
    )
    assert len(re.findall(r"<title>q\d: bm25 ", text)) == 2 * 8  # every bar of both measures
    # the header says what was run
    for section in ("Trends", "Comparison", "Precision-recall"):
        assert f">{section}</h3>" in text
    assert "t, correction none, alpha 0.05" in text
    with example_wh.connect() as conn:
        sha = conn.execute_raw("SELECT content_sha256 FROM qrels_sets").scalar_one()
    assert sha in text


def test_default_report_covers_what_is_stored(example_wh):
    data = gather(example_wh)
    (section,) = data.sections
    assert section.qrels["name"] == "qrels.txt"
    assert [r.name for r in section.runs] == [
        "bm25",
        "dense",
        "bm25-night1",
        "bm25-night2",
        "bm25-night3",
        "bm25-night4",
    ]
    assert section.measures == ["nDCG@10", "AP", "P@5"]
    assert section.baseline is None and section.pairs == {}
    # the report stored the 11 precision-recall points: the next report still shows only
    # the measures the user stored, and so does history unless asked for every label
    assert gather(example_wh).sections[0].measures == ["nDCG@10", "AP", "P@5"]
    assert not set(IPREC_MEASURES) & set(example_wh.history(qrels="qrels.txt").columns)
    stored = set(example_wh.history(qrels="qrels.txt", all_measures=True).columns)
    assert set(IPREC_MEASURES) <= stored
    text = build_report(example_wh)
    assert_self_contained(text)
    assert "Means only: name a baseline" in text


def test_trend_marks_the_failed_gate_and_names_each_point(example_wh):
    (section,) = gather(example_wh, systems=["bm25"]).sections
    (trend,) = section.trends
    assert trend.system == "bm25"
    assert [r.name for r in trend.runs] == ["bm25"] + [f"bm25-night{i}" for i in range(1, 5)]
    night3 = trend.runs[3]
    assert trend.verdicts[(night3.id, "nDCG@10")] == "fail"
    assert trend.verdicts[(trend.runs[2].id, "nDCG@10")] == "pass"
    assert (trend.runs[0].id, "nDCG@10") not in trend.verdicts  # bm25 was never gated
    text = build_report(example_wh, systems=["bm25"])
    titles = re.findall(r"<title>([^<]*)</title>", text)
    tip = next(t for t in titles if t.startswith("bm25-night3: nDCG@10 = "))
    assert "commit = c95b2fa" in tip and "gate fail against bm25-night2" in tip
    assert '<td class="text fail">fail: nDCG@10, AP, P@5 (vs bm25-night2)</td>' in text
    assert [r.name for r in section.runs] == [r.name for r in trend.runs]  # dense left out


def test_precision_recall_points_are_trec_evals(example_wh, pytrec):
    (section,) = gather(example_wh, runs=["bm25"]).sections
    curve = section.precision_recall.sort_values("recall")
    assert list(curve["recall"]) == [i / 10 for i in range(11)]
    qrels = read_trec(QRELS, 4)
    found = pytrec.evaluate(qrels, read_trec(EXAMPLES / "run.bm25.txt", 6), ["iprec_at_recall"])
    relevant = {q: sum(g >= 1 for g in docs.values()) for q, docs in qrels.items()}
    checked = 0
    for recall, precision in zip(curve["recall"], curve["precision"], strict=True):
        # pytrec_eval is trec_eval 9, whose cutoff trunc(r*R + 0.9) differs from trec_eval
        # 10's lround(r*R) for some R: compare the points where every query agrees
        if any(math.trunc(recall * n + 0.9) != round(recall * n + 1e-9) for n in relevant.values()):
            continue
        key = f"iprec_at_recall_{recall:.2f}"
        expected = sum(found[q][key] for q in qrels) / len(qrels)
        assert precision == pytest.approx(expected, abs=1e-12)
        checked += 1
    assert checked >= 3


def test_rounding_and_highlight_options(example_wh):
    text = build_report(example_wh, runs=["bm25", "dense"], round=2, highlight="color")
    page = parse(text)
    best = [t for css, t in page.cells if "best-color" in css]
    assert best and all(re.fullmatch(r"\d\.\d\d", t) for t in best)
    assert not any("best-bold" in css for css, _ in page.cells)
    plain = build_report(example_wh, runs=["bm25", "dense"], highlight=None)
    assert "best-" not in "".join(css for css, _ in parse(plain).cells)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"systems": ["nope"]}, NotFoundError, "no stored run has the system tag 'nope'"),
        ({"runs": ["nope"]}, NotFoundError, "nope"),
        ({"baseline": "nope"}, NotFoundError, "nope"),
        ({"qrels": "nope"}, NotFoundError, "nope"),
        ({"measures": ["Nope@3"]}, RankhouseError, "Nope"),
        ({"test": "z"}, RankhouseError, "unknown test 'z'"),
        ({"round": -1}, RankhouseError, "round must be a number of decimals"),
        (
            {"highlight": "blink"},
            RankhouseError,
            "highlight must be 'bold', 'color' ('colour') or None",
        ),
    ],
)
def test_bad_options(example_wh, options, error, message):
    with pytest.raises(error, match=re.escape(message)):
        build_report(example_wh, **options)


def test_empty_warehouse_is_an_error(warehouse):
    with pytest.raises(RankhouseError, match="nothing to report"):
        build_report(warehouse)


def test_large_query_sets_are_drawn_at_a_bounded_size():
    n = 7000
    frame = pd.DataFrame(
        {
            "query_id": [f"q{i}" for i in range(n)],
            "run_value": [(i * 37 % 101) / 100 for i in range(n)],
            "baseline_value": [(i * 53 % 97) / 96 for i in range(n)],
        }
    )
    svg = figures.comparison_figure("run", "base", {"AP": frame, "nDCG@10": frame}, 1, "t")
    assert len(svg) < 150_000
    assert "7,000 queries, worst to best" in svg
    assert "q6999" not in svg and "<title>" not in svg  # no per-query label at this size
    # per measure: a red and a green outline, one path per shade of the count grid
    assert svg.count("<path") < 120


def test_report_against_a_baseline_shows_the_order_drift(example_wh):
    text = build_report(example_wh, baseline="bm25", measures=["AP"], runs=["dense"])
    assert "<h4>Order drift from bm25</h4>" in text
    table = text.split('<table class="drift">', 1)[1].split("</table>", 1)[0]
    [row] = re.findall(r"<tr><td>dense</td>((?:<td>[^<]*</td>)+)</tr>", table)
    rbo, tau, tau_ap, overlap, queries = re.findall(r"<td>([^<]*)</td>", row)
    # every run ranks at most 20 documents a query, so its top 100 is all of them: overlap@100
    # is the shared documents over 100, averaged over the queries either run ranks
    docs: dict[str, dict[str, set[str]]] = {}
    for name in ("bm25", "dense"):
        for line in (EXAMPLES / f"run.{name}.txt").read_text().splitlines():
            query, _, doc = line.split()[:3]
            docs.setdefault(query, {}).setdefault(name, set()).add(doc)
    shared = [len(d.get("bm25", set()) & d.get("dense", set())) / 100 for d in docs.values()]
    assert overlap == f"{sum(shared) / len(shared):.4f}"
    assert int(queries) == len(docs)
    assert 0 <= float(rbo) <= 1 and -1 <= float(tau) <= 1 and -1 <= float(tau_ap) <= 1


def test_cli_report(run_cli, tmp_path, example_db):
    db = tmp_path / "cli.duckdb"
    shutil.copy(example_db, db)
    out = tmp_path / "out" / "report.html"
    out.parent.mkdir()
    done = run_cli(
        "--db", db, "report", "-o", out, "--baseline", "bm25", "--system", "bm25",
        "-m", "AP", "-m", "P@5", "--round", "3", "--round", "P@5=1", "--highlight", "color",
        db=False,
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert re.search(r"wrote .*report\.html \(\d+ KiB\)", done.stderr)
    text = out.read_text(encoding="utf-8")
    assert_self_contained(text)
    assert "<h4>bm25-night3 vs bm25</h4>" in text and "<h4>dense" not in text
    assert "best-color" in text
    row = text.split('<td class="text">bm25 (baseline)</td>', 1)[1].split("</tr>", 1)[0]
    # AP: mean, its interval and 8 empty test cells, then P@5
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)
    assert re.fullmatch(r"0\.\d{3}", cells[0]) and re.fullmatch(r"0\.\d", cells[10])


def test_cli_report_errors(run_cli, db_path, tmp_path):
    done = run_cli("report", "-o", tmp_path / "r.html")
    assert done.exit_code == 1
    assert done.stderr.startswith(f"Error: no warehouse at {db_path}; ")
    Warehouse(db_path).close()
    done = run_cli("report", "-o", tmp_path / "r.html")
    assert done.exit_code == 1
    assert done.stderr.startswith("Error: nothing to report")
    assert not (tmp_path / "r.html").exists()
    done = run_cli("report")
    assert done.exit_code == 2 and "--output" in done.stderr


def test_a_report_at_another_level_shows_labels(example_wh):
    """AP at relevance level 2 is shown as AP(rel=2), never under AP's name."""
    text = build_report(
        example_wh, baseline="bm25", measures=["AP", "nDCG@10"], runs=["dense"], relevance_level=2
    )
    data = gather(example_wh, baseline="bm25", measures=["AP"], runs=["dense"], relevance_level=2)
    (section,) = data.sections
    assert section.measures == ["AP(rel=2)"]
    assert set(section.comparison["measure"]) == {"AP(rel=2)"}
    assert list(section.pairs["dense"]) == ["AP(rel=2)"]
    assert "AP(rel=2): dense − bm25 per query" in text
    assert not re.search(r">AP<", text)
