"""Tables a paper prints: ``eval``/``compare --format markdown|latex`` and ``paper_table``.

The golden LaTeX table of a 4-system comparison (tests/golden/papers_compare.tex) is checked
here against reference tools, not only against our own output: every mean against
pytrec_eval's (AP, nDCG@10, P@5) and ir_measures' (Unj@5 as 1 - Judged@5: the qrels hold no
negative grade), every bold cell against the best of those means in the measure's direction,
every dagger against scipy's paired t-test corrected by Holm's step-down (written out here).
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
from pathlib import Path

import pytest
from cli_helpers import ERROR_LINE

from rankhouse import RankhouseError, Warehouse
from rankhouse.present.papers import evaluation_table, latex_escape, markdown_escape, render
from rankhouse.results import EvaluationResult

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
DATA = GOLDEN / "papers"
FILES = ["bm25.run", "bm25_rm3.run", "splade_v2.run", "mono_T5.run"]
TAGS = ["bm25", "bm25_rm3", "splade_v2", "mono&T5"]
MEASURES = ["AP", "nDCG@10", "P@5", "Unj@5"]
COMPARE = [
    "compare",
    str(DATA / "papers.qrels"),
    *(str(DATA / f) for f in FILES),
    "-m",
    ",".join(MEASURES),
    "-b",
    "bm25",
    "--correction",
    "holm",
]


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    with Warehouse(tmp_path_factory.mktemp("papers") / "w.duckdb") as wh:
        yield wh.compare(
            str(DATA / "papers.qrels"),
            [str(DATA / f) for f in FILES],
            MEASURES,
            baseline="bm25",
            correction="holm",
        )


def _read(name: str) -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, float]] = {}
    for line in (DATA / name).read_text().splitlines():
        parts = line.split()
        if name.endswith(".qrels"):
            found.setdefault(parts[0], {})[parts[2]] = int(parts[3])
        else:
            found.setdefault(parts[0], {})[parts[2]] = float(parts[4])
    return found


def _reference_per_query() -> dict[str, dict[str, list[float]]]:
    """tag -> measure -> per-query values (query order), from pytrec_eval and ir_measures."""
    import ir_measures
    import pytrec_eval

    qrels = _read("papers.qrels")
    queries = sorted(qrels)
    found = {}
    for tag, name in zip(TAGS, FILES, strict=True):
        run = _read(name)
        values = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10", "P_5"}).evaluate(run)
        judged = {
            m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.Judged @ 5], qrels, run)
        }
        found[tag] = {
            "AP": [values[q]["map"] for q in queries],
            "nDCG@10": [values[q]["ndcg_cut_10"] for q in queries],
            "P@5": [values[q]["P_5"] for q in queries],
            "Unj@5": [1 - judged[q] for q in queries],
        }
    return found


def _holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979), written out."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for step, i in enumerate(order):
        running = max(running, (len(p_values) - step) * p_values[i])
        adjusted[i] = min(1.0, running)
    return adjusted


def _golden_cells() -> dict[str, list[str]]:
    """Run name (unescaped) -> its cells, from the golden table's body."""
    text = (GOLDEN / "papers_compare.tex").read_text()
    body = text.split("\\midrule\n")[1].split("\\bottomrule")[0]
    rows = {}
    for line in body.strip().splitlines():
        cells = [c.strip() for c in line.removesuffix("\\\\").split(" & ")]
        rows[cells[0].replace("\\_", "_").replace("\\&", "&")] = cells[1:]
    return rows


def test_the_golden_table_holds_the_reference_tools_numbers():
    from scipy import stats

    reference = _reference_per_query()
    cells = _golden_cells()
    assert list(cells) == TAGS
    for column, measure in enumerate(MEASURES):
        means = {tag: statistics.mean(reference[tag][measure]) for tag in TAGS}
        pick = min if measure == "Unj@5" else max  # Unj: lower is better
        best = pick(means.values())
        others = TAGS[1:]
        p = [
            stats.ttest_rel(reference[t][measure], reference["bm25"][measure]).pvalue
            for t in others
        ]
        significant = {t for t, q in zip(others, _holm(p), strict=True) if q < 0.05}
        for tag in TAGS:
            text = cells[tag][column]
            match = re.fullmatch(r"(\\textbf\{)?(\d\.\d{4})\}?(\$\^\{\\dagger\}\$)?", text)
            assert match, text
            assert match.group(2) == f"{means[tag]:.4f}", (tag, measure)
            assert bool(match.group(1)) == (means[tag] == best), (tag, measure)
            assert bool(match.group(3)) == (tag in significant), (tag, measure)
    # the data makes the checks bite: a run better on every measure, a dagger on three
    assert "textbf" in cells["splade_v2"][3] and "dagger" in cells["splade_v2"][0]


