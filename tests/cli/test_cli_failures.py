"""A failed command changes nothing, and never shows a traceback.

A command that exits non-zero leaves the warehouse exactly as it found it: what it ingested
on the way is removed again, and a file it cannot write is named before anything is ingested,
evaluated or stored. Where a failure comes after the warehouse changed (a report file that
cannot be written once the gate ran), the error says what was kept and what was removed. Every
failure is one ``Error:`` line (docs/cli.md); ``regress`` exits 2 for whatever stops the gate
and 1 only for a regression.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cli_helpers import ERROR_LINE, cli_env
from conftest import EXAMPLES, CliResult

from rankhouse import OutputError, RankhouseError, Warehouse

QRELS = str(EXAMPLES / "qrels.txt")
BM25 = str(EXAMPLES / "run.bm25.txt")
DENSE = str(EXAMPLES / "run.dense.txt")
NO_OVERLAP = "q99 Q0 doc023 1 2.0 stray\n"
GATE = ["--baseline", "bm25", "--qrels", "ex", "-m", "AP"]
#: A night of the dense system: a run file a command ingests on its way.
DENSE_TONIGHT = (EXAMPLES / "run.dense.txt").read_text().replace(" dense", " tonight")


def contents(db_path: Path) -> dict[str, list]:
    """Every row of the warehouse's catalogue, evaluations and gate checks."""
    with Warehouse(db_path, read_only=True) as wh, wh.connect() as conn:
        return {
            table: sorted(map(tuple, conn.execute(f"SELECT * FROM {table}").all()), key=repr)
            for table in (
                "runs",
                "qrels_sets",
                "judgments",
                "run_rows",
                "evaluations",
                "evaluation_values",
                "regress_checks",
                "regress_verdicts",
            )
        }


@pytest.fixture
def stocked(run_cli, db_path):
    """The tour's warehouse: qrels ``ex``, runs ``bm25`` and ``dense`` evaluated with AP."""
    assert run_cli("ingest", "qrels", QRELS, "--name", "ex").exit_code == 0
    assert run_cli("ingest", "run", BM25, "--name", "bm25").exit_code == 0
    assert run_cli("ingest", "run", DENSE, "--name", "dense").exit_code == 0
    assert run_cli("eval", "ex", "bm25", "dense", "-m", "AP").exit_code == 0
    return contents(db_path)


def failed_alone(done, code: int = 1) -> None:
    """The command failed with ``code`` and one ``Error:`` line, nothing on stdout."""
    assert done.exit_code == code, done.stderr
    assert re.match(ERROR_LINE, done.stderr), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


# --- a failed command changes nothing -------------------------------------------------------


def test_eval_of_a_run_with_no_query_in_common_keeps_no_run(stocked, run_cli, db_path, tmp_path):
    (tmp_path / "stray.run").write_text(NO_OVERLAP)
    done = run_cli("eval", "ex", "stray.run", "-m", "AP")
    failed_alone(done)
    assert "have no query in common (the run answers 1 query, none of the 8 judged)" in done.stderr
    assert contents(db_path) == stocked


def test_eval_of_new_qrels_and_a_bad_run_keeps_neither(stocked, run_cli, db_path, tmp_path):
    (tmp_path / "new.qrels").write_text("q1 0 doc023 1\nq2 0 doc010 1\n")
    (tmp_path / "one.run").write_text("q1 Q0 doc023 1 2.0 one\n")
    (tmp_path / "bad.run").write_text("q1 Q0 doc023 1 x bad\n")
    done = run_cli("eval", "new.qrels", "one.run", "bad.run", "-m", "AP")
    failed_alone(done)
    assert "score 'x' is not a number" in done.stderr
    assert contents(db_path) == stocked


def test_compare_with_an_unknown_baseline_keeps_no_run(stocked, run_cli, db_path, tmp_path):
    (tmp_path / "tonight.run").write_text(DENSE_TONIGHT)
    done = run_cli("compare", "ex", "tonight.run", "bm25", "-m", "AP", "--baseline", "nosuch")
    failed_alone(done)
    assert "no run named 'nosuch'" in done.stderr
    assert contents(db_path) == stocked


