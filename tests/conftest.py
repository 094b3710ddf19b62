"""Fixtures shared by every test file: the shared data folder, a warehouse, the real CLI."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from rankhouse import Warehouse

# A server warehouse's evaluations fetch the run rows from the server unless this machine has
# them cached (rankhouse.row_cache): the tests take the fetching path (the one an analyst's
# machine takes) and leave the home folder alone; tests of the cache name their own folder.
os.environ["RANKHOUSE_CACHE"] = "off"

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


#: The PostgreSQL server for the tests (``scripts/with-postgres`` starts one and sets it).
POSTGRES_ENV = "RANKHOUSE_TEST_POSTGRES"
#: The backends the parametrized fixtures below run on.
BACKENDS = ["duckdb", "postgresql"]


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The test server's URL; skips without one, but fails under CI (where one must run)."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        reason = f"no PostgreSQL server: set {POSTGRES_ENV} (scripts/with-postgres does)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the PostgreSQL tests: {reason}")
        pytest.skip(reason)
    return url


def new_postgres_schema(server: str) -> tuple[str, str]:
    """(a fresh empty schema on the server, the warehouse URL that works inside it).

    The URL logs in as a role of the same name that owns the schema and is no superuser, as
    a team's warehouse owner is (docs/scaling.md): ``scripts/with-postgres`` logs in as a
    superuser, as whom ``rankhouse sql`` without ``--write`` refuses to run."""
    import psycopg
    import sqlalchemy as sa

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {schema} LOGIN")
        conn.execute(f"CREATE SCHEMA {schema} AUTHORIZATION {schema}")
    login = sa.make_url(server).set(username=schema).render_as_string(hide_password=False)
    separator = "&" if "?" in login else "?"
    return schema, f"{login}{separator}options=-csearch_path%3D{schema}"


def drop_postgres_schema(server: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
        conn.execute(f"DROP OWNED BY {schema}")
        conn.execute(f"DROP ROLE {schema}")


@pytest.fixture
def postgres_url(postgres_server: str):
    """URL of a new, empty warehouse on the test server (its own schema, dropped after)."""
    schema, url = new_postgres_schema(postgres_server)
    yield url
    drop_postgres_schema(postgres_server, schema)


#: A PostgreSQL warehouse whose run rows live in Apache Iceberg (data files in the test's
#: folder): a backend the tests that pass ``indirect`` parameters run on besides BACKENDS.
ICEBERG = "postgresql+iceberg"


def require_pyiceberg() -> None:
    """Skip without pyiceberg, but fail under CI (which installs ``rankhouse[iceberg]``)."""
    try:
        import pyiceberg  # noqa: F401
    except ImportError:
        reason = 'no pyiceberg: pip install "rankhouse[iceberg]"'
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the Iceberg tests: {reason}")
        pytest.skip(reason)


def _target(backend: str, folder: Path, request) -> tuple[str, str | None]:
    """(warehouse target, schema to drop or None) for a backend."""
    if backend == "duckdb":
        return str(folder / "warehouse.duckdb"), None
    if backend == ICEBERG:
        require_pyiceberg()
    server = request.getfixturevalue("postgres_server")
    schema, url = new_postgres_schema(server)
    if backend == ICEBERG:
        url += f"&iceberg={folder / 'lake'}"
    return url, schema


@pytest.fixture(params=BACKENDS)
def backend_target(request, tmp_path: Path):
    """The target of a new warehouse on each backend: a DuckDB file path, then a PostgreSQL
    URL. Tests taking it (or :func:`any_warehouse`) run once per backend."""
    target, schema = _target(request.param, tmp_path, request)
    yield target
    if schema is not None:
        drop_postgres_schema(request.getfixturevalue("postgres_server"), schema)


@pytest.fixture
def any_warehouse(backend_target: str):
    """A real warehouse on each backend in turn, closed after the test."""
    wh = Warehouse(backend_target)
    yield wh
    wh.close()


@pytest.fixture(scope="module", params=BACKENDS)
def shared_any_warehouse(request, tmp_path_factory):
    """One warehouse per module and backend for hypothesis examples (see shared_warehouse)."""
    target, schema = _target(request.param, tmp_path_factory.mktemp("shared"), request)
    with Warehouse(target) as wh:
        yield wh
    if schema is not None:
        drop_postgres_schema(request.getfixturevalue("postgres_server"), schema)


@pytest.fixture(scope="module")
def file_twin(tmp_path_factory):
    """A DuckDB file beside a module's warehouses: what a server stores for some input must
    be identical to what this file stores for it (measure_helpers.assert_same_numbers)."""
    with Warehouse(tmp_path_factory.mktemp("twin") / "twin.duckdb") as wh:
        yield wh


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
        full_env = {k: v for k, v in os.environ.items() if k != "RANKHOUSE_DB"}
        full_env |= {"COLUMNS": "200", **(env or {})}
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


_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture
def run_cli_tty(db_path: Path, tmp_path: Path):
    """Run the real CLI with its stdout on a terminal (a pseudo-terminal) ``columns`` wide.

    Returns a CliResult whose stdout is the text shown (styles removed, ``\r\n`` as ``\n``).
    """
    import fcntl
    import pty
    import struct
    import termios

    def run(*args: str, columns: int = 80, cwd: Path | None = None) -> CliResult:
        main, child = pty.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        env = {k: v for k, v in os.environ.items() if k != "RANKHOUSE_DB"}
        env |= {"COLUMNS": str(columns), "TERM": "xterm"}
        process = subprocess.Popen(
            [sys.executable, "-m", "rankhouse", "--db", str(db_path), *map(str, args)],
            stdin=subprocess.DEVNULL,
            stdout=child,
            stderr=subprocess.PIPE,
            cwd=cwd or tmp_path,
            env=env,
        )
        os.close(child)
        shown = bytearray()
        while True:
            try:
                chunk = os.read(main, 1 << 16)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            shown += chunk
        os.close(main)
        stderr = process.stderr.read().decode()
        process.wait(timeout=600)
        text = _ESCAPES.sub("", shown.decode()).replace("\r\n", "\n")
        return CliResult(process.returncode, text, stderr)

    return run


@pytest.fixture(scope="module")
def example_db(tmp_path_factory):
    """The report tests' warehouse (tests/report_helpers.py): the bundled examples, evaluated,
    with four gated nights of bm25; built once per module."""
    from report_helpers import build_example_warehouse

    return build_example_warehouse(tmp_path_factory.mktemp("report") / "example.duckdb")


@pytest.fixture
def example_wh(example_db, tmp_path):
    """A private copy of :func:`example_db`, open (reports store what they evaluate)."""
    path = tmp_path / "copy.duckdb"
    shutil.copy(example_db, path)
    with Warehouse(path) as wh:
        yield wh
