"""Every command on a PostgreSQL warehouse does what it does on a DuckDB file.

One session of the real CLI (ingest of files and of a multi-tag run, eval, trec-eval with a
warehouse, history, compare, regress, runs and qrels list/show/rm, report, sql, --read-only
and ``$RANKHOUSE_DB``) runs against a new file and a new server schema side by side; every
step's exit code, stdout and stderr must be the same, once times (which differ by the
microsecond) and the working folder are masked. The expected outputs are the file's, which the
other test files check against trec_eval and by hand.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import EXAMPLES

_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?")
# Run ids: a DuckDB sequence may skip a number where a PostgreSQL one does not (and the
# reverse after a failed transaction); ids are compared as the order of the rows instead.
_RUN_ID = re.compile(r"\(id \d+\)|^\d+,|^id,\d+$", re.M)

#: Refused in the database's own words, which differ: only "--write" must be in both.
REFUSED_WRITE = "sql 'DELETE FROM runs'"
#: (command line, expected exit code): each step runs on both backends, in this order.
SESSION = [
    ("ingest qrels qrels.txt", 0),
    ("ingest run run.bm25.txt --meta commit=abc", 0),
    ("ingest run run.bm25.txt", 0),  # the same content: reused, not stored twice
    ("ingest run run.dense.txt --name bm25", 1),  # a name held by other content
    ("ingest run dense.csv --name dense --columns qid=q,docid=d,score=s", 0),
    ("ingest run multi.txt --name multi", 0),  # two tags: two runs
    ("runs list -f csv", 0),
    ("runs show multi/sysA -f csv", 0),
    ("qrels list -f csv", 0),
    ("eval qrels bm25 dense multi/sysA -m AP -m nDCG@10 -f csv", 0),
    ("eval qrels bm25 -m P@5 -m AP --per-query -f csv", 0),
    ("eval qrels nights/bm25.night1.txt -m AP -l 2 -f csv", 0),  # a file: ingested
    ("trec-eval -q -c -m all_trec qrels.txt run.dense.txt", 0),
    ("trec-eval -q -m map -m relstring.5 qrels.txt run.bm25.txt", 0),
    ("history -m AP -m nDCG@10 -f csv", 0),
    ("compare qrels bm25 dense -m AP --baseline bm25 -f csv", 0),
    ("regress dense --baseline bm25 --qrels qrels -m AP:0.2 -f json", 0),
    ("ingest run nights/bm25.night2.txt --name night-2 --meta commit=c2", 0),
    ("ingest run nights/bm25.night3.txt --name night-3 --meta commit=c3", 0),
    ("regress night-3 --baseline previous --qrels qrels -m AP -m nDCG@10", 1),  # it dropped
    ("sql 'SELECT run_name, measure, value FROM latest_evaluations ORDER BY 1, 2' -f csv", 0),
    ("sql 'SELECT run_name, measure, status FROM regress_results ORDER BY 1, 2' -f csv", 0),
    (REFUSED_WRITE, 1),  # read-only unless --write
    ("--read-only eval qrels bm25 dense -m AP -f csv", 0),
    ("--read-only eval qrels bm25 -m RR@3", 1),  # not stored: not computed
    ("--read-only ingest run run.dense.txt", 1),
    ("report -o report.html --qrels qrels --baseline bm25", 0),
    ("runs rm multi/sysB", 0),
    ("qrels rm qrels.txt --yes", 0),  # trec-eval's copy of the qrels, and its evaluations
    ("runs list -f csv", 0),
    ("qrels list -f csv", 0),
    (
        "sql 'SELECT count(*) AS orphans FROM evaluation_values WHERE evaluation_id NOT IN "
        "(SELECT id FROM evaluations)' -f csv",
        0,
    ),
]


def _folder(path: Path) -> Path:
    """A working folder holding the example files under the names SESSION uses."""
    path.mkdir()
    for name in ("qrels.txt", "run.bm25.txt", "run.dense.txt"):
        shutil.copy(EXAMPLES / name, path / name)
    shutil.copytree(EXAMPLES / "nights", path / "nights")
    lines = (EXAMPLES / "run.dense.txt").read_text().splitlines()
    csv = ["q,d,s"] + [f"{f[0]},{f[2]},{f[4]}" for f in (line.split() for line in lines)]
    (path / "dense.csv").write_text("\n".join(csv) + "\n")
    multi = []  # the bm25 run with its first four topics tagged sysA, the rest sysB
    for line in (EXAMPLES / "run.bm25.txt").read_text().splitlines():
        fields = line.split()
        fields[5] = "sysA" if fields[0] in {"q1", "q2", "q3", "q4"} else "sysB"
        multi.append(" ".join(fields))
    (path / "multi.txt").write_text("\n".join(multi) + "\n")
    return path


def _masked(text: str, cwd: Path) -> str:
    return _RUN_ID.sub("<id>", _TIME.sub("<time>", text.replace(str(cwd), "<cwd>")))


def _session(target: str, cwd: Path) -> list[tuple[int, str, str]]:
    """Run SESSION against ``target`` (as $RANKHOUSE_DB) in ``cwd``; the masked outputs."""
    env = {k: v for k, v in os.environ.items() if k != "RANKHOUSE_DB"}
    env |= {"COLUMNS": "200", "RANKHOUSE_DB": target}
    outputs = []
    for line, _ in SESSION:
        done = subprocess.run(
            [sys.executable, "-m", "rankhouse", *shlex.split(line)],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=300,
        )
        outputs.append((done.returncode, _masked(done.stdout, cwd), _masked(done.stderr, cwd)))
    return outputs


@pytest.mark.slow
def test_every_command_does_on_a_server_what_it_does_on_a_file(postgres_url, tmp_path):
    on_file = _folder(tmp_path / "file")
    on_server = _folder(tmp_path / "server")
    with ThreadPoolExecutor(2) as pool:
        file_run = pool.submit(_session, str(on_file / "warehouse.duckdb"), on_file)
        server_run = pool.submit(_session, postgres_url, on_server)
        expected, got = file_run.result(), server_run.result()
    assert [code for code, _, _ in expected] == [code for _, code in SESSION], expected
    differences = []
    for (line, _), theirs, ours in zip(SESSION, expected, got, strict=True):
        if line == REFUSED_WRITE:
            assert "read-only" in ours[2] and "--write" in ours[2], ours
            theirs, ours = theirs[:2], ours[:2]
        if ours != theirs:
            differences.append((line, theirs, ours))
    assert differences == []
    assert "Traceback" not in "".join(out for _, _, out in got)
    report = (on_server / "report.html").read_text()
    assert "dense" in report and "bm25" in report


def test_the_python_api_on_a_server(any_warehouse):
    """DataFrames in, frames out, the same catalogue calls (both backends)."""
    import pandas as pd

    wh = any_warehouse
    qrels = pd.DataFrame(
        {"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "grade": [1, 0, 2]}
    )
    run = pd.DataFrame(
        {
            "query_id": ["1", "1", "2", "2"],
            "doc_id": ["b", "a", "c", "d"],
            "score": [2.0, 1.0, 0.5, 0.5],
            "system": ["x", "x", "x", "y"],
        }
    )
    stored = wh.ingest_qrels(qrels, name="q")
    runs = wh.ingest_run(run, name="frame")
    assert [r.name for r in runs] == ["frame/x", "frame/y"]
    assert wh.qrels("q")["num_judgments"] == 3 and stored.created
    result = wh.evaluate("q", ["frame/x", "frame/y"], ["RR", "NumRet"])
    assert result.summary.set_index("run")["RR"].to_dict() == {"frame/x": 0.75, "frame/y": 0.0}
    assert list(wh.runs()["name"]) == ["frame/x", "frame/y"]
    assert len(wh.history(measures=["RR"])) == 2
    wh.remove_run("frame/y")
    wh.remove_qrels("q")
    assert list(wh.runs()["name"]) == ["frame/x"] and wh.qrels_sets().empty
