r"""The command line's behaviour, byte for byte: a transcript of the real ``rankhouse`` CLI.

Every case runs commands as subprocesses (``python -m rankhouse``, as tests/cli_helpers.py
does) and compares exit code, stdout and stderr with a golden file in
``tests/cli/cli_transcript/`` (one file per command: ``help/``, the README's ``tour/`` and
``nightly/`` sequences, ``trec-eval/`` and ``errors/``). The transcript guards a
restructuring: it knows nothing of the package's modules, only the command line, the bundled
``examples/`` and inputs written here.

Regenerate the golden files (then read the diff) with::

    RANKHOUSE_UPDATE_TRANSCRIPT=1 python -m pytest -q tests/cli/test_cli_transcript.py

What varies from run to run or machine to machine is normalised before comparing (see
:func:`normalise`): the case's temporary folder is ``<TMP>``, the checkout ``<PROJECT>``,
timestamps ``<TIMESTAMP>`` (dates ``<DATE>``), the version ``<VERSION>``, the size of the
HTML report ``<SIZE>``. The environment is fixed (:func:`cli_env`): 100 columns, a dumb
terminal, the C.UTF-8 locale and UTF-8 output, UTC, no ``$RANKHOUSE_DB``, no row cache, so
the output is not the terminal's or the locale of whoever runs it. Tables are printed to a
pipe (whole, however wide).

Cases avoid tables whose column width depends on a normalised value (a path, a timestamp with
its microseconds, which DuckDB prints without trailing zeros): they print those as csv or
json. No command prints a Python traceback (one that did would move with the code's paths
and line numbers): ``report -o DIR/r.html`` and ``regress ... --junit DIR/gate.xml`` where
DIR does not exist, once tracebacks, are error cases here.

A golden file holds the command line, ``exit code: N``, then ``--- stdout`` and ``--- stderr``
with the output as printed (a last line without its newline is followed by ``\ no newline
at end``), then any file the command wrote that the case records.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pytest
from schema_helpers import insert_run_and_qrels, migrate_by_hand

import rankhouse
from rankhouse.backends.duckdb_file.connection import DuckDBConnection

pytestmark = pytest.mark.slow  # scripts/check --quick leaves these out

PROJECT_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = PROJECT_ROOT / "examples"
GOLDEN = Path(__file__).resolve().parent / "cli_transcript"
UPDATE = os.environ.get("RANKHOUSE_UPDATE_TRANSCRIPT") == "1"


@dataclass(frozen=True)
class Step:
    """One command and what is recorded besides its exit code, stdout and stderr."""

    args: tuple[str, ...]
    show: tuple[str, ...] = ()  # files (in the case folder) whose text is recorded
    exists: tuple[str, ...] = ()  # files whose existence alone is recorded
    listing: bool = False  # record the names in the case folder after the command


@dataclass(frozen=True)
class Scenario:
    """Commands run one after the other in one folder; each step has its golden file."""

    steps: tuple[tuple[str, Step], ...]  # (golden name, step)
    warehouse: bool = False  # start from the template warehouse (qrels ex, runs bm25, dense)
    files: dict[str, bytes | None] = field(default_factory=dict)  # None: a folder


def cmd(line: str, **options) -> Step:
    """``rankhouse LINE`` (split as a shell splits it), run in the case folder."""
    return Step(tuple(shlex.split(line)), **options)


def w(line: str, **options) -> Step:
    """``rankhouse --db w.duckdb LINE``: on the case's warehouse, in its folder."""
    return cmd(f"--db w.duckdb {line}", **options)


def single(name: str, step: Step, **options) -> Scenario:
    return Scenario(((name, step),), **options)


def sequence(group: str, steps: list[tuple[str, Step]], **options) -> Scenario:
    """Steps named ``group/NN-slug`` in order."""
    return Scenario(
        tuple((f"{group}/{i:02d}-{slug}", step) for i, (slug, step) in enumerate(steps, 1)),
        **options,
    )


# --- help ---------------------------------------------------------------------------------

#: Every command and sub-command (src/rankhouse/commands/*.py registers them).
COMMANDS = [
    "",
    "ingest",
    "ingest qrels",
    "ingest run",
    "runs",
    "runs list",
    "runs show",
    "runs rm",
    "qrels",
    "qrels list",
    "qrels rm",
    "eval",
    "measures",
    "history",
    "compare",
    "regress",
    "gate",
    "gate status",
    "gate accept",
    "report",
    "sql",
    "migrate",
]

