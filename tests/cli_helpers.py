"""The real ``rankhouse`` CLI in subprocesses, several at once (for module-scoped fixtures that
check many commands against one warehouse: read-only commands share a DuckDB file)."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conftest import CliResult

#: The shape of every error the CLI prints: one line, nothing after it.
ERROR_LINE = r"\AError: [^\n]+\n\Z"


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a CLI subprocess: no ``$RANKHOUSE_DB`` unless given, wide output."""
    env = {k: v for k, v in os.environ.items() if k != "RANKHOUSE_DB"}
    return env | {"COLUMNS": "200"} | (extra or {})


def start(args, *, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``rankhouse ARGS`` without waiting for it."""
    return subprocess.Popen(
        [sys.executable, "-m", "rankhouse", *map(str, args)],
        cwd=cwd,
        env=cli_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen, timeout: float = 600) -> CliResult:
    """Wait for a started CLI and return its exit code and output."""
    stdout, stderr = process.communicate(timeout=timeout)
    return CliResult(process.returncode, stdout, stderr)


def run_many(commands: list[list[str]], *, cwd: Path, workers: int = 3) -> list[CliResult]:
    """Run each command as its own CLI process, a few at a time; results in the given order."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda args: finish(start(args, cwd=cwd)), commands))
