"""Objects users already hold: ranx's Qrels and Run, ir_datasets' qrels_iter() and
scoreddocs_iter() tuples, and an ir_datasets id (``irds:...``) read from its local cache.

Each must store the rows the equivalent TREC files store and give the values those files
give, which pytrec_eval computes from the files' dicts. The ``irds:`` id is read from a cache
the test writes where ir_datasets keeps msmarco-passage/trec-dl-2019's qrels (a plain TREC
file at ``$IR_DATASETS_HOME/msmarco-passage/trec-dl-2019/qrels``, its ``cache_path`` in
ir_datasets' etc/downloads.json), in subprocesses: ir_datasets fixes its home when imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli_env
from report_helpers import EXAMPLES, read_trec

import rankhouse
from rankhouse import InputError
from rankhouse.ingest.shapes import irds_not_installed

RUNS = {name: EXAMPLES / f"run.{name}.txt" for name in ("bm25", "dense")}
MEASURES = ["AP", "nDCG@10", "P@5"]
DL19 = "irds:msmarco-passage/trec-dl-2019/judged"


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    """ranx and ir_datasets, imported here (ranx takes seconds: numba), with ir_datasets'
    home in a temporary folder if this is its first import."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IR_DATASETS_HOME", str(tmp_path_factory.mktemp("irds-home")))
        ranx = pytest.importorskip("ranx")
        formats = pytest.importorskip("ir_datasets.formats")
    return ranx, formats


