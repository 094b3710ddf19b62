"""A second name for stored content: ``ingest --name X`` of a run or qrels set already stored
under another name makes ``X`` an alias of it, which every command that takes a name accepts.

The real CLI in subprocesses, on a DuckDB file and on a PostgreSQL server (docs/ingest.md,
"Names given again").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, CliResult

from rankhouse import Warehouse
from rankhouse.errors import ConflictError

NIGHT1 = EXAMPLES / "nights" / "bm25.night1.txt"
NIGHT2 = EXAMPLES / "nights" / "bm25.night2.txt"
QRELS = EXAMPLES / "qrels.txt"
README_EVAL = [
    "eval",
    "examples/qrels.txt",
    "examples/run.bm25.txt",
    "examples/run.dense.txt",
    *("-m", "nDCG@10", "-m", "AP", "-m", "P@5", "-m", "RR"),
]


@pytest.fixture
def cli(backend_target: str, tmp_path: Path):
    """``cli("runs", "list")``: the real CLI against a new warehouse on each backend."""

    def run(*args: str | Path) -> CliResult:
        env = {k: v for k, v in os.environ.items() if k != "RANKHOUSE_DB"} | {"COLUMNS": "200"}
        done = subprocess.run(
            [sys.executable, "-m", "rankhouse", "--db", backend_target, *map(str, args)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        return CliResult(done.returncode, done.stdout, done.stderr)

    return run


def _ok(done: CliResult) -> CliResult:
    assert done.exit_code == 0, done.stderr
    return done


def _listing(cli, what: str) -> list[dict]:
    return json.loads(_ok(cli(what, "list", "--format", "json")).stdout)


def test_a_run_stored_again_under_another_name_is_evaluated_by_it(cli):
    """The issue's reproduction: the second ingest stores nothing and names the run."""
    assert _ok(cli("ingest", "run", NIGHT1, "--name", "n1")).stderr == (
        "stored run 'n1' (id 1): 8 queries, 160 rows\n"
    )
    again = _ok(cli("ingest", "run", NIGHT1, "--name", "n2"))
    assert again.stderr == "already stored as run 'n1': 'n2' now names it too\n"
    assert again.stdout == ""
    done = _ok(cli("eval", QRELS, "n2", "-m", "AP", "--format", "csv"))
    assert done.stdout.splitlines()[1].startswith("n1,")  # the stored run, evaluated once
    [run] = _listing(cli, "runs")
    assert (run["name"], run["aliases"]) == ("n1", "n2")
    assert "n2" in _ok(cli("runs", "list")).stdout
    shown = json.loads(_ok(cli("runs", "show", "n2", "--format", "json")).stdout)
    assert (shown["name"], shown["aliases"]) == ("n1", ["n2"])
    # given again under the alias: nothing new, and still said
    assert _ok(cli("ingest", "run", NIGHT1, "--name", "n2")).stderr == again.stderr
    assert _ok(cli("ingest", "run", NIGHT1, "--name", "n1")).stderr == (
        "already stored as run 'n1' (id 1), nothing new\n"
    )
    [run] = _listing(cli, "runs")
    assert run["aliases"] == "n2"


def test_a_qrels_set_stored_again_under_another_name(cli):
    _ok(cli("ingest", "qrels", QRELS))
    done = _ok(cli("ingest", "qrels", QRELS, "--name", "dl19"))
    assert done.stderr == "already stored as qrels set 'qrels': 'dl19' now names it too\n"
    evaluated = _ok(cli("eval", "dl19", NIGHT1, "-m", "AP"))
    assert "qrels set 'qrels'" in evaluated.stdout
    [qrels] = _listing(cli, "qrels")
    assert (qrels["name"], qrels["aliases"]) == ("qrels", "dl19")
    assert _ok(cli("history", "--qrels", "dl19", "-m", "AP", "--format", "json")).stdout != "[]\n"


def test_every_command_that_takes_a_name_takes_the_alias(cli):
    _ok(cli("ingest", "qrels", QRELS, "--name", "q"))
    _ok(cli("ingest", "qrels", QRELS, "--name", "dl19"))
    _ok(cli("ingest", "run", EXAMPLES / "run.bm25.txt", "--name", "bm25"))
    _ok(cli("ingest", "run", NIGHT1, "--name", "n1"))
    _ok(cli("ingest", "run", NIGHT1, "--name", "tonight"))
    measures = ["-m", "AP", "-m", "nDCG@10"]
    evaluated = _ok(cli("eval", "dl19", "tonight", *measures, "--format", "json"))
    assert {row["run"] for row in json.loads(evaluated.stdout)} == {"n1"}
    history = _ok(cli("history", "--run", "tonight", "-m", "AP", "--format", "json"))
    assert [row["run"] for row in json.loads(history.stdout)] == ["n1"]
    compared = _ok(cli("compare", "dl19", "bm25", "tonight", *measures, "--baseline", "tonight"))
    assert "n1" in compared.stdout
    gated = cli("regress", "tonight", "--baseline", "bm25", "--qrels", "dl19", "-m", "AP:0.5")
    assert gated.exit_code == 0, gated.stderr
    assert "PASS" in gated.stderr
    shown = _ok(cli("runs", "show", "tonight"))
    assert "aliases" in shown.stdout and "tonight" in shown.stdout