def test_compare_prints_the_golden_latex(run_cli):
    result = run_cli(*COMPARE, "--format", "latex")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (GOLDEN / "papers_compare.tex").read_text()


def test_the_api_gives_the_cli_table_on_every_backend(any_warehouse):
    frame = any_warehouse.compare(
        str(DATA / "papers.qrels"),
        [str(DATA / f) for f in FILES],
        MEASURES,
        baseline="bm25",
        correction="holm",
    )
    assert frame.paper_table("latex") == (GOLDEN / "papers_compare.tex").read_text()


def test_caption_names_the_test_and_correction_as_the_comparison_made_them(tmp_path):
    with Warehouse(tmp_path / "w.duckdb") as wh:
        frame = wh.compare(
            str(DATA / "papers.qrels"),
            [str(DATA / f) for f in FILES[:2]],
            ["AP"],
            baseline=0,
            test="wilcoxon",
            correction="bonf",
            alpha=0.01,
        )
    text = frame.paper_table("markdown")
    assert "Wilcoxon signed-rank test, Bonferroni correction over the 1 run" in text
    assert "α = 0.01" in text
    with Warehouse(tmp_path / "w.duckdb") as wh:
        no_baseline = wh.compare(
            str(DATA / "papers.qrels"), [str(DATA / f) for f in FILES[:2]], ["AP"]
        )
    assert "†" not in no_baseline.paper_table("markdown")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex (TeX Live) here")
def test_the_latex_compiles(tmp_path, compared):
    table = compared.paper_table("latex", intervals=True, round=3)
    document = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        f"{table}\\end{{document}}\n"
    )
    (tmp_path / "paper.tex").write_text(document, encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "paper.pdf").stat().st_size > 0


def test_markdown_renders_as_a_gfm_table(compared):
    from markdown_it import MarkdownIt

    text = compared.paper_table("markdown", intervals=True)
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert html.count("<table>") == 1 and html.count("<tr>") == 5  # header and 4 runs
    body = html.split("<tbody>")[1]
    rows = re.findall(r"<tr>\n(.*?)</tr>", body, flags=re.S)
    names = [re.search(r"<td[^>]*>(.*?)</td>", row).group(1) for row in rows]
    assert names == ["bm25", "bm25_rm3", "splade_v2", "mono&amp;T5"]  # escapes undone
    splade = re.findall(r"<td[^>]*>(.*?)</td>", rows[2])
    assert splade[1].startswith("<strong>0.9474</strong><sup>†</sup> [")
    assert 'style="text-align:right"' in rows[0]
    # the caption is a paragraph of its own, not a row of the table
    assert re.search(r"</table>\n<p>Table: Means over 12 queries\. † marks", html)


def _result(rows) -> EvaluationResult:
    full = [
        {"run": run, "measure": m, "value": v, "num_q": 3, "mean_low": lo, "mean_high": hi}
        for run, m, v, lo, hi in rows
    ]
    measures = list(dict.fromkeys(r["measure"] for r in full))
    return EvaluationResult(full, None, measures, qrels="q_1", labels={"AP": "AP"})


def test_ties_are_all_bold_and_a_count_has_no_best():
    result = _result(
        [
            ("a", "AP", 0.5, 0.4, 0.6),
            ("b", "AP", 0.5, 0.3, 0.7),
            ("c", "AP", 0.25, 0.1, 0.4),
            ("a", "NumRet", 100, None, None),
            ("b", "NumRet", 90, None, None),
            ("c", "NumRet", None, None, None),
        ]
    )
    lines = result.paper_table("markdown", round={"AP": 2, None: 1}).splitlines()
    assert lines[2:5] == [
        "| a | **0.50** | 100.0 |",
        "| b | **0.50** | 90.0 |",
        "| c | 0.25 | – |",
    ]
    caption = "Means over 3 queries of qrels set q\\_1. The best mean of each measure is in bold."
    assert lines[-1] == f"Table: {caption}"


