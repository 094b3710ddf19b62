"""``rankhouse compare``'s tables: the compact, paper-like form by default (a panel per
measure that fits 80 columns for 4 measures and 4 runs, verdicts in words), the long and wide
forms behind flags, every column in CSV and JSON. Expected numbers come from scipy."""

from __future__ import annotations

import csv
import io
import json

import pytest
from scipy import stats as scipy_stats
from series_helpers import make_runs, qrels_path

from rankhouse import Warehouse
from rankhouse.compare import COLUMNS

BASELINE = "night-2"
RUNS = [BASELINE, "better", "noisy-worse", "night-3"]
MEASURES = ["nDCG@10", "AP", "P@10", "RR"]


@pytest.fixture
def loaded(db_path, shared_dir, tmp_path_factory):
    files = make_runs(shared_dir, tmp_path_factory.mktemp("runs"))
    with Warehouse(db_path) as wh:
        wh.ingest_qrels(qrels_path(shared_dir), name="dl19")
        for name in RUNS:
            wh.ingest_run(files[name], name=name)
        per_query = wh.evaluate("dl19", RUNS, MEASURES).per_query
    return per_query.pivot_table(index="query", columns=["run", "measure"], values="value")


def _args(*extra: str) -> list[str]:
    measures = [arg for m in MEASURES for arg in ("-m", m)]
    return ["compare", "dl19", *RUNS, *measures, "--baseline", BASELINE, *extra]


def test_the_compact_table_fits_80_columns(loaded, run_cli_tty):
    shown = run_cli_tty(*_args(), columns=80)
    assert shown.exit_code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    headers = [line for line in lines if "┃" in line]
    assert len(headers) == 4  # one panel per measure, none split to fit
    for measure, header in zip(MEASURES, headers, strict=True):
        cells = [cell.strip() for cell in header.split("┃")]
        assert cells[:5] == [measure, "mean", "difference [95% CI]", "g_z", "verdict"]
    assert " sig " not in shown.stdout and "improved" not in shown.stdout
    assert lines[0].startswith("compare against night-2: t test, no correction, alpha 0.05")


def test_each_row_says_its_difference_interval_and_verdict(loaded, run_cli):
    shown = run_cli(*_args("--round", "4"))
    assert shown.exit_code == 0, shown.stderr
    panel = shown.stdout.split("\n\n")[0]  # nDCG@10's
    rows = {line.split("│")[0].strip(): line for line in panel.splitlines() if "│" in line}
    assert "baseline" in rows[BASELINE]
    both = loaded[[("better", "nDCG@10"), (BASELINE, "nDCG@10")]].to_numpy()
    result = scipy_stats.ttest_rel(both[:, 0], both[:, 1])
    low, high = result.confidence_interval()
    difference = both[:, 0].mean() - both[:, 1].mean()
    cells = [cell.strip() for cell in rows["better"].split("│")]
    assert cells[2] == f"{difference:+.4f} [{low:.4f}, {high:.4f}]"
    assert cells[4] == ("better" if result.pvalue <= 0.05 else "inconclusive")
    # the drop of noisy-worse is not significant: inconclusive, with its MDE
    cells = [cell.strip() for cell in rows["noisy-worse"].split("│")]
    assert cells[4] == "inconclusive" and float(cells[5]) > 0
    legend = shown.stdout.split("\n\n")[-1]
    assert "inconclusive: neither shown; MDE is the smallest true difference" in " ".join(
        legend.split()
    )


def test_margin_level_and_bootstrap_are_in_the_headers(loaded, run_cli):
    shown = run_cli(
        *_args("--margin", "AP=0.01", "--margin", "2%", "--level", "0.9", "--interval", "bootstrap")
    )
    assert shown.exit_code == 0, shown.stderr
    headers = [
        [c.strip() for c in line.split("┃")] for line in shown.stdout.splitlines() if "┃" in line
    ]
    assert headers[1][2] == "difference [90% CI]" and headers[1][4] == "verdict ±0.010"
    base_mean = loaded[(BASELINE, "nDCG@10")].mean()
    assert headers[0][4] == f"verdict ±{0.02 * base_mean:.3f}"
    assert "90% percentile bootstrap interval" in " ".join(shown.stdout.split())
    bad = run_cli(*_args("--margin", "AP="))
    assert bad.exit_code == 1 and "--margin 'AP=' is neither a number" in bad.stderr


def test_csv_and_json_hold_every_column_of_the_long_form(loaded, run_cli):
    shown = run_cli(*_args("-f", "csv"))
    rows = list(csv.DictReader(io.StringIO(shown.stdout)))
    assert list(rows[0]) == list(COLUMNS) and len(rows) == len(RUNS) * len(MEASURES)
    better = next(r for r in rows if r["run"] == "better" and r["measure"] == "AP")
    both = loaded[[("better", "AP"), (BASELINE, "AP")]].to_numpy()
    low, high = scipy_stats.ttest_rel(both[:, 0], both[:, 1]).confidence_interval()
    assert float(better["delta_low"]) == pytest.approx(low, rel=1e-12)
    assert float(better["delta_high"]) == pytest.approx(high, rel=1e-12)
    records = json.loads(run_cli(*_args("-f", "json")).stdout)
    assert list(records[0]) == list(COLUMNS)
    wide = json.loads(run_cli(*_args("--wide", "-f", "json")).stdout)
    assert [r["run"] for r in wide] == RUNS and "AP verdict" in wide[1]
    long = run_cli(*_args("--long"))
    assert long.stdout.splitlines()[1].split("┃")[0].strip() == "run"


def test_the_forms_are_one_at_a_time(loaded, run_cli):
    bad = run_cli(*_args("--long", "--wide"))
    assert bad.exit_code == 1
    assert bad.stderr == "Error: --long and --wide are different tables; choose one\n"
