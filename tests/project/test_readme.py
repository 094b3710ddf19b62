"""README.md tells the truth: its first commands run, every command of the CLI is documented,
and every page it links to exists (docs/measures.md's table is checked against the registry by
tests/measures/test_measures_names.py)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import typer.main

from rankhouse.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


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


def test_every_linked_page_exists():
    links = re.findall(r"\]\(((?:docs|benchmarks)/[^)#]+)", README)
    assert len(links) >= 12
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, f"README.md links to missing files: {missing}"