def test_the_python_api_keeps_nothing_of_a_failed_evaluation(stocked, db_path, tmp_path):
    (tmp_path / "stray.run").write_text(NO_OVERLAP)
    with Warehouse(db_path) as wh, pytest.raises(RankhouseError, match="no query in common"):
        wh.evaluate("ex", tmp_path / "stray.run", ["AP"])
    assert contents(db_path) == stocked


@pytest.mark.parametrize("flag", ["--junit", "--json", "--markdown"])
@pytest.mark.parametrize("where", ["folder", "missing folder"])
def test_regress_checks_its_report_paths_first(stocked, run_cli, db_path, tmp_path, flag, where):
    (tmp_path / "reports").mkdir()
    (tmp_path / "tonight.run").write_text(DENSE_TONIGHT)
    path = "reports" if where == "folder" else "nowhere/gate.out"
    done = run_cli("regress", "tonight.run", *GATE, flag, path)
    failed_alone(done, 2)
    expected = "is a folder, not a file" if where == "folder" else "does not exist"
    assert f"the {flag} report" in done.stderr and expected in done.stderr
    assert contents(db_path) == stocked  # no check, and the run file not kept either
    assert not (tmp_path / "nowhere").exists()


#: Runs the CLI with a disk that fills up as the report is renamed into place.
_FULL_DISK = """
import sys
import rankhouse.outputs
from rankhouse.cli.entry import main

def full(*args, **kwargs):
    raise OSError(28, 'No space left on device')

rankhouse.outputs.os.replace = full
main(sys.argv[1:])
"""


def test_a_report_that_fails_late_takes_its_check_with_it(stocked, db_path, tmp_path):
    """A report path that passes every check but cannot be written once the gate has run
    (the disk is full): the check the gate stored goes again, and no half file stays."""
    done = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, "--db", str(db_path)]
        + ["regress", "dense", *GATE, "--markdown", "gate.md"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=cli_env(),
        timeout=300,
    )
    failed_alone(CliResult(done.returncode, done.stdout, done.stderr), 2)
    assert "no space left on device" in done.stderr
    assert "the gate's check was removed" in done.stderr
    assert "what it ingested and evaluated stays stored" in done.stderr
    assert contents(db_path) == stocked
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith((".gate", "gate"))) == []


def _device(folder: Path) -> Path:
    """A character device like /dev/null (major 1, minor 3), made in ``folder``."""
    path = folder / "null"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root (CAP_MKNOD)")
    return path


def test_a_device_is_written_through_never_replaced(stocked, run_cli, db_path, tmp_path):
    """As root a rename over /dev/null would replace the machine's /dev/null: the report
    and the gate's files write through a device and leave it a device."""
    device = _device(tmp_path)
    done = run_cli("report", "-o", device, "--run", BM25, "--qrels", "ex")
    assert done.exit_code == 0, done.stderr
    assert done.stderr.strip().endswith(f"wrote {device}")
    for flag in ("--junit", "--json", "--markdown"):
        done = run_cli("regress", "dense", *GATE, flag, device)
        assert done.exit_code == 0, done.stderr
    assert stat.S_ISCHR(device.stat().st_mode) and device.stat().st_rdev == os.makedev(1, 3)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".null")]


def test_a_named_pipe_gets_the_report(stocked, run_cli, tmp_path):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()))
    reader.start()
    done = run_cli("regress", "dense", *GATE, "--json", pipe)
    reader.join(timeout=60)
    assert done.exit_code == 0, done.stderr
    assert json.loads(received[0])["passed"] is True
    assert stat.S_ISFIFO(pipe.stat().st_mode)


def test_a_socket_and_a_device_as_folder_are_refused_first(stocked, run_cli, db_path, tmp_path):
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        done = run_cli("report", "-o", "sock", "--run", BM25, "--qrels", "ex")
    failed_alone(done)
    assert "cannot write the report 'sock': it is a socket, not a file" in done.stderr
    device = _device(tmp_path)
    done = run_cli("regress", "dense", *GATE, "--junit", f"{device}/gate.xml")
    failed_alone(done, 2)
    assert f"{str(device)!r} is a device, not a folder" in done.stderr
    assert contents(db_path) == stocked


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux's /proc")
def test_a_folder_that_takes_no_file_is_refused_before_the_work(stocked, run_cli, db_path):
    """/proc lets root write (os.access says yes) but creates no file: said before anything
    is evaluated or stored, not after."""
    done = run_cli("report", "-o", "/proc/report.html", "--run", BM25, "--qrels", "ex")
    failed_alone(done)
    assert "the folder '/proc' takes no new file" in done.stderr
    assert "stay stored" not in done.stderr
    assert contents(db_path) == stocked