def test_an_unchanged_night_passes_its_gate(cli):
    """A nightly job that names each night: a night whose run file is byte-identical to an
    earlier one is gated as that run (exit 0 when it passes), never an error (exit 2)."""
    gate = ["--baseline", "last-passed", "--qrels", QRELS, "-m", "AP:0.1"]
    for night, run_file in (("night1", NIGHT1), ("night2", NIGHT2), ("night3", NIGHT2)):
        _ok(cli("ingest", "run", run_file, "--name", night, "--meta", f"night={night}"))
        _ok(cli("eval", QRELS, night, "-m", "AP"))
        gated = cli("regress", night, *gate, "--allow-missing-baseline")
        assert gated.exit_code == 0, gated.stderr
    assert "'night3' now names it too" in cli("ingest", "run", NIGHT2, "--name", "night3").stderr
    assert [(r["name"], r["aliases"]) for r in _listing(cli, "runs")] == [
        ("night1", ""),
        ("night2", "night3"),
    ]


def test_a_name_is_a_name_or_an_alias_never_both(cli):
    _ok(cli("ingest", "run", NIGHT1, "--name", "n1"))
    _ok(cli("ingest", "run", NIGHT2, "--name", "other"))
    # the alias asked for is another run's name
    taken = cli("ingest", "run", NIGHT1, "--name", "other")
    assert taken.exit_code == 1
    assert taken.stderr.startswith(
        "Error: run name 'other' is already used by different content (id 2); pass --replace"
    )
    assert [r["aliases"] for r in _listing(cli, "runs")] == ["", ""]
    _ok(cli("ingest", "run", NIGHT1, "--name", "n2"))
    # content stored as another run, and new content, under an alias's name
    clash = cli("ingest", "run", NIGHT2, "--name", "n2")
    assert (clash.exit_code, clash.stderr) == (
        1,
        "Error: run name 'n2' is already used by different content (another name of run 'n1', "
        "id 1); pass --replace to overwrite it, or --name to choose another name\n",
    )
    clash = cli("ingest", "run", EXAMPLES / "run.bm25.txt", "--name", "n2")
    assert clash.exit_code == 1
    assert clash.stderr.startswith(
        "Error: run name 'n2' is already used by different content (another name of run 'n1', "
        "id 1: 160 rows differ, in 8 queries"
    )
    # --replace keeps its meaning: what holds the name goes (an alias: the alias alone)
    replaced = _ok(cli("ingest", "run", EXAMPLES / "run.bm25.txt", "--name", "n2", "--replace"))
    assert replaced.stderr.startswith("stored run 'n2'")
    assert [(r["name"], r["aliases"]) for r in _listing(cli, "runs")] == [
        ("n1", ""),
        ("other", ""),
        ("n2", ""),
    ]
    _ok(cli("ingest", "run", NIGHT1, "--name", "other", "--replace"))
    assert [(r["name"], r["aliases"]) for r in _listing(cli, "runs")] == [
        ("n1", "other"),
        ("n2", ""),
    ]


def test_a_file_given_to_eval_under_an_alias_name_is_a_new_version(cli):
    """A run file's tag that is an alias is taken as by a run: new content is its next
    version, never a second holder of the name."""
    _ok(cli("ingest", "run", NIGHT1, "--name", "n1"))
    _ok(cli("ingest", "run", NIGHT1, "--name", "bm25"))  # the files' tag
    _ok(cli("eval", QRELS, NIGHT2, "-m", "AP"))
    assert [(r["name"], r["aliases"]) for r in _listing(cli, "runs")] == [
        ("n1", "bm25"),
        ("bm25@2", ""),
    ]
    # the same content as the alias's run, given to eval: the stored run, no new name
    _ok(cli("eval", QRELS, NIGHT1, "-m", "AP", "--name", "bm25@2"))
    assert len(_listing(cli, "runs")) == 2