HELP = [
    single(f"help/{path.replace(' ', '-') or 'rankhouse'}", cmd(f"{path} --help"))
    for path in COMMANDS
]
HELP += [
    single("help/trec-eval-h", cmd("trec-eval -h")),
    single("help/trec-eval--help", cmd("trec-eval --help")),
    single("help/no-arguments", cmd("")),
    single("help/version", cmd("--version")),
    single("help/version-after-db", w("--version")),
]

# --- the README's tour on the bundled examples ----------------------------------------------

QRELS = "examples/qrels.txt"
BM25 = "examples/run.bm25.txt"
DENSE = "examples/run.dense.txt"
LATEST_AP = "SELECT run_name, measure, value, num_q FROM latest_evaluations WHERE measure = 'AP'"

TOUR = sequence(
    "tour",
    [
        ("ingest-qrels", w(f"ingest qrels {QRELS} --name ex")),
        (
            "ingest-run-meta",
            w(f"ingest run {BM25} --name bm25 --meta commit=3f2a9c1 --meta team=search"),
        ),
        ("ingest-run-tag-name", w(f"ingest run {DENSE} --meta commit=8d41e07")),
        ("ingest-run-again", w(f"ingest run {BM25}")),
        ("ingest-qrels-again", w(f"ingest qrels {QRELS} --name ex")),
        ("runs-list", w("runs list")),
        ("runs-list-csv", w("runs list --format csv")),
        ("qrels-list", w("qrels list")),
        ("qrels-list-json", w("qrels list --format json")),
        ("runs-show-json", w("runs show bm25 --format json")),
        ("eval-table", w("eval ex bm25 dense -m nDCG@10 -m AP -m P@5 -m RR")),
        ("eval-table-reused", w("eval ex bm25 dense -m nDCG@10 -m AP -m P@5 -m RR")),
        ("eval-csv", w("eval ex bm25 dense -m nDCG@10,AP --format csv")),
        ("eval-json", w("eval ex bm25 dense -m AP -m 'P(rel=2)@10' -m R@1000 --format json")),
        ("eval-per-query-csv", w("eval ex bm25 -m ndcg_cut.10,20 --per-query --format csv")),
        ("eval-per-query-table", w("eval ex bm25 dense -m AP --per-query")),
        (
            "eval-files-level-skip-tsv",
            w(f"eval {QRELS} {DENSE} -m AP -m MAP -l 2 --missing-queries skip --format tsv"),
        ),
        ("eval-default-measures", w("eval ex bm25")),
        ("eval-recompute-json", w("eval ex dense -m nDCG@10 --recompute --format json")),
        (
            "compare-holm",
            w("compare ex bm25 dense -m nDCG@10 -m AP --baseline bm25 --test t --correction holm"),
        ),
        (
            "compare-holm-csv",
            w(
                "compare ex bm25 dense -m nDCG@10 -m AP --baseline bm25 --test t"
                " --correction holm --format csv"
            ),
        ),
        (
            "compare-randomization-json",
            w(
                "compare ex bm25 dense -m AP --baseline bm25 --test randomization"
                " --permutations 2000 --format json"
            ),
        ),
        (
            "compare-wilcoxon-long",
            w("compare ex bm25 dense -m AP -m nDCG@10 --baseline bm25 --test wilcoxon --long"),
        ),
        (
            "compare-names-per-query",
            w("compare ex bm25 dense -m AP --names BM25,Dense --per-query --format csv"),
        ),
        ("sql-select", w(f'sql "{LATEST_AP} ORDER BY value DESC"')),
        ("sql-select-json", w(f'sql "{LATEST_AP} ORDER BY run_name" --format json')),
        ("sql-write", w('sql --write "CREATE TABLE notes AS SELECT 1 AS x"')),
        ("sql-read-written", w('sql "SELECT * FROM notes" --format csv')),
        ("measures", w("measures")),
        ("measures-one", w("measures ndcg_cut_10")),
        ("measures-csv", w("measures --format csv")),
        ("runs-rm", w("runs rm dense")),
        ("runs-list-after-rm", w("runs list --format tsv")),
        ("qrels-rm", w("qrels rm ex --yes")),
        ("qrels-list-after-rm", w("qrels list --format csv")),
    ],
)