@pytest.mark.parametrize("where", ["folder", "missing folder"])
def test_report_checks_its_output_path_first(stocked, run_cli, db_path, tmp_path, where):
    (tmp_path / "reports").mkdir()
    path = "reports" if where == "folder" else "nowhere/report.html"
    done = run_cli("report", "-o", path, "--run", BM25, "--qrels", "ex")
    failed_alone(done)
    assert contents(db_path) == stocked  # neither the IPrec points nor anything else
    assert not list((tmp_path / "reports").iterdir())


def test_report_to_a_missing_folder_creates_no_warehouse(run_cli, db_path, tmp_path):
    done = run_cli("report", "-o", "nowhere/report.html", "--qrels", QRELS, "--run", BM25)
    failed_alone(done)
    assert not db_path.exists()


def test_the_python_api_checks_the_report_path_first(stocked, db_path, tmp_path):
    with Warehouse(db_path) as wh, pytest.raises(OutputError, match="is a folder, not a file"):
        wh.report(tmp_path, runs=[BM25])
    assert contents(db_path) == stocked


# --- regress: only a regression exits 1 ----------------------------------------------------

#: Runs ``rankhouse regress`` with one of its steps replaced by one that raises.
_BROKEN_GATE = """
import sys
import rankhouse.regress.gate as regress
from rankhouse.cli.entry import main

def broken(*args, **kwargs):
    raise {error}

regress._verdicts = broken
main(sys.argv[1:])
"""


@pytest.mark.parametrize(
    "error",
    [
        "MemoryError()",
        "OSError(5, 'Input/output error')",
        "ConnectionResetError('server closed the connection unexpectedly')",
        "RuntimeError('something nobody foresaw')",
    ],
)
def test_regress_exits_2_on_whatever_stops_the_gate(stocked, db_path, tmp_path, error):
    done = subprocess.run(
        [sys.executable, "-c", _BROKEN_GATE.format(error=error), "--db", str(db_path)]
        + ["regress", "dense", *GATE],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=cli_env(),
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert re.match(ERROR_LINE, done.stderr), done.stderr
    assert contents(db_path) == stocked


def test_regress_still_exits_1_for_a_regression_and_0_for_a_pass(stocked, run_cli):
    gate = ["regress", "bm25", "--baseline", "dense", "--qrels", "ex", "-m", "AP"]
    gate += ["--mode", "significance"]
    within = run_cli(*gate, "--max-drop", "0.01")  # 0.0061 lower: within the tolerance
    assert within.exit_code == 0, within.stderr
    worse = run_cli(*gate, "--max-drop", "0", "--alpha", "0.99")
    assert worse.exit_code == 1 and worse.stderr.startswith("FAIL: AP regressed"), worse.stderr
    # eight queries cannot show it no worse than 0.01 lower, nor show a drop: exit 3
    unshown = run_cli(*gate[:-2], "--max-drop", "0.01")
    assert unshown.exit_code == 3, unshown.stderr
    assert unshown.stderr.splitlines()[-1].startswith("FAIL: AP not shown non-inferior")
    # the default gate, calibrated on tonight's queries, passes it
    assert run_cli(*gate[:-2]).exit_code == 0


# --- what a command cannot take, said before it starts ------------------------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["sql", "COMMIT; DELETE FROM runs"], "COMMIT is not taken here"),
        (["sql", "SELECT 1; -- done\nROLLBACK"], "ROLLBACK is not taken here"),
        (["ingest", "run", "-"], "standard input ('-') is not read here"),
        (["eval", "-", BM25, "-m", "AP"], "standard input ('-') is not read here: give the qrels"),
        (["eval", "ex", "-", "-m", "AP"], "standard input ('-') is not read here: give the run"),
        (["runs", "list", "--db", "other.duckdb"], "rankhouse --db PATH runs list ..."),
        (["history", "--read-only"], "--read-only is a global option and goes before"),
    ],
)
def test_refused_before_anything_changes(stocked, run_cli, db_path, args, said):
    done = run_cli(*args)
    assert done.exit_code in (1, 2), done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr
    assert contents(db_path) == stocked
    assert not (db_path.parent / "other.duckdb").exists()