def test_rm_of_an_alias_removes_the_alias_alone(cli):
    _ok(cli("ingest", "run", NIGHT1, "--name", "n1"))
    _ok(cli("ingest", "run", NIGHT1, "--name", "n2"))
    _ok(cli("ingest", "run", NIGHT1, "--name", "n3"))
    assert _ok(cli("runs", "rm", "n2")).stderr == (
        "removed alias 'n2' of run 'n1' (id 1); the run stays\n"
    )
    assert [(r["name"], r["aliases"]) for r in _listing(cli, "runs")] == [("n1", "n3")]
    assert cli("eval", QRELS, "n2", "-m", "AP").stderr.startswith("Error: no run named 'n2'")
    assert _ok(cli("runs", "rm", "n1")).stderr == "removed run 'n1' (id 1) and its alias 'n3'\n"
    assert _listing(cli, "runs") == []
    _ok(cli("ingest", "qrels", QRELS))
    _ok(cli("ingest", "qrels", QRELS, "--name", "dl19"))
    # an alias goes without --yes: nothing else goes with it
    [qrels] = _listing(cli, "qrels")
    assert _ok(cli("qrels", "rm", "dl19")).stderr == (
        f"removed alias 'dl19' of qrels set 'qrels' (id {qrels['id']}); the qrels set stays\n"
    )
    _ok(cli("ingest", "qrels", QRELS, "--name", "dl19"))
    refused = cli("qrels", "rm", "qrels")
    assert "and its alias 'dl19'; pass --yes" in refused.stderr
    assert _ok(cli("qrels", "rm", "qrels", "--yes")).stderr.endswith("and its alias 'dl19'\n")
    assert _ok(cli("ingest", "qrels", QRELS, "--name", "dl19")).stderr.startswith(
        "stored qrels set 'dl19'"
    )


def test_several_tags_each_take_their_name(cli, tmp_path):
    (tmp_path / "multi.txt").write_text("1 Q0 a 1 2.0 x\n1 Q0 b 1 2.0 y\n")
    _ok(cli("ingest", "run", "multi.txt", "--name", "m"))
    done = _ok(cli("ingest", "run", "multi.txt", "--name", "k"))
    assert done.stderr == (
        "already stored as run 'm/x': 'k/x' now names it too\n"
        "already stored as run 'm/y': 'k/y' now names it too\n"
    )
    assert [(r["name"], r["aliases"]) for r in _listing(cli, "runs")] == [
        ("m/x", "k/x"),
        ("m/y", "k/y"),
    ]


def test_the_python_api_names_stored_content_too(any_warehouse):
    wh = any_warehouse
    [first] = wh.ingest_run(NIGHT1, name="n1")
    [again] = wh.ingest_run(NIGHT1, name="n2")
    assert (again.created, again.id, again.name, again.alias) == (False, first.id, "n1", "n2")
    assert first.alias is None
    assert wh.run("n2")["name"] == "n1"
    assert list(wh.runs()["aliases"]) == ["n2"]
    qrels = wh.ingest_qrels(QRELS, name="q")
    assert wh.ingest_qrels(QRELS, name="dl19").alias == "dl19"
    assert wh.qrels("dl19")["id"] == qrels.id
    result = wh.evaluate("dl19", ["n2"], ["AP"])
    assert list(result.summary["run"]) == ["n1"]
    with pytest.raises(ConflictError, match="another name of run 'n1'"):
        wh.ingest_run(NIGHT2, name="n2")
    wh.remove_run("n2")
    assert list(wh.runs()["aliases"]) == [""]


def test_runs_looked_up_together_are_found_as_one_by_one(any_warehouse):
    """``get_runs`` (three statements for any number) finds each run as ``get_run`` does: by
    name, else by alias, else by id; a missing one is named as ``get_run`` names it."""
    from rankhouse.catalog import get_run, get_runs
    from rankhouse.errors import NotFoundError

    wh = any_warehouse
    [first] = wh.ingest_run(NIGHT1, name="n1")
    wh.ingest_run(NIGHT1, name="n2")  # the same content: n2 is an alias of n1
    [second] = wh.ingest_run(NIGHT2, name="n3")
    keys = ["n3", "n2", first.id, str(second.id), "n1"]
    assert get_runs(wh, keys) == [get_run(wh, key) for key in keys]
    assert [row["name"] for row in get_runs(wh, keys)] == ["n3", "n1", "n1", "n3", "n1"]
    with pytest.raises(NotFoundError) as one:
        get_run(wh, "nosuch")
    with pytest.raises(NotFoundError) as together:
        get_runs(wh, ["n1", "nosuch"])
    assert str(together.value) == str(one.value)


def test_readme_first_command_then_the_report_script(tmp_path):
    """README's first command stores the qrels as 'qrels'; examples/report.sh then stores
    them as 'qrels.txt' and names them so: the report is written."""
    root = EXAMPLES.parent
    db = tmp_path / "example.duckdb"
    env = {k: v for k, v in os.environ.items() if k != "RANKHOUSE_DB"}
    first = subprocess.run(
        [sys.executable, "-m", "rankhouse", "--db", str(db), *README_EVAL],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert first.returncode == 0, first.stderr
    report = tmp_path / "report.html"
    done = subprocess.run(
        ["bash", str(root / "examples" / "report.sh"), str(report)],
        cwd=tmp_path,
        env=env | {"RANKHOUSE": f"{sys.executable} -m rankhouse", "RANKHOUSE_DB": str(db)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    assert "already stored as qrels set 'qrels': 'qrels.txt' now names it too" in done.stderr
    assert report.stat().st_size > 0
    with Warehouse(db, read_only=True) as wh:
        assert list(wh.qrels_sets()["aliases"]) == ["qrels.txt"]