NIGHTS = [f"examples/nights/bm25.night{n}.txt" for n in (1, 2, 3, 4)]
COMMITS = ["3f2a9c1", "8d41e07", "c95b2fa", "1e7d3b4"]
GATE = "--qrels ex -m nDCG@10 -m AP"
#: The nights' gate: 8 queries show non-inferiority to within 0.1 at best
NIGHT_GATE = "--baseline last-passed --qrels ex -m nDCG@10:0.1 -m AP:0.1"

NIGHTLY = sequence(
    "nightly",
    [
        *(
            (f"ingest-night{n}", w(f"ingest run {night} --name bm25-night{n} --meta commit={c}"))
            for n, night, c in zip((1, 2, 3, 4), NIGHTS, COMMITS, strict=True)
        ),
        (
            "regress-first-allowed",
            w(f"regress bm25-night1 {NIGHT_GATE} --allow-missing-baseline"),
        ),
        (
            "regress-night2-junit",
            w(
                f"regress bm25-night2 {NIGHT_GATE} --junit gate2.xml",
                show=("gate2.xml",),
            ),
        ),
        (
            "regress-night3-junit",
            w(
                f"regress bm25-night3 {NIGHT_GATE} --junit gate3.xml",
                show=("gate3.xml",),
            ),
        ),
        (
            "regress-night4-markdown",
            w(f"regress bm25-night4 {NIGHT_GATE} --markdown -"),
        ),
        (
            "regress-json",
            w(f"regress bm25-night3 --baseline bm25 {GATE} --relative --max-drop 0.5 --json -"),
        ),
        (
            "regress-csv",
            w(f"regress dense --baseline bm25 {GATE} --correction bonferroni --format csv"),
        ),
        ("eval-file-named", w("eval ex first.run --name nightly --meta night=1 -m AP -m P@2")),
        (
            "eval-file-next-version",
            w("eval ex second.run --name nightly --meta night=2 -m AP -m P@2"),
        ),
        ("history-versions", w("history --system sys --format csv")),
        ("history", w("history")),
        ("history-system", w("history --system bm25 -m nDCG@10 -m AP")),
        ("history-csv", w("history -m AP --format csv")),
        ("history-run-json", w("history --run bm25-night3 -m AP --format json")),
        (
            "report",
            w(
                "report -o report.html --qrels ex --baseline bm25 -m nDCG@10 -m AP",
                exists=("report.html",),
            ),
        ),
        (
            "sql-tables",
            w(
                'sql "SELECT table_name, table_type FROM information_schema.tables ORDER BY ALL"'
                " --format csv"
            ),
        ),
        ("sql-regress-results", w('sql "SELECT * FROM regress_results ORDER BY ALL" --format csv')),
        ("sql-migrations", w('sql "SELECT * FROM schema_migrations ORDER BY ALL" --format json')),
        ("regress-best", w(f"regress bm25-night4 {NIGHT_GATE.replace('last-passed', 'best')}")),
        (
            "regress-significance",
            w(f"regress bm25-night1 --baseline bm25 {GATE} --mode significance"),
        ),
        (
            "regress-drift",
            w(
                f"regress bm25-night4 {NIGHT_GATE} --max-drift rbo@10:0.9 "
                "--max-drift overlap@10:0.95 --markdown -"
            ),
        ),
        # the calibrated gate against the system's pinned reference (pinned now: night 2,
        # the newest earlier night that passed), calibrating on tonight's queries
        ("regress-reference-night3", w(f"regress bm25-night3 --baseline reference {GATE}")),
        ("regress-reference-night4", w(f"regress bm25-night4 --baseline reference {GATE}")),
        (
            "regress-not-shown",
            w("regress bm25-night4 --baseline reference --qrels ex -m nDCG@10:0.01"),
        ),
        (
            "regress-not-shown-pass",
            w(
                "regress bm25-night4 --baseline reference --qrels ex "
                "-m nDCG@10:0.01 --not-shown pass --format csv"
            ),
        ),
        ("gate-status", w("gate status --format csv")),
        ("gate-accept", w("gate accept bm25-night3 --qrels ex --reason 'the new index'")),
        ("regress-reference-accepted", w(f"regress bm25-night3 --baseline reference {GATE}")),
        (
            "sql-gate-references",
            w(
                'sql "SELECT system_tag, run_name, reason FROM gate_references ORDER BY id" '
                "--format csv"
            ),
        ),
        (
            "compare-gate-words",
            w(
                f"compare ex bm25 bm25-night3 {GATE.replace('--qrels ex ', '')} "
                "--baseline bm25 --margin 0.1"
            ),
        ),
    ],
    warehouse=True,
    # two runs of one system tag, from files that eval stores as nightly, nightly@2
    files={
        "first.run": "".join(
            f"q{q} Q0 doc0{q}0 1 2.5 sys\nq{q} Q0 doc023 2 1.5 sys\n" for q in range(1, 9)
        ).encode(),
        "second.run": "".join(
            f"q{q} Q0 doc023 1 2.5 sys\nq{q} Q0 doc0{q}0 2 1.5 sys\n" for q in range(1, 9)
        ).encode(),
    },
)

