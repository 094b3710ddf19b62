"""What commands print: tables that fit the terminal (whole when piped), machine formats that
agree on every value (exact doubles, one spelling for missing values and booleans), small
p-values in scientific notation, one JSON writer for regress, titles and gate columns."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
import subprocess
import sys

import pytest
from conftest import EXAMPLES

from rankhouse import Warehouse

QRELS = str(EXAMPLES / "qrels.txt")
BM25 = str(EXAMPLES / "run.bm25.txt")
DENSE = str(EXAMPLES / "run.dense.txt")
CUTOFFS = [5, 10, 15, 20, 30, 100, 200, 500, 1000]


def _no_clipping(text: str, columns: int) -> None:
    """Every line fits and nothing is cut: no ellipsis, no empty header cells."""
    assert max(len(line) for line in text.splitlines()) <= columns, text
    assert "…" not in text
    assert not re.search(r"┃\s*┃", text), text


@pytest.fixture
def many_measures(run_cli):
    """bm25 and dense evaluated with AP and nDCG at nine cutoffs: 18 columns in history."""
    measures = [a for k in CUTOFFS for a in ("-m", f"AP@{k}", "-m", f"nDCG@{k}")]
    done = run_cli("eval", QRELS, BM25, DENSE, *measures)
    assert done.exit_code == 0, done.stderr
    return [f"{m}@{k}" for k in CUTOFFS for m in ("AP", "nDCG")]


def test_history_fits_80_columns_and_is_whole_when_piped(many_measures, run_cli, run_cli_tty):
    shown = run_cli_tty("history", columns=80)
    assert shown.exit_code == 0, shown.stderr
    _no_clipping(shown.stdout, 80)
    for header in ["ingested_at", "run", "system", "qrels", "gate", *many_measures]:
        assert re.search(rf"(^|\s){re.escape(header)}(\s|$)", shown.stdout), header
    # each part of the split table repeats the run column
    parts = shown.stdout.split("\n\n")
    assert len(parts) > 1
    assert all("bm25" in part and "dense" in part for part in parts)

    piped = run_cli("history", env={"COLUMNS": "80"})
    header = next(line for line in piped.stdout.splitlines() if "ingested_at" in line)
    assert all(name in header for name in many_measures)  # one table, one header line
    assert len(header) > 80


def test_history_orders_measure_columns_naturally_or_as_requested(many_measures, run_cli):
    every = run_cli("history", "-f", "csv").stdout.splitlines()[0].split(",")
    ap = [name for name in every if name.startswith("AP@") and not name.endswith(("low", "high"))]
    assert ap == [
        "AP@5",
        "AP@10",
        "AP@15",
        "AP@20",
        "AP@30",
        "AP@100",
        "AP@200",
        "AP@500",
        "AP@1000",
    ]
    asked = run_cli("history", "-m", "AP@1000", "-m", "AP@15", "-m", "AP@100", "-f", "csv")
    header = asked.stdout.splitlines()[0].split(",")[4:]
    assert [name for name in header if not name.endswith(("low", "high"))] == [
        "num_q",
        "AP@1000",
        "AP@15",
        "AP@100",
        "inputs",
        "new_inputs",
        "gate",
    ]


def test_compare_headers_are_never_cut(run_cli, run_cli_tty):
    args = ["compare", QRELS, BM25, DENSE, "-m", "nDCG@10", "-m", "AP", "-m", "P@5"]
    compact = run_cli_tty(*args, "--baseline", "bm25", columns=80)
    assert compact.exit_code == 0, compact.stderr
    _no_clipping(compact.stdout, 80)
    for measure in ("nDCG@10", "AP", "P@5"):
        assert f" {measure} " in compact.stdout
    shown = run_cli_tty(*args, "--baseline", "bm25", "--wide", columns=80)
    assert shown.exit_code == 0, shown.stderr
    _no_clipping(shown.stdout, 80)
    for measure in ("nDCG@10", "AP", "P@5"):
        for suffix in ("", " delta", " +", " -", " p", " p corr", " verdict"):
            assert f" {measure}{suffix} " in shown.stdout
    long = run_cli_tty(*args, "--baseline", "bm25", "--long", columns=80)
    _no_clipping(long.stdout, 80)
    assert " p_corrected " in long.stdout and " significant " in long.stdout


def test_catalogue_listings_show_whole_names_and_times(run_cli, run_cli_tty):
    assert run_cli("ingest", "qrels", QRELS, "--name", "a-rather-long-qrels-name").exit_code == 0
    shown = run_cli_tty("qrels", "list", columns=80)
    _no_clipping(shown.stdout, 80)
    assert "a-rather-long-qrels-name" in shown.stdout
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", shown.stdout)
    assert " 0..3 " in shown.stdout  # grades as one range in a table
    assert "judgments" in shown.stdout and "relevant" in shown.stdout
    full = run_cli("qrels", "list", "-f", "csv")
    row = next(csv.DictReader(io.StringIO(full.stdout)))
    assert (row["min_grade"], row["max_grade"]) == ("0", "3")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+", row["ingested_at"])


def test_sql_rows_split_to_fit_and_one_row_turns_vertical(run_cli, run_cli_tty):
    assert run_cli("eval", QRELS, BM25, DENSE, "-m", "AP", "-m", "nDCG@10").exit_code == 0
    query = "SELECT * FROM latest_evaluations WHERE measure = 'AP' ORDER BY value DESC"
    shown = run_cli_tty("sql", query, columns=80)
    assert shown.exit_code == 0, shown.stderr
    _no_clipping(shown.stdout, 80)
    columns = run_cli("sql", query, "-f", "csv").stdout.splitlines()[0].split(",")
    assert len(columns) == 17  # with input_signature (0011)
    for name in columns:
        assert f" {name} " in shown.stdout or shown.stdout.startswith(f" {name} "), name

    one = run_cli_tty("sql", query + " LIMIT 1", columns=80)
    lines = one.stdout.splitlines()
    assert lines[0].split() == ["field", "┃", "value"]
    fields = [line.split("│")[0].strip() for line in lines[2:] if "│" in line]
    assert [f for f in fields if f] == columns


def test_sql_prints_values_exactly_as_the_database_returns_them(run_cli):
    """An integer column with a NULL stays integers (a DataFrame would make it floats, and
    2**62 + 1 a float that is another number)."""
    assert run_cli("eval", QRELS, BM25, "-m", "AP").exit_code == 0
    query = "SELECT * FROM (VALUES (4611686018427387905, 2), (NULL, 3)) AS t(big, n) ORDER BY n"
    assert run_cli("sql", query, "-f", "csv").stdout.splitlines() == [
        "big,n",
        "4611686018427387905,2",
        ",3",
    ]
    assert json.loads(run_cli("sql", query, "-f", "json").stdout) == [
        {"big": 4611686018427387905, "n": 2},
        {"big": None, "n": 3},
    ]
    table = run_cli("sql", query).stdout.splitlines()
    assert table[2].split() == ["4611686018427387905", "│", "2"]
    assert table[3].split() == ["│", "3"]


def test_machine_formats_agree_and_tables_round(run_cli):
    args = ["compare", QRELS, BM25, DENSE, "-m", "AP", "--baseline", "bm25", "--long"]
    as_json = json.loads(run_cli(*args, "-f", "json").stdout)
    as_csv = list(csv.DictReader(io.StringIO(run_cli(*args, "-f", "csv").stdout)))
    as_tsv = list(csv.DictReader(io.StringIO(run_cli(*args, "-f", "tsv").stdout), delimiter="\t"))
    table = run_cli(*args).stdout

    with Warehouse(":memory:") as wh:
        expected = wh.compare(QRELS, [BM25, DENSE], ["AP"], baseline=BM25)
    base, dense = as_json
    # JSON: exact doubles, null for missing, true/false
    assert dense["mean"] == float(expected["mean"].iloc[1])
    assert dense["p_value"] == float(expected["p_value"].iloc[1])
    assert base["p_value"] is None and base["significant"] is None and base["improved"] is None
    assert dense["significant"] is False
    # CSV and TSV: the same values spelled as repr, '' for missing, true/false
    for rows in (as_csv, as_tsv):
        assert rows[1]["mean"] == repr(dense["mean"])
        assert rows[1]["p_value"] == repr(dense["p_value"])
        assert rows[0]["p_value"] == "" and rows[0]["significant"] == ""
        assert rows[1]["significant"] == "false"
        assert rows[1]["improved"] == str(dense["improved"])
    # the table rounds, leaves missing cells empty and says no
    assert f"{dense['mean']:.4f}" in table
    assert "nan" not in table and "<NA>" not in table and "True" not in table
    assert re.search(r"│\s+no\s*$", table.splitlines()[-1])


@pytest.fixture
def clear_winner(tmp_path):
    """30 queries, one relevant document each: 'first' ranks it first, 'later' second to
    fourth; their RR differ on every query (p of the paired t-test about 1e-29)."""
    qrels, first, later = [], [], []
    for q in range(30):
        qrels.append(f"q{q} 0 rel 1")
        depth = 2 + q % 3
        docs = ["rel"] + [f"n{i}" for i in range(1, 10)]
        shifted = [f"n{i}" for i in range(1, depth)] + ["rel"] + [f"n{i}" for i in range(depth, 10)]
        first += [f"q{q} Q0 {d} {r} {10 - r} first" for r, d in enumerate(docs, 1)]
        later += [f"q{q} Q0 {d} {r} {10 - r} later" for r, d in enumerate(shifted, 1)]
    for name, lines in (("qrels.txt", qrels), ("first.run", first), ("later.run", later)):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    return tmp_path


def test_small_p_values_are_scientific_in_tables(clear_winner, run_cli):
    args = ["compare", "qrels.txt", "first.run", "later.run", "-m", "RR", "--baseline", "first"]
    done = run_cli(*args, "--wide", "-f", "json")
    assert done.exit_code == 0, done.stderr
    p_value = json.loads(done.stdout)[1]["RR p"]
    assert 0 < p_value < 1e-4
    table = run_cli(*args, "--wide").stdout
    assert f" {p_value:.1e} " in table  # e.g. 1.2e-29, never 0.0000
    assert "0.0000" not in table.splitlines()[-1]


def test_regress_json_is_one_document_with_exact_p_values(clear_winner, run_cli, tmp_path):
    args = ["regress", "later", "--baseline", "first", "--qrels", "qrels.txt", "-m", "RR"]
    assert run_cli("ingest", "run", "first.run").exit_code == 0
    assert run_cli("ingest", "run", "later.run").exit_code == 0
    printed = run_cli(*args, "--format", "json", "--json", tmp_path / "gate.json")
    assert printed.exit_code == 1, printed.stderr
    written = (tmp_path / "gate.json").read_text()
    assert printed.stdout == written
    report = json.loads(written)
    p_value = report["measures"][0]["p_value"]
    assert 0 < p_value < 1e-4 and repr(p_value) in written  # not rounded to 15 places
    with Warehouse(tmp_path / "warehouse.duckdb") as wh:
        expected = wh.compare("qrels", ["later"], ["RR"], baseline="first")
    assert p_value == float(expected["p_value"].iloc[1])


@pytest.mark.parametrize(
    ("flag", "start"),
    [
        ("--markdown", "## Regression check FAILED (regressed): `later` vs `first`"),
        ("--json", "{\n"),
        ("--junit", "<?xml version='1.0' encoding='utf-8'?>\n<testsuites"),
    ],
)
def test_a_report_to_dash_goes_to_stdout(clear_winner, run_cli, tmp_path, flag, start):
    assert run_cli("ingest", "run", "first.run").exit_code == 0
    assert run_cli("ingest", "run", "later.run").exit_code == 0
    done = run_cli(
        "regress", "later", "--baseline", "first", "--qrels", "qrels.txt", "-m", "RR", flag, "-"
    )
    assert done.exit_code == 1, done.stderr
    assert done.stdout.startswith(start)
    assert not (tmp_path / "-").exists()


def test_two_reports_cannot_both_go_to_stdout(clear_winner, run_cli):
    done = run_cli(
        "regress",
        "later.run",
        "--baseline",
        "first.run",
        "--qrels",
        "qrels.txt",
        "-m",
        "RR",
        "--json",
        "-",
        "--markdown",
        "-",
    )
    assert done.exit_code == 2
    assert "only one report can go to stdout, not --markdown and --json" in done.stderr


def test_eval_title_names_the_qrels_set_once(run_cli):
    done = run_cli("eval", QRELS, BM25, "-m", "AP")
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines()[0].strip() == "qrels set 'qrels': mean ±95% CI (t)"
    assert "qrels qrels" not in done.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_first_night_of_the_nightly_gate_shows_first_run(tmp_path):
    env = {
        "PATH": f"{sys.prefix}/bin:/usr/bin:/bin",
        "RANKHOUSE": f"{sys.executable} -m rankhouse",
        "RANKHOUSE_DB": str(tmp_path / "n.duckdb"),
        "REPORT_DIR": str(tmp_path / "reports"),
        "HTML_REPORT": "",
    }

    def night(number: int) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                "bash",
                str(EXAMPLES / "nightly.sh"),
                str(EXAMPLES / "nights" / f"bm25.night{number}.txt"),
                QRELS,
            ],
            env={**env, "RUN_NAME": f"night{number}", "COMMIT": f"c{number}"},
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=600,
        )

    first = night(1)
    assert first.returncode == 0, first.stderr
    assert "PASS: night1 is the first run of system 'bm25'" in first.stderr
    report = json.loads((tmp_path / "reports" / "regress.json").read_text())
    assert (report["baseline"], report["passed"], report["measures"]) == (None, True, [])
    history = subprocess.run(
        [sys.executable, "-m", "rankhouse", "history", "-f", "json"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    assert [row["gate"] for row in json.loads(history.stdout)] == ["first run"]
    assert night(2).returncode == 0
    history = subprocess.run(
        [sys.executable, "-m", "rankhouse", "history", "-f", "csv"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    gates = [row["gate"] for row in csv.DictReader(io.StringIO(history.stdout))]
    assert gates == ["first run", "pass"]


def test_no_pandas_warning_reaches_stderr(many_measures, run_cli, tmp_path):
    for args in (
        ["history"],
        [
            "compare",
            QRELS,
            BM25,
            DENSE,
            *[a for m in many_measures for a in ("-m", m)],
            "--baseline",
            "bm25",
        ],
        ["report", "-o", tmp_path / "r.html", "-m", "AP@5"],
    ):
        done = run_cli(*args)
        assert done.exit_code == 0, done.stderr
        assert "Warning" not in done.stderr and "PerformanceWarning" not in done.stderr


# --- large and infinite numbers ---------------------------------------------------------------

EXTREMES = (
    "SELECT * FROM (VALUES (1, 1e308, 0.25), (2, CAST('inf' AS DOUBLE), -1e16), "
    "(3, CAST('-inf' AS DOUBLE), 123456789012345.0), (4, NULL, CAST('nan' AS DOUBLE))) "
    "AS t(n, x, y) ORDER BY n"
)


@pytest.fixture
def a_warehouse(run_cli):
    assert run_cli("ingest", "qrels", QRELS).exit_code == 0


def test_a_table_shows_a_huge_number_in_scientific_notation(a_warehouse, run_cli):
    done = run_cli("sql", EXTREMES)
    assert done.exit_code == 0, done.stderr
    cells = [line.replace("│", " ").split() for line in done.stdout.splitlines()[2:]]
    assert cells == [
        ["1", "1.0000e+308", "0.2500"],  # not 309 digits
        ["2", "inf", "-1.0000e+16"],
        ["3", "-inf", "123456789012345.0000"],  # 15 digits: every one is the number's own
        ["4"],  # missing and NaN: empty cells
    ]


def test_json_writes_infinity_apart_from_a_missing_value(a_warehouse, run_cli):
    """JSON has no infinity: "Infinity" / "-Infinity", never null (a missing value), never
    the bare Infinity that is not JSON; CSV writes inf, -inf and an empty cell."""
    done = run_cli("sql", EXTREMES, "-f", "json")
    assert done.exit_code == 0, done.stderr
    assert "Infinity," not in done.stdout.replace('"Infinity"', "")  # only as strings
    assert [row["x"] for row in json.loads(done.stdout)] == [1e308, "Infinity", "-Infinity", None]
    assert [row["y"] for row in json.loads(done.stdout)][3] is None  # NaN is missing
    as_csv = run_cli("sql", EXTREMES, "-f", "csv")
    assert [line.split(",")[1] for line in as_csv.stdout.splitlines()[1:]] == [
        "1e+308",
        "inf",
        "-inf",
        "",
    ]


def test_every_json_writer_spells_infinity_alike():
    """The commands' tables (print_rows) and the gate's JSON (regress_files) share the cells."""
    from rankhouse.cells import json_value
    from rankhouse.cli.commands.output import OutputFormat, print_rows
    from rankhouse.regress import RegressResult
    from rankhouse.regress.files import to_json

    out = io.StringIO()
    print_rows(["v"], [(math.inf,), (-math.inf,), (math.nan,)], OutputFormat.json, file=out)
    assert json.loads(out.getvalue()) == [{"v": "Infinity"}, {"v": "-Infinity"}, {"v": None}]
    verdict = {"measure": "AP", "drop": math.inf, "p_value": math.nan, "regressed": False}
    gate = RegressResult(1, "run", "base", "qrels", True, [verdict], {"max_drop": math.inf})
    document = json.loads(to_json(gate))
    assert document["measures"][0] == {
        "measure": "AP",
        "drop": "Infinity",
        "p_value": None,
        "regressed": False,
    }
    assert document["settings"]["max_drop"] == "Infinity"
    assert json_value([math.inf, {"x": -math.inf}]) == ["Infinity", {"x": "-Infinity"}]