def test_an_in_memory_warehouse_is_refused_on_the_command_line(run_cli, tmp_path):
    """It would keep nothing: the ingest would be lost when the command ends."""
    done = run_cli("--db", ":memory:", "ingest", "run", BM25, db=False)
    failed_alone(done)
    assert "--db :memory: keeps nothing once the command ends" in done.stderr
    # trec-eval, which keeps nothing anyway, still takes it
    kept = run_cli("--db", ":memory:", "trec-eval", "-m", "map", QRELS, BM25, db=False)
    assert kept.exit_code == 0 and kept.stdout.startswith("map"), kept.stderr


# --- never a traceback ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--seed", "-1"], "Invalid value for '--seed': -1 is not in the range x>=0."),
        (
            ["--permutations", "99999999999"],
            "Invalid value for '--permutations': 99999999999 is not in the range 1<=x<=1000000.",
        ),
    ],
)
def test_compare_bounds_its_seed_and_resamples(stocked, run_cli, option, said):
    done = run_cli(
        "compare",
        "ex",
        "bm25",
        "dense",
        "-m",
        "AP",
        "--baseline",
        "bm25",
        "--test",
        "randomization",
        *option,
    )
    assert done.exit_code == 2 and "Traceback" not in done.stderr
    assert done.stderr.rstrip().endswith(said)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"seed": -1}, "seed must be a whole number at least 0"),
        ({"permutations": 99_999_999_999}, "permutations must lie between 1 and 1,000,000"),
        ({"permutations": 0}, "permutations must lie between 1 and 1,000,000"),
    ],
)
def test_the_python_api_bounds_them_too(stocked, db_path, settings, message):
    with Warehouse(db_path) as wh, pytest.raises(RankhouseError, match=message):
        wh.compare("ex", ["bm25", "dense"], ["AP"], baseline="bm25", test="bootstrap", **settings)


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_many_resamples_of_many_queries_stay_in_bounded_memory(test):
    """5,000 resamples of 2,000 paired values drawn at once took 720 MB (the randomization
    test; a million of them 16 GB per thousand queries); drawn in batches, under 200 MB."""
    import tracemalloc

    from rankhouse.stats import paired_test

    run = [((q * 7919) % 1000) / 1000 for q in range(2000)]
    baseline = [((q * 104729) % 1000) / 1000 for q in range(2000)]
    tracemalloc.start()
    try:
        p_value = paired_test(run, baseline, test, permutations=5000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert 0 <= p_value <= 1
    assert peak < 200e6, f"{peak / 1e6:.0f} MB"


def test_sql_json_writes_dates_and_times_inside_lists_and_structs(stocked, run_cli):
    query = (
        "SELECT DATE '2024-01-02' AS d, [DATE '2024-01-02', NULL] AS days, "
        "{'at': TIMESTAMP '2024-01-02 03:04:05', 'n': 1.5} AS s"
    )
    done = run_cli("sql", query, "--format", "json")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout) == [
        {
            "d": "2024-01-02",
            "days": ["2024-01-02", None],
            "s": {"at": "2024-01-02T03:04:05", "n": 1.5},
        }
    ]
    as_csv = run_cli("sql", query, "--format", "csv").stdout.splitlines()
    assert (
        as_csv[1]
        == '2024-01-02,"[""2024-01-02"", null]","{""at"": ""2024-01-02T03:04:05"", ""n"": 1.5}"'
    )


def _cli_bytes(db_path: Path, args: list[str], data: bytes) -> subprocess.CompletedProcess:
    """The CLI on the warehouse with ``data`` as its standard input, output as bytes."""
    return subprocess.run(
        [sys.executable, "-m", "rankhouse", "--db", str(db_path), *args],
        input=data,
        capture_output=True,
        cwd=db_path.parent,
        env=cli_env(),
        timeout=300,
    )