def test_latex_escapes_names_and_takes_a_caption_and_label():
    result = _result([("a_1 %&#$", "AP", 0.5, 0.4, 0.6), ("b~^{}\\<>", "AP", 0.25, None, None)])
    text = result.paper_table("latex", caption="Ours & theirs", label="tab:main", intervals=True)
    assert r"\caption{Ours \& theirs}" in text and r"\label{tab:main}" in text
    assert r"a\_1 \%\&\#\$ & \textbf{0.5000} {\scriptsize [0.4000, 0.6000]} \\" in text
    assert (
        r"b\textasciitilde{}\textasciicircum{}\{\}\textbackslash{}\textless{}\textgreater{}"
        r" & 0.2500 \\"
    ) in text
    assert text.index(r"\toprule") < text.index(r"\midrule") < text.index(r"\bottomrule")


@pytest.mark.parametrize(
    ("text", "escaped"),
    [("a|b", "a\\|b"), ("*x*", "\\*x\\*"), ("<b>", "\\<b\\>"), ("a_b", "a\\_b"), ("P@5", "P@5")],
)
def test_markdown_escape(text, escaped):
    assert markdown_escape(text) == escaped


def test_latex_escape_dagger_and_alpha():
    assert latex_escape("† α = 0.05") == r"$^{\dagger}$ $\alpha$ = 0.05"


def test_bad_format_and_round():
    table = _result([("a", "AP", 0.5, None, None)])
    with pytest.raises(RankhouseError, match="markdown or latex, not 'html'"):
        table.paper_table("html")
    with pytest.raises(RankhouseError, match="round must be"):
        render(evaluation_table(table), "latex", round=16)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--format", "latex", "--per-query"],
            "--format latex prints the means, one row per run: drop --per-query",
        ),
        (["--format", "markdown", "--wide"], "drop --wide"),
        (["--intervals"], "--intervals shapes --format markdown and latex"),
    ],
)
def test_cli_refuses_mixed_shapes(run_cli, args, message):
    result = run_cli(*COMPARE, *args)
    assert result.exit_code == 1
    assert re.fullmatch(ERROR_LINE, result.stderr) and message in result.stderr


def test_eval_prints_markdown_with_intervals_and_round(run_cli):
    result = run_cli(
        "eval",
        str(DATA / "papers.qrels"),
        str(DATA / "bm25.run"),
        str(DATA / "splade_v2.run"),
        "-m",
        "P@5",
        "--format",
        "markdown",
        "--intervals",
        "--round",
        "2",
    )
    assert result.exit_code == 0, result.stderr
    from scipy import stats

    reference = _reference_per_query()
    shown = []
    for tag in ("bm25", "splade_v2"):
        values = reference[tag]["P@5"]
        low, high = stats.t.interval(
            0.95, len(values) - 1, loc=statistics.mean(values), scale=stats.sem(values)
        )
        shown.append((f"{statistics.mean(values):.2f}", f"\\[{low:.2f}, {high:.2f}\\]"))
    # P@5: 29 and 45 relevant documents in the top 5 of 12 queries (counted by hand)
    assert [mean for mean, _ in shown] == [f"{29 / 60:.2f}", f"{45 / 60:.2f}"]
    assert result.stdout.splitlines()[:4] == [
        "| Run | P@5 |",
        "| :-- | --: |",
        f"| bm25 | {shown[0][0]} {shown[0][1]} |",
        f"| splade\\_v2 | **{shown[1][0]}** {shown[1][1]} |",
    ]


def _cells(markup: str, tag: str = "td") -> list[str]:
    return re.findall(rf"<{tag}(?:\s[^>]*)?>(.*?)</{tag}>", markup, flags=re.S)


def test_the_report_draws_the_table_its_markdown_renders_to(tmp_path):
    import html

    from markdown_it import MarkdownIt
    from report_helpers import build_example_warehouse

    from rankhouse.report.report import build_report

    with Warehouse(build_example_warehouse(tmp_path / "w.duckdb")) as wh:
        page = build_report(wh, baseline="bm25", measures=["nDCG@10", "AP"], runs=["dense"])
        means = wh.compare("qrels.txt", ["bm25", "dense"], ["nDCG@10", "AP"], baseline="bm25")
    found = re.search(r'<pre class="paper-markdown">(.*?)</pre>', page, flags=re.S)
    rendered = (
        MarkdownIt("commonmark", {"html": True})
        .enable("table")
        .render(html.unescape(found.group(1)))
    )
    cells = _cells(rendered)
    expected = means.set_index(["run", "measure"])["mean"]
    for run, row in zip(["bm25", "dense"], (cells[:3], cells[3:]), strict=True):
        assert row[0] == run
        for text, measure in zip(row[1:], ["nDCG@10", "AP"], strict=True):
            assert (
                re.sub(r"</?strong>|<sup>.*</sup>", "", text) == f"{expected[(run, measure)]:.4f}"
            )
    # the drawn table: the same header, the same cells, the Markdown's caption as its own
    drawn = re.search(r'<table class="rh-table paper">(.*?)</table>', page, flags=re.S).group(1)
    assert _cells(drawn, "th") == _cells(rendered, "th") == ["Run", "nDCG@10", "AP"]
    assert _cells(drawn) == cells
    caption = re.search(r"<p>Table: (.*?)</p>", rendered, flags=re.S).group(1)
    assert _cells(drawn, "caption") == [caption]
    assert "bold" in caption and page.index("rh-table paper") < page.index("paper-markdown")
    assert r"\begin{tabular}{lrr}" in html.unescape(
        re.search(r'<pre class="paper-latex">(.*?)</pre>', page, flags=re.S).group(1)
    )


