"""The ``rankhouse`` command: a thin Typer layer over the library.

Each command group lives in :mod:`rankhouse.cli.commands`; this module holds the root app,
the global options and the one place where library errors (and any other exception,
:mod:`.failures`) become ``Error: ...`` and exit 1, Ctrl-C one line and exit 130, and library
warnings one ``Warning: ...`` line, both in the command line's words (``--order
rank`` where the library tells a Python caller ``order='rank'``). The library raises its own
errors only: each backend turns its driver's into a RankhouseError.
"""

from __future__ import annotations

import copy
import sys
import warnings

import typer

from ..defaults import __version__
from ..errors import show_warning
from . import failures
from .arguments import split_command
from .commands import register_all
from .commands.common import CliState
from .commands.usage import tidy


class _App(typer.Typer):
    def __call__(self, *args, **kwargs):
        command = tidy(typer.main.get_command(self._narrowed(kwargs.get("args"))))
        warnings.showwarning = show_warning
        failures.watch_interrupts()
        try:
            return command(*args, **kwargs)
        except SystemExit:
            if failures.interrupted():  # Typer's exit 130 for a KeyboardInterrupt, unsaid
                failures.leave_interrupted()
            raise
        except BaseException as exc:  # one line, never a traceback (cli/failures.py)
            if failures.interrupted(exc):
                failures.leave_interrupted()
            if not isinstance(exc, Exception):
                raise
            print(f"Error: {failures.failure_text(exc)}", file=sys.stderr)
            sys.exit(1)

    def _narrowed(self, args: list[str] | None) -> typer.Typer:
        """The app, or for ``rankhouse [global options] NAME ...`` a copy that holds command
        NAME alone. Typer inspects the parameters of every command before it runs one (10 ms
        for the whole tree); a call needs only its own. The root's help, a misspelt name and
        anything else this cannot place get the whole app."""
        found = split_command(list(args or ()))
        if found is None:
            return self
        name = args[found[2]]
        commands = [c for c in self.registered_commands if _command_name(c) == name]
        groups = [g for g in self.registered_groups if g.name == name]
        if len(commands) + len(groups) != 1:
            return self
        narrowed = copy.copy(self)
        narrowed.registered_commands, narrowed.registered_groups = commands, groups
        return narrowed


def _command_name(info) -> str:
    return info.name or typer.main.get_command_name(info.callback.__name__)


app = _App(
    name="rankhouse",
    help="An evaluation warehouse for ranked retrieval: ingest qrels and runs, evaluate, remember.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"rankhouse {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    db: str = typer.Option(
        None,
        "--db",
        envvar="RANKHOUSE_DB",
        metavar="WAREHOUSE",
        help="Warehouse: a DuckDB file or postgresql://USER@HOST:PORT/DB (default: "
        "./rankhouse.duckdb).",
    ),
    read_only: bool = typer.Option(
        False,
        "--read-only",
        help="Open the warehouse read-only: stored values are served, nothing is computed.",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    ctx.obj = CliState(db=db, read_only=read_only)


register_all(app)