def test_sql_from_standard_input_must_be_utf8(stocked, db_path):
    done = _cli_bytes(db_path, ["sql", "-"], "SELECT 'déjà' AS word".encode("latin-1"))
    assert done.returncode == 1
    assert done.stderr.decode() == (
        "Error: the query read from standard input is not UTF-8 text (byte 0xe9 at offset "
        "9); convert it first, e.g. iconv -f latin1 -t utf-8\n"
    )
    good = _cli_bytes(db_path, ["sql", "-", "-f", "csv"], "SELECT 'déjà' AS word".encode())
    assert good.stdout.decode().splitlines() == ["word", "déjà"]


@pytest.mark.parametrize("query", ["", "   ", ";", "-- nothing here\n", "/* nor here */ ;"])
def test_sql_refuses_an_empty_statement(stocked, db_path, query):
    done = _cli_bytes(db_path, ["sql", "-"], query.encode())
    assert done.returncode == 1
    assert done.stderr.decode().startswith("Error: no SQL statement given"), done.stderr
    assert done.stdout == b""


def test_db_on_a_loop_of_symbolic_links(run_cli, tmp_path):
    (tmp_path / "a.duckdb").symlink_to(tmp_path / "b.duckdb")
    (tmp_path / "b.duckdb").symlink_to(tmp_path / "a.duckdb")
    for args in (["runs", "list"], ["ingest", "run", BM25], ["trec-eval", QRELS, BM25]):
        done = run_cli("--db", "a.duckdb", *args, db=False)
        failed_alone(done)
        assert "'a.duckdb' cannot be resolved: a loop of symbolic links" in done.stderr
    with pytest.raises(RankhouseError, match="a loop of symbolic links"):
        Warehouse(tmp_path / "a.duckdb")


# --- sql: a large result streams, a table is capped and says so -----------------------------


def test_a_large_result_starts_printing_at_once(stocked, db_path, tmp_path):
    """A hundred million rows as CSV: the first lines arrive while DuckDB still reads."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "rankhouse", "--db", str(db_path), "sql", "-f", "csv"]
        + ["SELECT range AS n FROM range(100000000)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=cli_env(),
    )
    try:
        first = [process.stdout.readline() for _ in range(3)]
        waited = time.monotonic() - started
    finally:
        process.kill()
        process.communicate()
    assert first == [b"n\n", b"0\n", b"1\n"]
    assert waited < 60  # printing all of it would take minutes


def test_a_table_shows_a_stated_number_of_rows(stocked, run_cli):
    done = run_cli("sql", "SELECT range AS n FROM range(3000000)")
    assert done.exit_code == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 + 1000 and lines[-1].strip() == "999"
    assert done.stderr == (
        "note: the first 1,000 rows shown; the result has more (--limit N shows N rows, "
        "--limit 0 every row; --format tsv, csv or json prints every row as it comes)\n"
    )
    few = run_cli("sql", "SELECT range AS n FROM range(10)", "--limit", "3", "-f", "json")
    assert json.loads(few.stdout) == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert "the first 3 rows shown" in few.stderr
    every = run_cli("sql", "SELECT range AS n FROM range(1500)", "--limit", "0")
    assert len(every.stdout.splitlines()) == 2 + 1500 and every.stderr == ""
    exact = run_cli("sql", "SELECT range AS n FROM range(1000)")
    assert exact.stderr == ""  # a result of exactly the limit has nothing more


def test_streamed_json_is_the_document_print_rows_writes(stocked, run_cli):
    """The streaming writer and the whole-table writer agree byte for byte."""
    import io

    import duckdb

    from rankhouse.cli.commands.output import OutputFormat, print_rows

    query = (
        "SELECT range AS n, [range, NULL] AS l, {'x': 'a\"é', 'e': []} AS s, "
        "CAST('inf' AS DOUBLE) AS big FROM range(3)"
    )
    streamed = run_cli("sql", query, "-f", "json").stdout
    con = duckdb.connect()
    rows = con.execute(query).fetchall()
    out = io.StringIO()
    print_rows([d[0] for d in con.description], rows, OutputFormat.json, file=out)
    assert streamed == out.getvalue()
    assert json.loads(streamed)[0]["big"] == "Infinity"