def test_the_drawn_table_has_the_markdown_cells_with_daggers_and_intervals(compared):
    from markdown_it import MarkdownIt

    from rankhouse.present.panels import frame_rows
    from rankhouse.present.papers import comparison_table, html_table

    text = compared.paper_table("markdown", intervals=True)
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    settings = compared.attrs["comparison"]
    drawn = html_table(comparison_table(frame_rows(compared), settings), intervals=True)
    assert _cells(drawn) == _cells(rendered) and _cells(drawn, "th") == _cells(rendered, "th")
    assert sum("<sup>†</sup>" in c for c in _cells(drawn)) == 3  # the golden table's daggers
    assert "mono&amp;T5" in _cells(drawn)  # escaped as HTML, as the Markdown renders it


def test_all_pairs_letters_hold_scipys_t_test_with_holm_over_the_pairs(tmp_path, run_cli):
    """Each run's letter in run order; a mean's superscript: the runs it beats after Holm over
    the 6 pairs of 4 runs (scipy's ttest_rel on pytrec_eval's and ir_measures' values)."""
    from itertools import combinations

    from scipy import stats

    reference = _reference_per_query()
    letters = dict(zip(TAGS, "abcd", strict=True))
    expected = {}
    for measure in MEASURES:
        sign = -1 if measure == "Unj@5" else 1  # Unj: lower is better
        pairs = list(combinations(TAGS, 2))
        p = [stats.ttest_rel(reference[a][measure], reference[b][measure]).pvalue for a, b in pairs]
        means = {tag: statistics.mean(reference[tag][measure]) for tag in TAGS}
        beaten = {tag: "" for tag in TAGS}
        for (a, b), q in zip(pairs, _holm(p), strict=True):
            if q <= 0.05:
                winner, loser = (a, b) if sign * (means[a] - means[b]) > 0 else (b, a)
                beaten[winner] += letters[loser]
        for tag in TAGS:
            expected[tag, measure] = (f"{means[tag]:.4f}", "".join(sorted(beaten[tag])))
    with Warehouse(tmp_path / "w.duckdb") as wh:
        found = wh.all_pairs(
            str(DATA / "papers.qrels"), [str(DATA / f) for f in FILES], MEASURES, test="t"
        )
    text = found.paper_table("markdown")
    lines = text.splitlines()
    assert lines[0] == "| # | Run | AP | nDCG@10 | P@5 | Unj@5 |"
    for tag, line in zip(TAGS, lines[2:6], strict=True):
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert cells[0] == letters[tag] and cells[1] == markdown_escape(tag)
        for cell, measure in zip(cells[2:], MEASURES, strict=True):
            match = re.fullmatch(r"(?:\*\*)?(\d\.\d{4})(?:\*\*)?(?:<sup>([a-d]+)</sup>)?", cell)
            assert match, cell
            assert (match.group(1), match.group(2) or "") == expected[tag, measure]
    # the data makes it bite: letters on several cells, and one run beaten on Unj@5 only
    assert expected["splade_v2", "AP"][1] == "ad" and expected["bm25_rm3", "Unj@5"][1] == "d"
    assert (
        "A superscript lists the runs (by their letter) a mean is significantly better than "
        "(paired t-test, Holm correction over the 6 pairs per measure, α = 0.05)."
    ) in lines[-1]
    # the command line prints the API's table
    result = run_cli(*COMPARE[:-4], "--all-pairs", "--test", "t", "--format", "latex")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == found.paper_table("latex")
    assert "\\# & Run & AP" in result.stdout and "$^{ad}$" in result.stdout
