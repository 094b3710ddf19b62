"""Fixtures shared by every test file: the shared data folder, a warehouse, the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from rankhouse import Warehouse

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED = PROJECT_ROOT.parent / "shared"
EXAMPLES = PROJECT_ROOT / "examples"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` beside the checkout; tests that need it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is absent (it holds trec_eval's test files and real qrels)")
    return SHARED


@pytest.fixture(scope="session")
def trec_eval_tests(shared_dir: Path) -> Path:
    """trec_eval's own conformance inputs and expected outputs."""
    return shared_dir / "data" / "trec_eval_tests"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Path of a fresh DuckDB warehouse file (not yet created)."""
    return tmp_path / "warehouse.duckdb"


@pytest.fixture
def warehouse(db_path: Path):
    """A real warehouse in a DuckDB file, closed after the test."""
    wh = Warehouse(db_path)
    yield wh
    wh.close()


@pytest.fixture(scope="module")
def shared_warehouse(tmp_path_factory):
    """One warehouse file for a module's hypothesis examples (opening one costs more than an
    example; each example stores its qrels and run under new names)."""
    with Warehouse(tmp_path_factory.mktemp("shared") / "w.duckdb") as wh:
        yield wh


@pytest.fixture(scope="session")
def pytrec():
    """pytrec_eval in a worker process with a time limit per call (see pytrec_reference)."""
    from pytrec_reference import PytrecEval

    reference = PytrecEval()
    yield reference
    reference.close()


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli(db_path: Path, tmp_path: Path):
    """Run the real ``rankhouse`` CLI in a subprocess against ``db_path``.

    ``run_cli("runs", "list")`` returns a CliResult; ``input=`` feeds standard input and
    ``cwd=`` picks the working folder (default: the test's tmp folder).
    """

    def run(
        *args: str,
        input: str | None = None,
        cwd: Path | None = None,
        db: bool = True,
        env: dict[str, str] | None = None,
    ) -> CliResult:
        command = [sys.executable, "-m", "rankhouse"]
        if db:
            command += ["--db", str(db_path)]
        full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
        full_env.pop("RANKHOUSE_DB", None)
        done = subprocess.run(
            [*command, *map(str, args)],
            input=input,
            capture_output=True,
            text=True,
            cwd=cwd or tmp_path,
            env=full_env,
            timeout=600,
        )
        return CliResult(done.returncode, done.stdout, done.stderr)

    return run