@pytest.fixture(scope="module")
def qrels_file(tmp_path_factory) -> Path:
    """The example qrels without their comment line (neither ranx nor ir_datasets reads one)."""
    path = tmp_path_factory.mktemp("qrels") / "qrels.txt"
    lines = (EXAMPLES / "qrels.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(line for line in lines if not line.startswith("#")))
    return path


@pytest.fixture(scope="module")
def expected(pytrec, qrels_file):
    """pytrec_eval's means of the example runs over the qrels' queries."""
    qrels = read_trec(qrels_file, 4)
    keys = {"AP": "map", "nDCG@10": "ndcg_cut_10", "P@5": "P_5"}
    means = {}
    for name, path in RUNS.items():
        found = pytrec.evaluate(qrels, read_trec(path, 6), list(keys.values()))
        means[name] = {
            measure: sum(found.get(q, {}).get(key, 0.0) for q in qrels) / len(qrels)
            for measure, key in keys.items()
        }
    return means


def _means(result) -> dict[str, dict[str, float]]:
    if hasattr(result, "summary"):  # an evaluation
        return result.summary.set_index("run")[MEASURES].to_dict("index")
    means = result.pivot(index="run", columns="measure", values="mean")  # a comparison
    return means[MEASURES].to_dict("index")


def _judgments(wh, qrels_id: int) -> list[tuple]:
    with wh.connect() as conn:
        sql = "SELECT query_id, doc_id, grade FROM judgments WHERE qrels_id = ? ORDER BY ALL"
        return wh.duckdb_connection(conn).execute(sql, [qrels_id]).fetchall()


def _ranked(wh, run_id: int) -> list[tuple]:
    with wh.connect() as conn:
        sql = "SELECT query_id, doc_id, score FROM run_rows WHERE run_id = ? ORDER BY ALL"
        return wh.duckdb_connection(conn).execute(sql, [run_id]).fetchall()


# --- ranx ------------------------------------------------------------------------------------


def test_ranx_objects_store_the_rows_of_their_trec_files(warehouse, libraries, qrels_file):
    ranx, _ = libraries
    qrels = ranx.Qrels.from_file(str(qrels_file), kind="trec")
    qrels.name = "examples"
    run = ranx.Run.from_file(str(RUNS["bm25"]), kind="trec", name="bm25-ranx")
    held = (qrels.to_dict(), run.to_dict())

    from_qrels = warehouse.ingest_qrels(qrels)
    [from_run] = warehouse.ingest_run(run)
    assert (from_qrels.name, from_run.name) == ("examples", "bm25-ranx")  # the objects' names
    assert warehouse.ingest_qrels(qrels, name="other").name == "examples"  # stored once
    file_qrels = warehouse.ingest_qrels(qrels_file)
    [file_run] = warehouse.ingest_run(RUNS["bm25"], name="bm25-file")

    assert _judgments(warehouse, from_qrels.id) == _judgments(warehouse, file_qrels.id)
    assert len(_judgments(warehouse, from_qrels.id)) == 144  # grade 0 judgments kept
    # ranx keeps no rank column: the scores (which make the ranking) are the file's
    assert _ranked(warehouse, from_run.id) == _ranked(warehouse, file_run.id)
    assert (qrels.to_dict(), run.to_dict()) == held  # the caller's objects are not changed


def test_ranx_objects_evaluate_and_compare_as_their_files(
    warehouse, libraries, qrels_file, expected
):
    ranx, _ = libraries
    qrels = ranx.Qrels.from_file(str(qrels_file), kind="trec")
    runs = [ranx.Run.from_file(str(path), kind="trec", name=name) for name, path in RUNS.items()]

    for result in (
        rankhouse.evaluate(qrels, runs, MEASURES),  # in memory
        warehouse.evaluate(qrels, runs, MEASURES),
        warehouse.compare(qrels, runs, MEASURES),
    ):
        found = _means(result)
        assert list(found) == ["bm25", "dense"]  # named by the Runs' names
        for name in RUNS:
            assert found[name] == pytest.approx(expected[name], abs=1e-12)
    # a key of a dict of runs names the run over the Run's own name
    keyed = rankhouse.evaluate(qrels, {"first": runs[0]}, MEASURES)
    assert list(_means(keyed)) == ["first"]


def test_ranx_objects_in_the_wrong_place_are_named(libraries, qrels_file):
    ranx, _ = libraries
    qrels = ranx.Qrels.from_file(str(qrels_file), kind="trec")
    run = ranx.Run.from_file(str(RUNS["bm25"]), kind="trec", name="bm25")
    with pytest.raises(InputError, match="a ranx Run is given where the qrels go"):
        rankhouse.evaluate(run, qrels, MEASURES)
    with pytest.raises(InputError, match="a ranx Qrels is given where a run goes"):
        rankhouse.evaluate(qrels_file, qrels, MEASURES)
    with pytest.raises(InputError, match="the ranx Qrels holds no judgments"):
        rankhouse.evaluate(ranx.Qrels(), run, MEASURES)


def test_ranx_objects_on_a_postgresql_warehouse(postgres_url, libraries, qrels_file, expected):
    """A server stages an ingest elsewhere and publishes it: the objects take the same path."""
    ranx, _ = libraries
    qrels = ranx.Qrels.from_file(str(qrels_file), kind="trec")
    qrels.name = "examples"
    run = ranx.Run.from_file(str(RUNS["dense"]), kind="trec", name="dense")
    with rankhouse.Warehouse(postgres_url) as wh:
        assert wh.ingest_qrels(qrels).name == "examples"
        assert [result.name for result in wh.ingest_run(run)] == ["dense"]
        found = _means(wh.evaluate(qrels, run, MEASURES))
        assert wh.ingest_qrels(qrels).created is False  # stored once
    assert found == {"dense": pytest.approx(expected["dense"], abs=1e-12)}


# --- ir_datasets' iterables ------------------------------------------------------------------


def _irds_qrels(formats, path: Path):
    """What ``dataset.qrels_iter()`` yields for a TREC qrels file: TrecQrel tuples."""
    for line in path.read_text(encoding="utf-8").splitlines():
        query, iteration, doc, grade = line.split()
        yield formats.TrecQrel(query, doc, int(grade), iteration)


def _irds_run(formats, path: Path):
    """What ``dataset.scoreddocs_iter()`` yields for a TREC run: GenericScoredDoc tuples."""
    for line in path.read_text(encoding="utf-8").splitlines():
        query, _, doc, _, score, _ = line.split()
        yield formats.GenericScoredDoc(query, doc, float(score))


def test_ir_datasets_iterables_store_and_evaluate_as_their_files(
    warehouse, libraries, qrels_file, expected
):
    _, formats = libraries
    runs = {name: _irds_run(formats, path) for name, path in RUNS.items()}
    result = warehouse.evaluate(_irds_qrels(formats, qrels_file), runs, MEASURES)
    for name, values in _means(result).items():
        assert values == pytest.approx(expected[name], abs=1e-12)

    stored = warehouse.ingest_qrels(_irds_qrels(formats, qrels_file))
    [ranked] = warehouse.ingest_run(_irds_run(formats, RUNS["dense"]), name="dense-irds")
    file_qrels = warehouse.ingest_qrels(qrels_file)
    [file_run] = warehouse.ingest_run(RUNS["dense"], name="dense-file")
    assert _judgments(warehouse, stored.id) == _judgments(warehouse, file_qrels.id)
    assert _ranked(warehouse, ranked.id) == _ranked(warehouse, file_run.id)


def test_several_runs_are_refused_by_one_ingest(warehouse, libraries):
    _, formats = libraries
    runs = {name: _irds_run(formats, path) for name, path in RUNS.items()}
    with pytest.raises(InputError, match="2 runs given: an ingest stores one source"):
        warehouse.ingest_run(runs)


# --- an ir_datasets id, read from the local cache ----------------------------------------------


@pytest.fixture
def irds_home(tmp_path, qrels_file) -> Path:
    """An ir_datasets cache holding msmarco-passage/trec-dl-2019's qrels (the examples')."""
    home = tmp_path / "irds"
    cached = home / "msmarco-passage" / "trec-dl-2019" / "qrels"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(qrels_file.read_bytes())
    return home


def _cli(tmp_path: Path, home: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rankhouse", "--db", str(tmp_path / "w.duckdb"), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=cli_env({"IR_DATASETS_HOME": str(home)}),
        timeout=120,
    )


def _python(tmp_path: Path, home: Path, script: str):
    """What ``script`` prints as JSON, run in a new process over the cache at ``home``."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=cli_env({"IR_DATASETS_HOME": str(home)}),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _eval_json(done: subprocess.CompletedProcess) -> dict[str, float]:
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    return {measure: row[measure] for measure in MEASURES}


def test_an_irds_id_is_read_from_the_cache_and_stored_once(tmp_path, irds_home, expected):
    measures = [option for m in MEASURES for option in ("-m", m)]
    found = _eval_json(
        _cli(tmp_path, irds_home, "eval", DL19, RUNS["bm25"], *measures, "--format", "json")
    )
    assert found == pytest.approx(expected["bm25"], abs=1e-12)

    again = _cli(tmp_path, irds_home, "ingest", "qrels", DL19)
    assert again.stderr == (
        "already stored as qrels set 'msmarco-passage/trec-dl-2019/judged' (id 1), nothing new\n"
    )
    named = _cli(tmp_path, irds_home, "ingest", "qrels", DL19, "--name", "dl19")
    assert "'dl19' now names it too" in named.stderr
    listed = _cli(tmp_path, irds_home, "qrels", "list", "--format", "json")
    [stored] = json.loads(listed.stdout)
    assert (stored["name"], stored["judgments"], stored["aliases"]) == (
        "msmarco-passage/trec-dl-2019/judged",
        144,
        "dl19",
    )


def test_the_python_api_takes_an_irds_id(tmp_path, irds_home, expected):
    script = (
        "import json, sys, rankhouse\n"
        "from rankhouse import Warehouse\n"
        f"qrels, run, measures = {DL19!r}, {str(RUNS['dense'])!r}, {MEASURES!r}\n"
        "with Warehouse('w.duckdb') as wh:\n"
        "    stored = wh.ingest_qrels(qrels).name\n"
        "    kept = wh.evaluate(qrels, run, measures).summary[measures].iloc[0].to_dict()\n"
        "memory = rankhouse.evaluate(qrels, run, measures).summary[measures].iloc[0].to_dict()\n"
        "print(json.dumps([stored, kept, memory]))\n"
    )
    stored, kept, memory = _python(tmp_path, irds_home, script)
    assert stored == "msmarco-passage/trec-dl-2019/judged"
    assert kept == pytest.approx(expected["dense"], abs=1e-12)
    assert memory == pytest.approx(expected["dense"], abs=1e-12)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "irds:msmarco-passage/trec-dl-2020/judged",
            "Error: the qrels are not in ir_datasets' local cache: "
            "{home}/msmarco-passage/trec-dl-2020/qrels is missing, and rankhouse does not "
            "download (irds:msmarco-passage/trec-dl-2020/judged); fetch them once with "
            "ir_datasets where there is network",
        ),
        ("irds:no-such/dataset", "Error: ir_datasets has no dataset 'no-such/dataset'"),
        ("irds:msmarco-passage", "Error: the ir_datasets dataset 'msmarco-passage' has no qrels"),
        ("irds:", "Error: no dataset id after 'irds:'"),
    ],
    ids=["not-cached", "unknown", "no-qrels", "no-id"],
)
def test_an_irds_id_that_cannot_be_read_is_explained(tmp_path, irds_home, source, message):
    done = _cli(tmp_path, irds_home, "ingest", "qrels", source)
    assert done.returncode == 1
    assert done.stderr.startswith(message.format(home=irds_home)), done.stderr
    assert done.stderr.count("\n") == 1


def test_without_ir_datasets_the_error_says_how_to_install_it():
    error = irds_not_installed(DL19)
    assert str(error) == (
        "reading an ir_datasets id needs the ir_datasets package, which is not installed "
        f"({DL19}); pip install ir_datasets (or pass the qrels as a file)"
    )


# --- an ir_datasets id as a run: the dataset's scored documents --------------------------------


@pytest.fixture
def scored_home(irds_home) -> Path:
    """The cache above, with msmarco-passage/trec-dl-2019's scored documents too: the TREC run
    file ir_datasets keeps at ``msmarco-passage/trec-dl-2019/ms.run`` (the example bm25 run)."""
    (irds_home / "msmarco-passage" / "trec-dl-2019" / "ms.run").write_bytes(
        RUNS["bm25"].read_bytes()
    )
    return irds_home


def test_an_irds_id_is_a_run_of_its_scored_documents(tmp_path, scored_home, expected):
    measures = [option for m in MEASURES for option in ("-m", m)]
    found = _eval_json(
        _cli(tmp_path, scored_home, "eval", DL19, DL19, *measures, "--format", "json")
    )
    assert found == pytest.approx(expected["bm25"], abs=1e-12)  # the run file's values

    again = _cli(tmp_path, scored_home, "ingest", "run", DL19)
    assert again.returncode == 0 and "nothing new" in again.stderr, again.stderr
    listed = json.loads(_cli(tmp_path, scored_home, "runs", "list", "--format", "json").stdout)
    assert [(run["name"], run["rows"]) for run in listed] == [
        ("msmarco-passage/trec-dl-2019/judged", 160)  # the file's 160 lines
    ]
    script = (
        "import json, rankhouse\n"
        f"result = rankhouse.evaluate({DL19!r}, {{'bm25': {DL19!r}}}, {MEASURES!r})\n"
        f"print(json.dumps(result.summary[{MEASURES!r}].iloc[0].to_dict()))\n"
    )
    assert _python(tmp_path, scored_home, script) == pytest.approx(expected["bm25"], abs=1e-12)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            DL19,
            "Error: the scored documents (a run) are not in ir_datasets' local cache: "
            "{home}/msmarco-passage/trec-dl-2019/ms.run is missing, and rankhouse does not "
            f"download ({DL19}); fetch them once with ir_datasets where there is network "
            "(python -c \"import ir_datasets; list(ir_datasets.load('msmarco-passage/"
            "trec-dl-2019/judged').scoreddocs_iter())\")",
        ),
        (
            "irds:msmarco-passage",
            "Error: the ir_datasets dataset 'msmarco-passage' has no scored documents (a run)",
        ),
    ],
    ids=["not-cached", "no-scoreddocs"],
)
def test_an_irds_run_that_cannot_be_read_is_explained(tmp_path, irds_home, source, message):
    done = _cli(tmp_path, irds_home, "ingest", "run", source)
    assert done.returncode == 1
    assert done.stderr.startswith(message.format(home=irds_home)), done.stderr
    assert done.stderr.count("\n") == 1