#: compare's verdicts, all pairs and drift, on the template warehouse and two nights.
COMPARE = sequence(
    "compare",
    [
        ("ingest-night3", w(f"ingest run {NIGHTS[2]} --name night3")),
        ("ingest-night4", w(f"ingest run {NIGHTS[3]} --name night4")),
        ("verdicts", w("compare ex bm25 dense night3 night4 -m nDCG@10 -m AP --baseline bm25")),
        (
            "margin-bootstrap-drift",
            w(
                "compare ex bm25 dense night3 night4 -m AP --baseline bm25 --margin 2% "
                "--interval bootstrap --permutations 2000 --drift --drift-depth 20"
            ),
        ),
        ("wide-tsv", w("compare ex bm25 night4 -m AP --baseline bm25 --wide --format tsv")),
        (
            "all-pairs",
            w("compare ex bm25 dense night3 night4 -m nDCG@10 --all-pairs --permutations 2000"),
        ),
        (
            "all-pairs-t-bh-csv",
            w(
                "compare ex bm25 dense night3 night4 -m AP --all-pairs --test t --correction bh "
                "-f csv"
            ),
        ),
        (
            "sql-drift",
            w(
                'sql "SELECT run_name, baseline_name, k, p, num_q, rbo FROM drift_results '
                'ORDER BY ALL"'
            ),
        ),
    ],
    warehouse=True,
)

TREC_EVAL = [
    single("trec-eval/all-trec-per-query", cmd(f"trec-eval -q -m all_trec {QRELS} {BM25}")),
    single("trec-eval/default", cmd(f"trec-eval {QRELS} {DENSE}")),
    single(
        "trec-eval/measures-c",
        cmd(f"trec-eval -c -m map -m P.5,10 -m ndcg_cut.10 {QRELS} {DENSE}"),
    ),
    single("trec-eval/per-query-only", cmd(f"trec-eval -q -n -m recip_rank {QRELS} {BM25}")),
    single("trec-eval/stored", w(f"trec-eval -m map {QRELS} {BM25}", listing=True)),
]

# --- errors -----------------------------------------------------------------------------------

BAD_INPUTS: dict[str, bytes | None] = {
    "badscore.run": b"q1 Q0 doc023 1 2.5 t\nq1 Q0 doc036 2 1.5abc t\n",
    "badgrade.qrels": b"q1 0 doc023 1\nq1 0 doc036 1.7\n",
    "short.qrels": b"q1 0 doc023\n",
    "dup.qrels": b"q1 0 doc023 1\nq2 0 doc010 0\nq1 0 doc023 0\n",
    "dup.run": b"q1 Q0 doc023 1 2.0 t\nq1 Q0 doc023 2 1.0 t\n",
    "latin1.qrels": b"q1 0 doc023 1\nq1 0 d\xe9j\xe0 1\n",
    "nooverlap.run": b"q99 Q0 doc023 1 2.0 t\n",
    "empty.run": b"",
    "comments.run": b"# nothing but a comment\n\n",
    "notdb.duckdb": b"this is not a database\n",
    "runs": None,
    "dbdir": None,
}


def error(name: str, step: Step, warehouse: bool = True) -> Scenario:
    """One command in a folder holding the bad inputs and (``warehouse``) the template."""
    return single(f"errors/{name}", step, warehouse=warehouse, files=BAD_INPUTS)


NIGHT1 = NIGHTS[0]
NONE = "--db none.duckdb"  # a warehouse that does not exist

