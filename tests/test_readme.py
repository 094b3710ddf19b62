"""README.md tells the truth: its first commands run, its measure table is the registry's,
and every command of the CLI is documented."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import typer.main

from rankhouse.cli.app import app
from rankhouse.measures.docs import markdown

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _registry_table() -> list[str]:
    return [line for line in markdown().splitlines() if line.startswith("|")]


def _readme_table() -> list[str]:
    block = README.split("<!-- measures:begin -->", 1)[1].split("<!-- measures:end -->", 1)[0]
    return [line for line in block.splitlines() if line.startswith("|")]


def test_measure_table_is_generated_from_the_registry():
    assert _readme_table() == _registry_table(), (
        "README's measure table is stale: python -m rankhouse.measures.readme updates it"
    )


def _commands(group, prefix: str = "rankhouse") -> list[str]:
    found = []
    for name, command in group.commands.items():
        if hasattr(command, "commands"):  # a group of sub-commands
            found += _commands(command, f"{prefix} {name}")
        else:
            found.append(f"{prefix} {name}")
    return found


def test_every_command_is_documented():
    commands = _commands(typer.main.get_command(app))
    assert len(commands) >= 12
    missing = [c for c in commands if c not in README]
    assert not missing, f"commands missing from README.md: {missing}"


def test_the_first_command_runs_on_the_examples(run_cli):
    first = re.search(r"```bash\n(.*?)\n```", README, flags=re.S).group(1)
    main_job = first.split("&& rankhouse ", 1)[1]
    args = shlex.split(main_job)
    assert args[0] == "--db"
    result = run_cli(*args[2:], cwd=ROOT)  # run_cli supplies its own --db
    assert result.exit_code == 0, result.stderr
    assert "bm25" in result.stdout and "dense" in result.stdout
    assert "1 qrels query not in the run (scored as empty rankings)" in result.stderr