ERRORS = [
    error("eval-missing-run-file", w("eval ex missing.run -m AP")),
    error("eval-missing-qrels-file", w(f"eval missing.qrels {BM25} -m AP")),
    error("eval-swapped-files", w(f"eval {BM25} {QRELS} -m AP")),
    error("eval-stored-run-as-qrels", w("eval bm25 dense -m AP")),
    error("eval-unknown-measure", w("eval ex bm25 -m ndgc@10")),
    error("eval-measure-case", w("eval ex bm25 -m ndcg@10")),
    error("eval-empty-measure", w("eval ex bm25 -m ''")),
    error("eval-rbp-persistence-out-of-range", w("eval ex bm25 -m 'RBP(p=1.5)'")),
    error("eval-ndcg-gains-not-numbers", w("eval ex bm25 -m \"nDCG(gains={0:'a',1:4})\"")),
    error("eval-bad-format", w("eval ex bm25 -m AP --format xml")),
    error("eval-flag-with-value", w("eval ex bm25 -m AP --per-query true")),
    error("eval-bad-level", w("eval ex bm25 -m AP -l x")),
    error("eval-no-arguments", w("eval")),
    error("eval-folder", w("eval ex runs -m AP")),
    error("eval-no-overlap", w("eval ex nooverlap.run -m AP")),
    error("read-command-no-warehouse", cmd(f"{NONE} runs list", listing=True), False),
    error("history-no-warehouse", cmd(f"{NONE} history", listing=True), False),
    error("read-only-ingest", w(f"--read-only ingest run {DENSE}")),
    error("read-only-not-stored", w("--read-only eval ex bm25 -m P@7")),
    error(
        "read-only-no-warehouse",
        cmd(f"{NONE} --read-only eval {QRELS} {BM25} -m AP", listing=True),
        False,
    ),
    error("ingest-bad-score", w("ingest run badscore.run")),
    error("ingest-bad-grade", w("ingest qrels badgrade.qrels")),
    error("ingest-short-qrels-line", w("ingest qrels short.qrels")),
    error("ingest-duplicate-qrels", w("ingest qrels dup.qrels")),
    error("ingest-duplicate-run", w("ingest run dup.run")),
    error("ingest-not-utf8", w("ingest qrels latin1.qrels")),
    error("ingest-folder", w("ingest run runs")),
    error("ingest-missing-file", w("ingest run missing.run")),
    error("ingest-empty-file", w("ingest run empty.run")),
    error("ingest-only-comments", w("ingest run comments.run")),
    error("ingest-run-as-qrels", w(f"ingest qrels {BM25}")),
    error("ingest-qrels-as-run", w(f"ingest run {QRELS}")),
    error("ingest-name-taken", w(f"ingest run {NIGHT1} --name dense")),
    error("ingest-meta-reserved", w(f"ingest run {NIGHT1} --meta source=me")),
    error("ingest-meta-not-pair", w(f"ingest run {NIGHT1} --meta novalue")),
    error("ingest-columns-on-trec", w(f"ingest run {NIGHT1} --columns qid=foo")),
    error("ingest-bad-delimiter", w(f"ingest run {NIGHT1} --format csv --delimiter xx")),
    error("ingest-bad-order", w(f"ingest run {NIGHT1} --order banana")),
    error("db-unsupported-scheme", cmd("--db mysql://user@host/db runs list"), False),
    error("db-folder", cmd("--db dbdir runs list"), False),
    error("db-not-duckdb", cmd("--db notdb.duckdb runs list"), False),
    error("sql-syntax-error", w('sql "SELEC 1"')),
    error("sql-write-without-write", w('sql "CREATE TABLE t (x INTEGER)"')),
    error("sql-unknown-table", w('sql "SELECT * FROM nosuch"')),
    error("history-unknown-run", w("history --run nosuch")),
    error("history-unknown-measure", w("history -m nosuch")),
    error("history-bad-since", w("history --since 2024-13-45")),
    error("compare-unknown-baseline", w("compare ex bm25 dense -m AP --baseline nosuch")),
    error("compare-one-run", w("compare ex bm25 -m AP --baseline bm25")),
    error("compare-bad-correction", w("compare ex bm25 dense -m AP --correction nosuch")),
    error("compare-names-count", w("compare ex bm25 dense -m AP --names a")),
    error("compare-bad-alpha", w("compare ex bm25 dense -m AP --baseline bm25 --alpha 1.5")),
    error("compare-bad-round", w("compare ex bm25 dense -m AP --round x")),
    error("compare-missing-queries-file", w("compare ex bm25 dense -m AP --queries nofile.txt")),
    error("compare-no-measure", w("compare ex bm25 dense")),
    error("compare-tukey-against-baseline", w("compare ex bm25 dense -m AP -b bm25 --test tukey")),
    error("compare-drift-without-baseline", w("compare ex bm25 dense -m AP --drift")),
    error(
        "compare-all-pairs-correction",
        w("compare ex bm25 dense -m AP --all-pairs --correction holm"),
    ),
    error("compare-long-and-wide", w("compare ex bm25 dense -m AP --long --wide")),
    error("compare-bad-margin", w("compare ex bm25 dense -m AP -b bm25 --margin AP=x")),
    error("regress-first-run", w("regress bm25 --baseline previous --qrels ex -m AP")),
    error(
        "regress-new-system-fail",
        w(
            "regress dense --baseline reference --qrels ex -m AP --allow-missing-baseline "
            "--new-system fail"
        ),
    ),
    error("gate-accept-no-reason", w("gate accept bm25 --qrels ex --reason ' '")),
    error("regress-unknown-baseline", w("regress dense --baseline nosuch --qrels ex -m AP")),
    error("regress-bad-margin", w("regress dense --baseline bm25 --qrels ex -m AP:-1")),
    error(
        "regress-bad-drift",
        w("regress dense --baseline bm25 --qrels ex -m AP --max-drift rbo@100:2"),
    ),
    error(
        "regress-negative-max-drop",
        w("regress dense --baseline bm25 --qrels ex -m AP --max-drop -1"),
    ),
    error("runs-rm-unknown", w("runs rm nosuch")),
    error("runs-show-unknown", w("runs show nosuch")),
    error("qrels-rm-unknown", w("qrels rm nosuch")),
    error("qrels-rm-without-yes", w("qrels rm ex")),
    error("history-unknown-system", w("history --system nosuch")),
    error("report-missing-folder", w("report -o nodir/r.html", listing=True)),
    error("report-folder", w("report -o runs", listing=True)),
    error(
        "regress-junit-missing-folder",
        w("regress dense --baseline bm25 --qrels ex -m AP --junit nodir/gate.xml"),
    ),
    error("regress-json-folder", w("regress dense --baseline bm25 --qrels ex -m AP --json runs")),
    error("compare-negative-seed", w("compare ex bm25 dense -m AP --baseline bm25 --seed -1")),
    error(
        "compare-too-many-permutations",
        w("compare ex bm25 dense -m AP --baseline bm25 --permutations 99999999999"),
    ),
    error("sql-empty", w("sql ''")),
    error("sql-only-comment", w("sql '/* nothing */;'")),
    error("measures-unknown", w("measures nosuch")),
    error("report-unknown-qrels", w("report -o r.html --qrels nosuch", listing=True)),
    error("unknown-command", w("bogus")),
    error("unknown-global-option", cmd("--bogus runs list")),
    error("global-option-after-command", cmd("runs list --db rankhouse.duckdb")),
    error("db-in-memory", cmd("--db :memory: runs list"), False),
    error("ingest-standard-input", w("ingest run -")),
    error("sql-commit", w('sql "COMMIT; DELETE FROM runs"')),
    error("report-to-proc", w("report -o /proc/r.html", listing=True)),
    error("report-into-a-device", w("report -o /dev/null/r.html", listing=True)),
    error("trec-eval-unknown-option", cmd(f"trec-eval --bogus {QRELS} {BM25}"), False),
    error("trec-eval-missing-file", cmd(f"trec-eval {QRELS} missing.run"), False),
    error("trec-eval-one-file", cmd(f"trec-eval {QRELS}"), False),
    error("trec-eval-illegal-measure", cmd(f"trec-eval -m nosuch {QRELS} {BM25}"), False),
]


def old_warehouse(version: int, later: str | None = None) -> bytes:
    """A DuckDB warehouse file at schema ``version`` holding a run 'r' and qrels 'q', as the
    release of that schema left it; ``later``: then recorded at the next schema by release ``later``
    (a release after this one)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "w.duckdb"
        con = duckdb.connect(str(path))
        migrate_by_hand(DuckDBConnection(con), "duckdb", version)
        insert_run_and_qrels(DuckDBConnection(con))
        if later is not None:
            con.execute(
                "INSERT INTO schema_migrations VALUES (?, 'later', now(), ?)", [version + 1, later]
            )
        con.close()
        return path.read_bytes()


#: A warehouse of schema 14 (the releases before 0.15.0) upgraded by `migrate`.
MIGRATE = [
    sequence(
        "migrate",
        [
            ("dry-run", w("migrate --dry-run")),
            ("apply", w("migrate")),
            ("current", w("migrate")),
            ("runs-list", w("runs list -f csv")),
        ],
        files={"w.duckdb": old_warehouse(14)},
    ),
    single(
        "migrate-newer/runs-list",
        w("runs list"),
        files={"w.duckdb": old_warehouse(20, later="0.20.0")},
    ),
    error("migrate-read-only", w("--read-only migrate")),
    error("migrate-no-warehouse", cmd(f"{NONE} migrate", listing=True), False),
]

#: A ranking with its labels (`qid Q0 docid rel` in rank order), and files that are not one.
RANKED_FILES: dict[str, bytes | None] = {
    "course.txt": b"q1 Q0 doc023 1\nq1 Q0 doc036 0\nq1 Q0 doc010 2\nq2 Q0 doc005 0\n"
    b"q2 Q0 doc007 1\n",
    "badlabel.txt": b"q1 Q0 doc023 1\nq1 Q0 doc036 high\n",
}
RANKED = [
    single(
        "ranked-labels/eval",
        w("eval --ranked-labels course.txt -m P@2,AP,nDCG"),
        files=RANKED_FILES,
    ),
    single(
        "errors/eval-ranked-labels-as-run",
        w("eval ex course.txt -m AP"),
        warehouse=True,
        files=RANKED_FILES,
    ),
    single(
        "errors/eval-ranked-labels-bad-label",
        w("eval --ranked-labels badlabel.txt -m AP"),
        files=RANKED_FILES,
    ),
    single(
        "errors/eval-ranked-labels-with-qrels",
        w("eval ex --ranked-labels course.txt -m AP"),
        warehouse=True,
        files=RANKED_FILES,
    ),
]

#: Longest first: the sequences start at once, the single commands fill the other workers.
SCENARIOS = [NIGHTLY, TOUR, COMPARE, *TREC_EVAL, *ERRORS, *RANKED, *MIGRATE, *HELP]
NAMES = [name for scenario in SCENARIOS for name, _ in scenario.steps]
assert len(NAMES) == len(set(NAMES)), "two steps share a golden file"


# --- running and recording ------------------------------------------------------------------


def cli_env(folder: Path) -> dict[str, str]:
    """A fixed environment: nothing of the caller's terminal, locale or warehouse."""
    env = {key: os.environ[key] for key in ("PATH", "HOME", "PYTHONPATH") if key in os.environ}
    return env | {
        "COLUMNS": "100",  # click wraps help to min(COLUMNS, 80) - 2; tables are piped whole
        "LINES": "40",
        "TERM": "dumb",
        "LC_ALL": "C.UTF-8",
        "LANG": "C.UTF-8",
        "PYTHONIOENCODING": "utf-8",
        "TZ": "UTC",
        "RANKHOUSE_CACHE": "off",  # every new warehouse is built in place, no shared cache
        "MPLCONFIGDIR": str(folder / ".matplotlib"),  # the report's figures: no home cache
    }


def _quote(arg: str) -> str:
    """``arg`` as a shell reads it, in double quotes where that reads more easily."""
    quoted = shlex.quote(arg)
    if quoted == arg or not re.fullmatch(r'[^"\\$`!]*', arg):
        return quoted
    return f'"{arg}"'


def _section(label: str, text: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n\\ no newline at end\n"
    return f"--- {label}\n{text}"


def run_step(step: Step, folder: Path) -> str:
    """Run one command in ``folder`` and return its record, not yet normalised."""
    done = subprocess.run(
        [sys.executable, "-m", "rankhouse", *step.args],
        cwd=folder,
        env=cli_env(folder),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
    )
    parts = [
        f"$ {' '.join(['rankhouse', *map(_quote, step.args)])}\n",
        f"exit code: {done.returncode}\n",
        _section("stdout", done.stdout.decode("utf-8", "backslashreplace")),
        _section("stderr", done.stderr.decode("utf-8", "backslashreplace")),
    ]
    for name in step.show:
        path = folder / name
        text = path.read_bytes().decode("utf-8", "backslashreplace") if path.exists() else ""
        parts.append(_section(f"file {name}" + ("" if path.exists() else " (absent)"), text))
    for name in step.exists:
        parts.append(f"--- file {name}: {'exists' if (folder / name).is_file() else 'absent'}\n")
    if step.listing:
        names = sorted(p.name for p in folder.iterdir() if p.name not in _PREPARED)
        parts.append(f"--- files in the folder: {' '.join(names) or '(none)'}\n")
    return "".join(parts)


#: What a case folder holds before its commands (left out of listings).
_PREPARED = {"examples", ".matplotlib", *BAD_INPUTS}

# A date is a real one (month 01-12, day 01-31), so that an invalid date given to a command
# (history --since 2024-13-45) stays in the error that quotes it.
_DAY = r"(?<!\d)\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
_TIMESTAMP = re.compile(
    _DAY + r"[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}| UTC)?(?!\d)"
)
_DATE = re.compile(_DAY + r"(?!\d)")
# The HTML report holds timestamps (DuckDB prints microseconds without trailing zeros) and
# figures: its size in KiB may differ by one between runs.
_SIZE = re.compile(r"\(\d+(?:\.\d+)? [KMG]?i?B\)")
_VERSION = re.compile(rf"(?<![\w.]){re.escape(rankhouse.__version__)}(?![\w.])")


def normalise(text: str, folder: Path) -> str:
    """The record without what varies between runs and machines."""
    for path in sorted({str(folder), os.path.realpath(folder)}, key=len, reverse=True):
        text = text.replace(path, "<TMP>")
    for path in sorted({str(PROJECT_ROOT), os.path.realpath(PROJECT_ROOT)}, key=len, reverse=True):
        text = text.replace(path, "<PROJECT>")
    text = _TIMESTAMP.sub("<TIMESTAMP>", text)  # ingested_at, created_at (now, in UTC)
    text = _DATE.sub("<DATE>", text)
    text = _SIZE.sub("(<SIZE>)", text)
    return _VERSION.sub("<VERSION>", text)


def prepare(scenario: Scenario, folder: Path, template: Path) -> None:
    shutil.copytree(EXAMPLES, folder / "examples")
    if scenario.warehouse:
        shutil.copyfile(template, folder / "w.duckdb")
    for name, content in scenario.files.items():
        if content is None:
            (folder / name).mkdir()
        else:
            (folder / name).write_bytes(content)


def play(scenario: Scenario, folder: Path, template: Path) -> dict[str, str]:
    prepare(scenario, folder, template)
    return {name: normalise(run_step(step, folder), folder) for name, step in scenario.steps}


def build_template(folder: Path) -> Path:
    """A warehouse holding qrels set ``ex`` and runs ``bm25`` and ``dense`` (copied into the
    folder of every case that starts from it: building it once saves three commands each)."""
    shutil.copytree(EXAMPLES, folder / "examples")
    for line in (f"ingest qrels {QRELS} --name ex", f"ingest run {BM25}", f"ingest run {DENSE}"):
        record = run_step(w(line), folder)
        assert "exit code: 0\n" in record, record
    return folder / "w.duckdb"


@pytest.fixture(scope="module")
def transcript(tmp_path_factory) -> dict[str, str]:
    """Every step's normalised record, by golden name (the scenarios run a few at a time)."""
    template = build_template(tmp_path_factory.mktemp("template"))
    folders = [tmp_path_factory.mktemp("case") for _ in SCENARIOS]
    workers = max(2, min(4, os.cpu_count() or 2))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        done = pool.map(lambda pair: play(*pair, template), zip(SCENARIOS, folders, strict=True))
        return {name: text for records in done for name, text in records.items()}


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.txt"


@pytest.mark.parametrize("name", NAMES)
def test_transcript(transcript: dict[str, str], name: str) -> None:
    actual = transcript[name]
    path = golden_path(name)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(actual.encode())
        return
    assert path.exists(), f"no golden file {path}; RANKHOUSE_UPDATE_TRANSCRIPT=1 writes it"
    expected = path.read_bytes().decode()
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                f"golden {name}",
                f"actual {name}",
            )
        )
        pytest.fail(f"the CLI's output differs from {path}:\n{diff}", pytrace=False)


def test_no_stale_golden_files() -> None:
    """Every golden file belongs to a case (a renamed case leaves none behind)."""
    wanted = {golden_path(name) for name in NAMES}
    stale = sorted(p for p in GOLDEN.rglob("*.txt") if p not in wanted)
    if UPDATE:
        for path in stale:
            path.unlink()
        return
    assert not stale, (
        f"golden files of no case (RANKHOUSE_UPDATE_TRANSCRIPT=1 removes them): {stale}"
    )
